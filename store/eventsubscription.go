package store

import (
	"time"

	"edgectl/store/filter"
)

// EventSubscription is a webhook: the leader POSTs the events its filter
// matches to URL, in id order, signed with Secret (docs/api-events.md).
// The delivery state (Cursor, LastError, LastErrorAt) is replicated, so a
// new leader resumes where the old one stopped.
type EventSubscription struct {
	Base
	Named
	URL       string  `json:"url"`
	Filter    string  `json:"filter"`
	Secret    string  `json:"secret"`
	CaPem     *string `json:"caPem"`
	IsEnabled bool    `json:"isEnabled"`
	// Delivery state: the id of the last event delivered (or passed over
	// as not matching); the events after it are pending.
	Cursor      int64      `json:"lastDeliveredId"`
	LastError   *string    `json:"lastError"`
	LastErrorAt *time.Time `json:"lastErrorAt"`
}

// RecordName is the subscription's name.
func (r *EventSubscription) RecordName() string { return r.Name }

// SubscriptionStateFields are the fields the deliveries change: they are
// not changes an API user made, so they yield no entity events.
var SubscriptionStateFields = map[string]bool{"lastDeliveredId": true, "lastError": true, "lastErrorAt": true}

// KindEventSubscription is the table of event subscriptions (webhooks).
var KindEventSubscription = &Kind{Table: "eventSubscriptions", Entity: "event subscription", Named: true,
	new: func() Record { return &EventSubscription{} },
	Fields: namedFields(map[string]filter.Field{
		"url":             filter.StringField(func(r any) string { return r.(*EventSubscription).URL }),
		"filter":          filter.StringField(func(r any) string { return r.(*EventSubscription).Filter }),
		"isEnabled":       filter.BoolField(func(r any) bool { return r.(*EventSubscription).IsEnabled }),
		"lastDeliveredId": filter.IntField(func(r any) int64 { return r.(*EventSubscription).Cursor }),
		"lastError": {Type: filter.String, Get: func(r any) any {
			return optString(r.(*EventSubscription).LastError)
		}},
		"lastErrorAt": {Type: filter.Time, Get: func(r any) any { return optTime(r.(*EventSubscription).LastErrorAt) }},
	})}

// CreateEventSubscription adds a subscription. Its cursor starts at the
// last event recorded before it: it delivers what happens from now on,
// its own creation first.
func (tx *Tx) CreateEventSubscription(s *EventSubscription) error {
	s.Cursor, s.LastError, s.LastErrorAt = tx.Events().LastSeq, nil, nil
	return tx.Insert(KindEventSubscription, s)
}

// UpdateEventSubscription applies a PUT or PATCH of the API's fields (the
// delivery state is not among them).
func (tx *Tx) UpdateEventSubscription(id string, p Patch, at time.Time) error {
	for k := range SubscriptionStateFields {
		delete(p, k)
	}
	_, _, err := tx.Update(KindEventSubscription, id, p, at, nil)
	return err
}

// DeleteEventSubscription removes a subscription.
func (tx *Tx) DeleteEventSubscription(id string) error {
	if _, err := GetAs[*EventSubscription](tx, KindEventSubscription, id); err != nil {
		return err
	}
	return tx.Remove(KindEventSubscription, id)
}

// RecordDelivery moves a subscription's cursor forward to cursor (never
// back: a delivery confirmed by an old leader after a new one went further
// changes nothing) and records the outcome: errText empty clears the error.
// A subscription deleted meanwhile is not an error.
func (tx *Tx) RecordDelivery(id string, cursor int64, errText string, at time.Time) error {
	s, err := GetAs[*EventSubscription](tx, KindEventSubscription, id)
	if err != nil {
		return nil
	}
	n := *s
	if cursor > n.Cursor {
		n.Cursor = cursor
	}
	if errText == "" {
		n.LastError = nil
	} else {
		e, t := errText, at
		n.LastError, n.LastErrorAt = &e, &t
	}
	return tx.Upsert(KindEventSubscription, &n)
}
