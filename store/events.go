package store

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"edgectl/store/filter"
)

// Events are the audit trail: each applied command yields its events in the
// command's own transaction, so every node derives, numbers and keeps the
// same ones (replicated, in snapshots too). The FSM writes them
// (fsm/events.go); the model only keeps and compacts them.

// Event is one audit event.
type Event struct {
	Base
	Seq           int64      `json:"seq"`
	Index         uint64     `json:"index"` // the Raft index of the command
	Namespace     string     `json:"namespace"`
	Action        string     `json:"action"`
	EntityType    string     `json:"entityType,omitempty"`
	EntityID      string     `json:"entityId,omitempty"`
	EntityName    string     `json:"entityName,omitempty"`
	Actor         EventActor `json:"actor"`
	ChangedFields []string   `json:"changedFields,omitempty"`
	// Before and After are the JSON of the entity before and after the
	// change. Read them with BeforeJSON and AfterJSON: an event made with
	// Lazy encodes them on first use instead.
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`

	lazy *lazyBodies
}

// lazyBodies are an event's before and after, kept as the records and
// encoded once, on first use. Every node applies every command and records
// its events, but few events are ever read: encoding the record of each
// create on every node was a fifth of the FSM's work per identity create.
// Records in the model are never changed in place (a change replaces the
// record with a copy), so the encoding is the same whenever it is made,
// and the same on every node.
type lazyBodies struct {
	once          sync.Once
	before, after Record
	enc           func(Record) json.RawMessage
	b, a          json.RawMessage
}

// Lazy sets the event's before and after to the encodings enc gives of
// before and after (either may be nil), made when first read.
func (e *Event) Lazy(before, after Record, enc func(Record) json.RawMessage) {
	e.Before, e.After = nil, nil
	e.lazy = &lazyBodies{before: before, after: after, enc: enc}
}

func (e *Event) bodies() (before, after json.RawMessage) {
	l := e.lazy
	if l == nil {
		return e.Before, e.After
	}
	l.once.Do(func() {
		if l.before != nil {
			l.b = l.enc(l.before)
		}
		if l.after != nil {
			l.a = l.enc(l.after)
		}
		l.before, l.after, l.enc = nil, nil, nil
	})
	return l.b, l.a
}

// BeforeJSON is the entity's JSON before the change, if any.
func (e *Event) BeforeJSON() json.RawMessage { b, _ := e.bodies(); return b }

// AfterJSON is the entity's JSON after the change, if any.
func (e *Event) AfterJSON() json.RawMessage { _, a := e.bodies(); return a }

// MarshalJSON writes the event with its bodies encoded (snapshots).
func (e *Event) MarshalJSON() ([]byte, error) { return e.appendJSON(nil) }

// EventActor is who made the change: decided by the node that took the
// request, carried in the command.
type EventActor struct {
	IdentityID    string `json:"identityId,omitempty"`
	IdentityName  string `json:"identityName,omitempty"`
	APISessionID  string `json:"apiSessionId,omitempty"`
	SourceAddress string `json:"sourceAddress,omitempty"`
	NodeID        string `json:"nodeId,omitempty"`
}

// EventKey is the record id of event seq: fixed-width, so ids sort in
// sequence order.
func EventKey(seq int64) string {
	if seq < 0 {
		return fmt.Sprintf("%020d", seq)
	}
	d := strconv.FormatInt(seq, 10)
	return "00000000000000000000"[len(d):] + d
}

// KindEvent holds the events.
var KindEvent = &Kind{Table: "events", Entity: "event", byID: true,
	new: func() Record { return &Event{} },
	Fields: baseFields(map[string]filter.Field{
		"namespace":  filter.StringField(func(r any) string { return r.(*Event).Namespace }),
		"action":     filter.StringField(func(r any) string { return r.(*Event).Action }),
		"entityType": filter.StringField(func(r any) string { return r.(*Event).EntityType }),
		"entityId":   filter.StringField(func(r any) string { return r.(*Event).EntityID }),
		"entityName": filter.StringField(func(r any) string { return r.(*Event).EntityName }),
		"actor.identityId": filter.StringField(func(r any) string {
			return r.(*Event).Actor.IdentityID
		}),
		"actor.identityName": filter.StringField(func(r any) string {
			return r.(*Event).Actor.IdentityName
		}),
		"actor.nodeId":        filter.StringField(func(r any) string { return r.(*Event).Actor.NodeID }),
		"actor.sourceAddress": filter.StringField(func(r any) string { return r.(*Event).Actor.SourceAddress }),
		"index":               filter.IntField(func(r any) int64 { return int64(r.(*Event).Index) }),
		"seq":                 filter.IntField(func(r any) int64 { return r.(*Event).Seq }),
		// The API's id of an event is its sequence number.
		"id": filter.IntField(func(r any) int64 { return r.(*Event).Seq }),
	})}

// SettingEvents holds the event log's state (EventState) once events are on.
const SettingEvents = "events"

// EventState is the event log's state: whether it records, the last
// sequence number given and the retention.
type EventState struct {
	Enabled        bool  `json:"enabled"`
	LastSeq        int64 `json:"lastSeq"`
	RetentionCount int64 `json:"retentionCount"`
	// RetentionSeconds bounds the age of kept events by the time of the
	// command that appends (never a node's clock).
	RetentionSeconds int64 `json:"retentionSeconds"`
	// Cluster: the cluster namespace is on (command version 5: every
	// member derives membership events from the configuration entries).
	Cluster bool `json:"cluster,omitempty"`
	// LeaderTerm is the term of the last leaderChanged event.
	LeaderTerm uint64 `json:"leaderTerm,omitempty"`
}

// EventsClock is the time of the last command that recorded events or
// changed the event log's state: the time of events that come from entries
// without one (a membership change).
func (tx *Tx) EventsClock() time.Time {
	var at time.Time
	if r := tx.First(KindSetting, "id", SettingEvents); r != nil {
		at = r.(*Setting).UpdatedAt
	}
	if e := tx.newestEvent(); e != nil && e.CreatedAt.After(at) {
		at = e.CreatedAt
	}
	return at
}

// SettingMembership holds the cluster's voters and non-voters as of the
// last configuration entry (Member), once the cluster namespace is on.
const SettingMembership = "membership"

// Member is a cluster member as a configuration entry names it.
type Member struct {
	ID       string `json:"id"`
	Address  string `json:"address"`
	Suffrage string `json:"suffrage"`
}

// Membership returns the recorded members (nil: none recorded yet).
func (tx *Tx) Membership() []Member {
	raw := tx.Setting(SettingMembership)
	if raw == nil {
		return nil
	}
	var m []Member
	_ = json.Unmarshal(raw, &m)
	if m == nil {
		m = []Member{}
	}
	return m
}

// SetMembership records the members.
func (tx *Tx) SetMembership(m []Member, at time.Time) error {
	raw, _ := json.Marshal(m)
	return tx.Upsert(KindSetting, &Setting{Base: Base{ID: SettingMembership, CreatedAt: at, UpdatedAt: at}, Value: raw})
}

type eventsCache struct {
	raw []byte
	st  EventState
}

// Events returns the event log's state (zero when events are off). It is
// read on every applied command: the decoded setting is cached by the
// stored value it came from. LastSeq is the newest event's: appending does
// not rewrite the setting (whose LastSeq is only a floor, kept for when the
// retention leaves no event, and for snapshots read by older members).
func (tx *Tx) Events() EventState {
	st := tx.eventsSetting()
	if _, newest := tx.eventBounds(); newest > st.LastSeq {
		st.LastSeq = newest
	}
	return st
}

// eventBounds is what the view's oldest and newest events are (0, 0: none),
// looked up once per view and then kept up to date by its own appends and
// compactions.
type eventBounds struct {
	ok             bool
	oldest, newest int64
	oldestAt       time.Time
}

func (tx *Tx) eventBounds() (oldest, newest int64) {
	if !tx.evb.ok {
		tx.evb = eventBounds{ok: true}
		if r := tx.First(KindEvent, "id"); r != nil {
			tx.evb.oldest, tx.evb.oldestAt = r.(*Event).Seq, r.(*Event).CreatedAt
			tx.evb.newest = tx.newestEvent().Seq
		}
	}
	return tx.evb.oldest, tx.evb.newest
}

// EventsOn reports whether the event log records.
func (tx *Tx) EventsOn() bool { return tx.eventsSetting().Enabled }

func (tx *Tx) eventsSetting() EventState {
	if tx.evs == nil {
		st := tx.readEventsSetting()
		tx.evs = &st
	}
	return *tx.evs
}

func (tx *Tx) readEventsSetting() EventState {
	raw := tx.Setting(SettingEvents)
	if len(raw) == 0 {
		return EventState{}
	}
	if c := tx.s.events.Load(); c != nil && len(c.raw) == len(raw) && &c.raw[0] == &raw[0] {
		return c.st
	}
	var st EventState
	_ = json.Unmarshal(raw, &st)
	tx.s.events.Store(&eventsCache{raw: raw, st: st})
	return st
}

func (tx *Tx) newestEvent() *Event {
	raw, err := tx.txn.Last(KindEvent.Table, "id")
	if err != nil || raw == nil {
		return nil
	}
	return raw.(*Event)
}

// eventCount is the number of kept events: they are numbered without gaps
// and compacted from the oldest, so no count is stored for them.
func (tx *Tx) eventCount() int {
	oldest, newest := tx.eventBounds()
	if oldest == 0 {
		return 0
	}
	return int(newest - oldest + 1)
}

// eventsSettingAsOf is the events setting s with the current LastSeq, as a
// snapshot carries it: a member of an earlier release numbers events from
// the setting alone.
func (tx *Tx) eventsSettingAsOf(s *Setting) *Setting {
	st := tx.Events()
	raw, _ := json.Marshal(st)
	c := *s
	c.Value = raw
	return &c
}

// SetEvents stores the event log's state (a change of its settings, not
// of its events): a setting has no relations, name or list to keep up to
// date, so one that exists is replaced in place.
func (tx *Tx) SetEvents(st EventState, at time.Time) error {
	raw, _ := json.Marshal(st)
	rec := &Setting{Base: Base{ID: SettingEvents, CreatedAt: at, UpdatedAt: at}, Value: raw}
	if !tx.Exists(KindSetting, SettingEvents) {
		return tx.Insert(KindSetting, rec)
	}
	if err := tx.put(KindSetting.Table, rec); err != nil {
		return fmt.Errorf("store: events state: %w", err)
	}
	return nil
}

// EventsLost reports whether events after seq were compacted away (the
// retention dropped some that a reader after seq has not seen), and the
// oldest kept event's sequence number.
func (tx *Tx) EventsLost(seq int64) (oldest int64, lost bool) {
	oldest = tx.OldestEventSeq()
	return oldest, oldest > 0 && seq < oldest-1
}

// OldestEventSeq is the sequence number of the oldest kept event (0: none).
func (tx *Tx) OldestEventSeq() int64 {
	oldest, _ := tx.eventBounds()
	return oldest
}

// AppendEvents numbers and stores events, then compacts by count and age.
// Deterministic: it reads only the model and the command's time.
func (tx *Tx) AppendEvents(events []*Event, at time.Time) error {
	if len(events) == 0 {
		return nil
	}
	st := tx.Events()
	oldest, _ := tx.eventBounds()
	oldestAt := tx.evb.oldestAt
	if oldest == 0 {
		oldest, oldestAt = st.LastSeq+1, at
	}
	for _, e := range events {
		st.LastSeq++
		e.Seq = st.LastSeq
		e.ID = EventKey(e.Seq)
		e.CreatedAt, e.UpdatedAt = at, at
		// New sequence numbers, no name, no relations: straight in.
		if err := tx.put(KindEvent.Table, e); err != nil {
			return fmt.Errorf("store: insert event: %w", err)
		}
	}
	tx.evb = eventBounds{ok: true, oldest: oldest, newest: st.LastSeq, oldestAt: oldestAt}
	return tx.compactEvents(st, at)
}

// CompactEvents drops the oldest events beyond the retention count, and
// those older than the retention age at time at, in sequence order.
func (tx *Tx) CompactEvents(at time.Time) error { return tx.compactEvents(tx.Events(), at) }

func (tx *Tx) compactEvents(st EventState, at time.Time) error {
	cutoff := time.Time{}
	if st.RetentionSeconds > 0 {
		cutoff = at.Add(-time.Duration(st.RetentionSeconds) * time.Second)
	}
	oldest, _ := tx.eventBounds()
	if oldest == 0 {
		return nil
	}
	excess := st.LastSeq - oldest + 1 - st.RetentionCount
	if (st.RetentionCount <= 0 || excess <= 0) && (cutoff.IsZero() || !tx.evb.oldestAt.Before(cutoff)) {
		return nil // the oldest is within both bounds
	}
	// The sequence numbers of the kept events have no gaps (appends take
	// the next one, compaction drops the oldest), so the events to drop are
	// looked up by key, from the oldest, instead of through an iterator.
	var drop []*Event
	for seq := oldest; seq <= st.LastSeq; seq++ {
		raw, _ := tx.txn.First(KindEvent.Table, "id", EventKey(seq))
		if raw == nil {
			break
		}
		e := raw.(*Event)
		if !(st.RetentionCount > 0 && excess > 0) && (cutoff.IsZero() || !e.CreatedAt.Before(cutoff)) {
			break
		}
		drop = append(drop, e)
		excess--
	}
	if len(drop) == 0 {
		return nil
	}
	if drop[len(drop)-1].Seq == st.LastSeq {
		// None is left to carry the last sequence number: the setting keeps it.
		if err := tx.SetEvents(st, at); err != nil {
			return err
		}
	}
	for _, e := range drop {
		if err := tx.del(KindEvent.Table, e); err != nil {
			return fmt.Errorf("store: compact events: %w", err)
		}
	}
	tx.evb.ok = false
	if next := drop[len(drop)-1].Seq + 1; next <= st.LastSeq {
		if raw, _ := tx.txn.First(KindEvent.Table, "id", EventKey(next)); raw != nil {
			tx.evb = eventBounds{ok: true, oldest: next, newest: st.LastSeq, oldestAt: raw.(*Event).CreatedAt}
		}
	}
	return nil
}

// ParseEventID parses an event id as the API shows it (the sequence number).
func ParseEventID(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

// EventsAfter calls fn for the events after seq, in order, until fn returns
// false: a seek on the id index, not a scan from the oldest.
func (tx *Tx) EventsAfter(seq int64, fn func(*Event) bool) {
	it, err := tx.txn.LowerBound(KindEvent.Table, "id", EventKey(seq+1))
	if err != nil {
		return
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if !fn(raw.(*Event)) {
			return
		}
	}
}

// EventView is an event as the API, the webhooks and the events file show
// it: its id is the sequence number.
func EventView(e *Event) map[string]any {
	v := map[string]any{"id": e.Seq, "index": e.Index, "at": e.CreatedAt, "namespace": e.Namespace, "action": e.Action,
		"entityType": e.EntityType, "entityId": e.EntityID, "entityName": e.EntityName, "actor": e.Actor,
		"changedFields": e.ChangedFields, "before": e.BeforeJSON(), "after": e.AfterJSON()}
	if e.ChangedFields == nil {
		v["changedFields"] = []string{}
	}
	for _, k := range []string{"before", "after"} {
		if raw, _ := v[k].(json.RawMessage); len(raw) == 0 {
			v[k] = nil
		}
	}
	return v
}
