package fsm

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"edgectl/store"
)

// Events from the log: once the event log is on (CmdEventsEnable), every
// applied command yields an entity event per record it created, changed or
// deleted, in its own transaction, numbered in log order. The actor travels
// in the command, so every node derives the same events.

// CmdEventsEnable turns the event log on (command version 4). Its payload
// is the retention (store.EventState's retention fields).
var CmdEventsEnable = command("events.enable", 4)

// Default retention of the event log.
const (
	DefaultEventRetentionCount   = 100_000
	DefaultEventRetentionSeconds = 30 * 24 * 3600
)

// actorKey is the context key of WithActor.
type actorKey struct{}

// WithActor returns a context whose commands carry actor.
func WithActor(ctx context.Context, actor store.EventActor) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

func actorOf(ctx context.Context) *store.EventActor {
	if a, ok := ctx.Value(actorKey{}).(store.EventActor); ok {
		return &a
	}
	return nil
}

// Event subscription (webhook) commands (command version 5).
var (
	CmdEventSubscriptionCreate    = command("eventSubscription.create", 5)
	CmdEventSubscriptionUpdate    = command("eventSubscription.update", 5)
	CmdEventSubscriptionDelete    = command("eventSubscription.delete", 5)
	CmdEventSubscriptionDelivered = command("eventSubscription.delivered", 5)
)

// Delivered is the outcome of a delivery attempt: the cursor reached (the
// last event id delivered or passed over) and the error, if it failed.
type Delivered struct {
	ID     string    `json:"id"`
	Cursor int64     `json:"cursor"`
	Error  string    `json:"error,omitempty"`
	At     time.Time `json:"at"`
}

func registerEvents(f *FSM) {
	on(f, CmdEventSubscriptionCreate, func(tx *store.Tx, s *store.EventSubscription) (any, error) {
		return nil, tx.CreateEventSubscription(s)
	})
	on(f, CmdEventSubscriptionUpdate, func(tx *store.Tx, p *Update) (any, error) {
		return nil, tx.UpdateEventSubscription(p.ID, p.Patch, p.At)
	})
	on(f, CmdEventSubscriptionDelete, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteEventSubscription(p.ID)
	})
	on(f, CmdEventSubscriptionDelivered, func(tx *store.Tx, p *Delivered) (any, error) {
		return nil, tx.RecordDelivery(p.ID, p.Cursor, p.Error, p.At)
	})
	on(f, CmdEventsEnable, func(tx *store.Tx, p *store.EventState) (any, error) {
		st := tx.Events()
		st.Enabled = true
		st.RetentionCount, st.RetentionSeconds = p.RetentionCount, p.RetentionSeconds
		if err := tx.SetEvents(st, tx.Now()); err != nil {
			return nil, err
		}
		return nil, tx.CompactEvents(tx.Now()) // a smaller retention applies at once
	})
}

// entityTypes are the API resource names of the kinds whose changes are
// entity events. Others (sessions, posture data, MFA state, login
// failures, settings) are not entities of the API, or belong to the
// authentication and session namespaces.
var entityTypes = map[*store.Kind]string{
	store.KindIdentity: "identities", store.KindIdentityType: "identity-types", store.KindAuthPolicy: "auth-policies",
	store.KindAuthenticator: "authenticators", store.KindEnrollment: "enrollments", store.KindService: "services",
	store.KindEdgeRouter: "edge-routers", store.KindRouter: "routers", store.KindPostureCheck: "posture-checks",
	store.KindServicePolicy: "service-policies", store.KindEdgeRouterPolicy: "edge-router-policies",
	store.KindServiceEdgeRouterPolicy: "service-edge-router-policies", store.KindConfigType: "config-types",
	store.KindConfig: "configs", store.KindTerminator: "terminators", store.KindCA: "cas",
	store.KindExternalJWTSigner: "external-jwt-signers", store.KindEventSubscription: "event-subscriptions",
}

// EntityType is the API resource name under which changes of kind k are
// entity events ("" and false when they are none).
func EntityType(k *store.Kind) (string, bool) {
	t, ok := entityTypes[k]
	return t, ok
}

// secretFields never appear in an event.
var secretFields = map[string]bool{"passwordHash": true, "tokenHash": true, "token": true, "secret": true,
	"recoveryCodes": true, "jwt": true, "enrollmentJwt": true, "enrollmentToken": true, "verificationToken": true,
	"privateKey": true, "key": true, "salt": true}

// entityEvents derives the entity events of a command's changes.
func entityEvents(changes []store.Change, index uint64, actor *store.EventActor) []*store.Event {
	var out []*store.Event
	for _, ch := range changes {
		typ, ok := entityTypes[ch.Kind]
		if !ok {
			continue
		}
		rec, action := ch.New, "updated"
		switch {
		case ch.Old == nil:
			action = "created"
		case ch.New == nil:
			rec, action = ch.Old, "deleted"
		}
		e := &store.Event{Index: index, Namespace: "entity", Action: action, EntityType: typ, EntityID: rec.GetID()}
		if n, ok := rec.(interface{ RecordName() string }); ok {
			e.EntityName = n.RecordName()
		}
		if actor != nil {
			e.Actor = *actor
		}
		if action != "updated" {
			// Nothing to compare: the record's JSON is made when the event
			// is first read (store.Event.Lazy).
			enc := recordJSON
			if hasSecrets(rec) {
				enc = func(r store.Record) json.RawMessage { return encodeFields(apiFields(ch.Kind, r)) }
			}
			if action == "created" {
				e.Lazy(nil, rec, enc)
			} else {
				e.Lazy(rec, nil, enc)
			}
			out = append(out, e)
			continue
		}
		before, after := apiFields(ch.Kind, ch.Old), apiFields(ch.Kind, ch.New)
		e.ChangedFields = changedFields(before, after)
		if len(e.ChangedFields) == 0 {
			continue // a rewrite that changed nothing an API user sees
		}
		e.Before, e.After = encodeFields(before), encodeFields(after)
		out = append(out, e)
	}
	return out
}

// secretTypes caches, per record type, whether any of its JSON fields is a
// secret (or the subscription state): such records go through publicJSON.
var secretTypes sync.Map // reflect.Type → bool

func hasSecrets(r store.Record) bool {
	t := reflect.TypeOf(r)
	if v, ok := secretTypes.Load(t); ok {
		return v.(bool)
	}
	found := false
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				walk(f.Type)
				continue
			}
			if name == "" {
				name = f.Name
			}
			if secretFields[name] || strings.HasSuffix(name, "Hash") || store.SubscriptionStateFields[name] {
				found = true
			}
		}
	}
	walk(t)
	secretTypes.Store(t, found)
	return found
}

// recordJSON is the JSON of a record without secrets; nil if it cannot be
// encoded.
func recordJSON(r store.Record) json.RawMessage {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil
	}
	return raw
}

// apiFields is what an event shows of a record of kind k: its public fields
// (publicJSON), and of a subscription not the state its deliveries move.
func apiFields(k *store.Kind, r store.Record) map[string]json.RawMessage {
	m := publicJSON(r)
	if k == store.KindEventSubscription {
		for f := range store.SubscriptionStateFields {
			delete(m, f)
		}
	}
	return m
}

// publicJSON is a record's fields as JSON values, secrets left out. Its
// encode and decode, and encodeFields', are encoding/json's bytes and
// values through encoding/json/v2 (store.MarshalJSON, store.DecodeJSON):
// an event's bodies are replicated state, the same on every node of any
// release, and an update's two records each went through both, half of the
// CPU of a replayed update (BenchmarkReplay_IdentityUpdates).
func publicJSON(r store.Record) map[string]json.RawMessage {
	if r == nil {
		return nil
	}
	raw, err := store.MarshalJSON(r)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if store.DecodeJSON(raw, &m) != nil {
		return nil
	}
	for k := range m {
		if secretFields[k] || strings.HasSuffix(k, "Hash") {
			delete(m, k)
		}
	}
	return m
}

// changedFields are the fields whose value differs, but for updatedAt.
func changedFields(before, after map[string]json.RawMessage) []string {
	var out []string
	for k, v := range after {
		if k != "updatedAt" && !bytes.Equal(before[k], v) {
			out = append(out, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func encodeFields(m map[string]json.RawMessage) json.RawMessage {
	if m == nil {
		return nil
	}
	raw, _ := store.MarshalJSON(m) // map keys sorted: the same bytes on every node
	return raw
}

// appendCommandEvents records the events of an applied command when the
// event log is on: its entity events, then those of the authentication and
// session namespaces. result is what the command's handler returned.
func appendCommandEvents(tx *store.Tx, t CommandType, result any, index uint64, at time.Time, actor *store.EventActor) ([]*store.Event, error) {
	events := entityEvents(tx.Changes(), index, actor)
	events = append(events, accessEvents(tx, t, result, index, actor)...)
	return events, tx.AppendEvents(events, at)
}

// accessEvents are the authentication and session events of a command:
//
//   - authentication: login (an API session made), loginFailed (a failure
//     of a known identity: counted by its lockout policy, or recorded for the
//     audit trail only, CmdLoginFailedAudit, throttled by the node that
//     took it), lockout, mfaVerified;
//   - session: created (a service session), refused (a failed session
//     request, with its reason), ended (an API or service session removed:
//     logout, expiry, revocation).
func accessEvents(tx *store.Tx, t CommandType, result any, index uint64, actor *store.EventActor) []*store.Event {
	var out []*store.Event
	if r, ok := result.(*clusterEventResult); ok && t == CmdClusterEvent && r.event != nil {
		r.event.Index = index
		out = append(out, r.event)
	}
	if r, ok := result.(*routerEventResult); ok && t == CmdRouterEvent && r.event != nil {
		r.event.Index = index
		out = append(out, r.event)
	}
	add := func(ns, action, typ, id, name string, after any) {
		e := &store.Event{Index: index, Namespace: ns, Action: action, EntityType: typ, EntityID: id, EntityName: name}
		if actor != nil {
			e.Actor = *actor
		}
		if after != nil {
			e.After, _ = json.Marshal(after)
		}
		out = append(out, e)
	}
	identityName := func(id string) string {
		if i, err := store.GetAs[*store.Identity](tx, store.KindIdentity, id); err == nil {
			return i.Name
		}
		return ""
	}
	if r, ok := result.(*loginFailedResult); ok && ((t == CmdLoginFailed && r.Count > 0) || t == CmdLoginFailedAudit) {
		id := r.payload.IdentityID
		add("authentication", "loginFailed", "identities", id, identityName(id),
			map[string]any{"method": r.payload.Method, "reason": r.payload.Reason, "count": r.Count})
		if r.Locked {
			add("authentication", "lockout", "identities", id, identityName(id), map[string]any{"count": r.Count})
		}
	}
	for _, ch := range tx.Changes() {
		switch ch.Kind {
		case store.KindAPISession:
			switch {
			case ch.Old == nil:
				s := ch.New.(*store.APISession)
				method := ""
				if a, err := store.GetAs[*store.Authenticator](tx, store.KindAuthenticator, s.AuthenticatorID); err == nil {
					method = a.Method
				} else if strings.HasPrefix(s.AuthenticatorID, "ext-jwt:") {
					method = "ext-jwt"
				}
				add("authentication", "login", "api-sessions", s.ID, identityName(s.IdentityID), map[string]any{
					"identityId": s.IdentityID, "authenticatorId": s.AuthenticatorID, "method": method,
					"ipAddress": s.IPAddress, "isMfaRequired": s.IsMfaRequired})
			case ch.New == nil:
				s := ch.Old.(*store.APISession)
				add("session", "ended", "api-sessions", s.ID, identityName(s.IdentityID), map[string]any{"identityId": s.IdentityID})
			default:
				o, n := ch.Old.(*store.APISession), ch.New.(*store.APISession)
				if !o.IsMfaComplete && n.IsMfaComplete {
					add("authentication", "mfaVerified", "api-sessions", n.ID, identityName(n.IdentityID), map[string]any{"identityId": n.IdentityID})
				}
			}
		case store.KindSession:
			if ch.Old == nil {
				s := ch.New.(*store.Session)
				add("session", "created", "sessions", s.ID, identityName(s.IdentityID), map[string]any{
					"identityId": s.IdentityID, "serviceId": s.ServiceID, "apiSessionId": s.APISessionID, "type": s.Type})
			} else if ch.New == nil {
				s := ch.Old.(*store.Session)
				add("session", "ended", "sessions", s.ID, identityName(s.IdentityID), map[string]any{
					"identityId": s.IdentityID, "serviceId": s.ServiceID, "type": s.Type})
			}
		case store.KindFailedServiceRequest:
			if ch.Old == nil {
				f := ch.New.(*store.FailedServiceRequest)
				add("session", "refused", "services", f.ServiceID, f.ServiceName, map[string]any{
					"identityId": f.IdentityID, "apiSessionId": f.APISessionID, "sessionType": f.SessionType,
					"reason": f.Reason, "policyFailures": f.PolicyFailures})
			}
		}
	}
	return out
}
