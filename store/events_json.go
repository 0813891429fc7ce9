package store

// Speed-tuned: an event's JSON written by hand for snapshots (and
// Event.MarshalJSON). Every node writes every kept event into every
// snapshot, and with raft's snapshot check every 5 s (issue 46) the three
// nodes of bench/sidebyside.sh spent a tenth of their CPU in snapshots,
// two thirds of it encoding events by reflection and then compacting and
// re-validating their bodies (issue 45, part 3).
//
// Guarded by
//
//	speed:       go test -run '^$' -bench 'Dump_Events' ./store/
//	correctness: TestEventJSON_SameBytesAsEncodingJSON, FuzzEventJSON (./store/);
//	             with CrossCheckDecoding on, every fast encode is compared
//	             with encoding/json's and a difference panics.
//
// A change must keep: the bytes are exactly encoding/json's for the event
// (field order of the struct, HTML-safe strings, compacted bodies);
// anything the fast path does not copy as is goes to encoding/json.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// jsonPlain marks the ASCII bytes encoding/json writes as they are inside a
// string with HTML escaping on.
var jsonPlain = func() (t [256]bool) {
	for b := 0x20; b < 0x80; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// bodyPlain marks the bytes a JSON body may hold for encoding/json to copy
// it as it is (its compaction removes whitespace and escapes <, > and & and
// U+2028/U+2029, which are not ASCII).
var bodyPlain = func() (t [256]bool) {
	for b := 0x21; b < 0x80; b++ {
		t[b] = b != '<' && b != '>' && b != '&'
	}
	return t
}()

func appendPlainString(dst []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if !jsonPlain[s[i]] {
			return dst, false
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"'), true
}

// appendEventJSON appends e as encoding/json encodes it with its bodies
// before and after, or reports false (dst may then hold a partial
// encoding) for what it does not write itself: a string that needs an
// escape or is not ASCII, tags, a time encoding/json refuses, a body that
// compaction would change. The bodies are valid JSON by construction (the
// node's own encoding of a record, or bytes a decoder accepted).
func (e *Event) appendEventJSON(dst []byte, before, after json.RawMessage) ([]byte, bool) {
	ok := true
	str := func(name, s string) {
		if ok {
			dst = append(dst, name...)
			dst, ok = appendPlainString(dst, s)
		}
	}
	tm := func(name string, t time.Time) {
		if !ok {
			return
		}
		dst = append(dst, name...)
		dst = append(dst, '"')
		var err error
		if dst, err = t.AppendText(dst); err != nil {
			ok = false
			return
		}
		dst = append(dst, '"')
	}
	body := func(name string, b json.RawMessage) {
		if !ok || len(b) == 0 {
			return
		}
		for _, c := range b {
			if !bodyPlain[c] {
				ok = false
				return
			}
		}
		dst = append(dst, name...)
		dst = append(dst, b...)
	}
	str(`{"id":`, e.ID)
	tm(`,"createdAt":`, e.CreatedAt)
	tm(`,"updatedAt":`, e.UpdatedAt)
	switch {
	case !ok:
	case e.Tags == nil:
		dst = append(dst, `,"tags":null`...)
	case len(e.Tags) == 0:
		dst = append(dst, `,"tags":{}`...)
	default:
		return dst, false
	}
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, e.Seq, 10)
	dst = append(dst, `,"index":`...)
	dst = strconv.AppendUint(dst, e.Index, 10)
	str(`,"namespace":`, e.Namespace)
	str(`,"action":`, e.Action)
	if e.EntityType != "" {
		str(`,"entityType":`, e.EntityType)
	}
	if e.EntityID != "" {
		str(`,"entityId":`, e.EntityID)
	}
	if e.EntityName != "" {
		str(`,"entityName":`, e.EntityName)
	}
	if ok {
		dst = append(dst, `,"actor":{`...)
	}
	a, first := e.Actor, true
	for _, f := range [...]struct{ name, v string }{
		{`,"identityId":`, a.IdentityID}, {`,"identityName":`, a.IdentityName},
		{`,"apiSessionId":`, a.APISessionID}, {`,"sourceAddress":`, a.SourceAddress}, {`,"nodeId":`, a.NodeID},
	} {
		if f.v != "" {
			name := f.name
			if first {
				name, first = name[1:], false
			}
			str(name, f.v)
		}
	}
	if ok {
		dst = append(dst, '}')
	}
	if len(e.ChangedFields) > 0 && ok {
		dst = append(dst, `,"changedFields":[`...)
		for i, f := range e.ChangedFields {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, ok = appendPlainString(dst, f); !ok {
				break
			}
		}
		dst = append(dst, ']')
	}
	body(`,"before":`, before)
	body(`,"after":`, after)
	return append(dst, '}'), ok
}

// appendJSON appends e as MarshalJSON writes it.
func (e *Event) appendJSON(dst []byte) ([]byte, error) {
	before, after := e.bodies()
	start := len(dst)
	out, ok := e.appendEventJSON(dst, before, after)
	if ok && !crossCheck.Load() {
		return out, nil
	}
	want, err := e.marshalSlow(before, after)
	if err != nil {
		return dst[:start], err
	}
	if ok && !bytes.Equal(out[start:], want) {
		panic(fmt.Sprintf("store: an event encodes as %s by hand, but encoding/json writes %s", out[start:], want))
	}
	return append(dst[:start], want...), nil
}

// marshalSlow is encoding/json's encoding of the event with these bodies.
func (e *Event) marshalSlow(before, after json.RawMessage) ([]byte, error) {
	type plain Event // without the method
	c := *(*plain)(e)
	c.Before, c.After = before, after
	c.lazy = nil
	return json.Marshal(&c)
}
