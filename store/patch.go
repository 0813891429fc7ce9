package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// Patch is a set of field values, keyed by their JSON names, to apply to a
// record. The API builds it from a validated PUT (every writable field) or
// PATCH (the fields present) body; the FSM applies it to the record as it is
// at that point of the log, so concurrent updates of different fields on
// different nodes never overwrite each other.
type Patch map[string]json.RawMessage

// JSON is the patch as one JSON object. Keys are field names the API
// declares and values were encoded by json.Marshal, so they are joined as
// they are: no sorting, no re-validation (this is on every create's path).
func (p Patch) JSON() []byte {
	n := 2
	for k, v := range p {
		n += len(k) + len(v) + 4
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '{')
	for k, v := range p {
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, '"')
		buf = append(buf, k...)
		buf = append(buf, '"', ':')
		buf = append(buf, v...)
	}
	return append(buf, '}')
}

// patched returns a copy of r with p applied and updatedAt set. Fields outside
// the patch keep their values, and id and createdAt can never change.
func patched(k *Kind, r Record, p Patch, at time.Time) (Record, error) {
	// encoding/json's bytes through encoding/json/v2 (jsoncodec.go), but
	// for the last decode, whose error text is the API's answer.
	raw, err := MarshalJSON(r)
	if err != nil {
		return nil, fmt.Errorf("store: patch %s: %w", k.Table, err)
	}
	fields := map[string]json.RawMessage{}
	if err := DecodeJSON(raw, &fields); err != nil {
		return nil, fmt.Errorf("store: patch %s: %w", k.Table, err)
	}
	for name, v := range p {
		switch name {
		case "id", "createdAt", "updatedAt":
			continue
		}
		fields[name] = v
	}
	raw, err = MarshalJSON(fields)
	if err != nil {
		return nil, fmt.Errorf("store: patch %s: %w", k.Table, err)
	}
	out := k.New()
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, Invalid("body", err.Error(), nil)
	}
	b := out.base()
	b.ID, b.CreatedAt, b.UpdatedAt = r.base().ID, r.base().CreatedAt, at
	return out, nil
}

// Update applies p to the record of kind k with id, checks the result with
// check (which may be nil) and stores it. It returns the old and new record.
func (tx *Tx) Update(k *Kind, id string, p Patch, at time.Time, check func(old, updated Record) error) (Record, Record, error) {
	old, err := tx.Get(k, id)
	if err != nil {
		return nil, nil, err
	}
	upd, err := patched(k, old, p, at)
	if err != nil {
		return nil, nil, err
	}
	if check != nil {
		if err := check(old, upd); err != nil {
			return nil, nil, err
		}
	}
	return old, upd, tx.Replace(k, upd)
}
