package store

import (
	"bytes"
	"fmt"
	"io"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// SnapshotDecoder reads the JSON values of a snapshot stream one after the
// other: the caller's header, then what Dump wrote. It is the decoder of
// encoding/json/v2 run with v1's semantics, as the FSM decodes log entries:
// the streams were written by encoding/json, and a record must read the same
// on a node of any release. It takes about half the time of a
// json.Decoder, which matters at a restart or a catch-up of a large model
// (BenchmarkSnapshotOfLargeModel).
type SnapshotDecoder struct {
	dec *jsontext.Decoder
}

// NewSnapshotDecoder reads values from r.
func NewSnapshotDecoder(r io.Reader) *SnapshotDecoder {
	return &SnapshotDecoder{dec: jsontext.NewDecoder(r, v1Semantics)}
}

// Decode reads the next value into v; io.EOF at the end of the stream. It
// decodes straight from the stream, one pass over the value's bytes:
// reading the value out first and then decoding it scanned each record
// twice, and its raw JSON (an event's bodies) three times: a fifth of a
// restore of events (BenchmarkRestore).
func (d *SnapshotDecoder) Decode(v any) error {
	if !crossCheck.Load() {
		return jsonv2.UnmarshalDecode(d.dec, v, v1Semantics)
	}
	// The check needs the value's bytes: read them out and decode them as a
	// stream of their own, the same way.
	val, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	return crossCheckDecode(val, v, jsonv2.UnmarshalDecode(jsontext.NewDecoder(bytes.NewReader(val), v1Semantics), v, v1Semantics))
}

// section heads the records of one table in a snapshot stream.
type section struct {
	Table string `json:"table"`
	Count int    `json:"count"`
}

// Dump writes every record of the view to w, one JSON value per line: per
// kind a section head, then its records. The values are encoded by
// encoding/json/v2 with v1's semantics, which writes the bytes
// encoding/json writes (the store's tests compare them) in about two thirds
// of the time. The kinds table drives it, so a new kind is in snapshots by being listed.
// Empty tables are left out: a member of an older release (in a rolling
// upgrade) can load the snapshot as long as no record is of a kind it does
// not know, and the writer's gate sees to that until every member knows it.
func (tx *Tx) Dump(w io.Writer) error {
	for _, k := range AllKinds {
		n := tx.Count(k)
		if n == 0 {
			continue
		}
		if err := encodeLine(w, section{Table: k.Table, Count: n}); err != nil {
			return fmt.Errorf("store: dump %s: %w", k.Table, err)
		}
		var err error
		var line []byte
		tx.Each(k, "id", func(r Record) bool {
			if e, ok := r.(*Event); ok {
				// Events are most of a snapshot's records: written by hand
				// (events_json.go), one reused buffer.
				if line, err = e.appendJSON(line[:0]); err == nil {
					line = append(line, '\n')
					_, err = w.Write(line)
				}
				return err == nil
			}
			if s, ok := r.(*Setting); ok && s.ID == SettingEvents {
				r = tx.eventsSettingAsOf(s)
			}
			err = encodeLine(w, r)
			return err == nil
		})
		if err != nil {
			return fmt.Errorf("store: dump %s: %w", k.Table, err)
		}
	}
	return encodeLine(w, section{Table: ""})
}

// encodeLine writes v and a newline to w, as json.Encoder.Encode does.
func encodeLine(w io.Writer, v any) error {
	if err := EncodeJSON(w, v); err != nil {
		return err
	}
	_, err := w.Write(newline)
	return err
}

var newline = []byte{'\n'}

// Load builds a fresh model from a stream written by Dump and swaps it in.
// The old model stays untouched until the new one is complete. Decoding
// runs beside the inserts (a restart's snapshot restore is the longest
// thing a node does at scale), and the record and role counts are summed
// in maps and written once at the end instead of per record. The new
// model's trees are built in place (memdb's Txn.Private, a patch of
// third_party): no one sees them before the swap, so the copies a write
// makes for readers are saved, a fifth of a restore of terminators
// (BenchmarkRestore).
func (s *Store) Load(dec *SnapshotDecoder) error {
	db := newDB()
	tx := &Tx{txn: db.Txn(true), s: s, db: db}
	tx.txn.Private()
	defer tx.Abort()
	type item struct {
		k   *Kind
		r   Record
		i   int
		err error
	}
	items := make(chan item, 4096)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(items)
		send := func(it item) bool {
			select {
			case items <- it:
				return true
			case <-stop:
				return false
			}
		}
		for {
			var sec section
			if err := dec.Decode(&sec); err != nil {
				if err == io.EOF {
					err = fmt.Errorf("store: load: stream ended without its end marker")
				} else {
					err = fmt.Errorf("store: load: section head: %w", err)
				}
				send(item{err: err})
				return
			}
			if sec.Table == "" {
				return
			}
			k, ok := KindByTable(sec.Table)
			if !ok {
				send(item{err: fmt.Errorf("store: load: unknown table %q", sec.Table)})
				return
			}
			for i := 0; i < sec.Count; i++ {
				r := k.New()
				if err := dec.Decode(r); err != nil {
					send(item{err: fmt.Errorf("store: load %s record %d: %w", k.Table, i, err)})
					return
				}
				if !send(item{k: k, r: r, i: i}) {
					return
				}
			}
		}
	}()
	for it := range items {
		if it.err != nil {
			return it.err
		}
		if err := tx.Insert(it.k, it.r); err != nil {
			return fmt.Errorf("store: load %s record %d: %w", it.k.Table, it.i, err)
		}
	}
	tx.Commit()
	s.swap(db)
	return nil
}
