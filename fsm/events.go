package fsm

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"edgectl/store"
)

// Events from the log: once the event log is on (CmdEventsEnable), every
// applied command yields an entity event per record it created, changed or
// deleted, in its own transaction, numbered in log order. The actor travels
// in the command, so every node derives the same events.

// CmdEventsEnable turns the event log on (command version 4). Its payload
// is the retention (store.EventState's retention fields).
const CmdEventsEnable CommandType = "events.enable"

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

func registerEvents(f *FSM) {
	on(f, CmdEventsEnable, func(tx *store.Tx, p *store.EventState) (any, error) {
		st := tx.Events()
		st.Enabled = true
		st.RetentionCount, st.RetentionSeconds = p.RetentionCount, p.RetentionSeconds
		return nil, tx.SetEvents(st, tx.Now())
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
	store.KindExternalJWTSigner: "external-jwt-signers",
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
		before, after := publicJSON(ch.Old), publicJSON(ch.New)
		if action == "updated" {
			e.ChangedFields = changedFields(before, after)
			if len(e.ChangedFields) == 0 {
				continue // a rewrite that changed nothing an API user sees
			}
		}
		e.Before, e.After = encodeFields(before), encodeFields(after)
		out = append(out, e)
	}
	return out
}

// publicJSON is a record's fields as JSON values, secrets left out.
func publicJSON(r store.Record) map[string]json.RawMessage {
	if r == nil {
		return nil
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
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
	raw, _ := json.Marshal(m) // map keys sorted: the same bytes on every node
	return raw
}

// appendCommandEvents records the events of an applied command when the
// event log is on.
func appendCommandEvents(tx *store.Tx, index uint64, at time.Time, actor *store.EventActor) error {
	return tx.AppendEvents(entityEvents(tx.Changes(), index, actor), at)
}
