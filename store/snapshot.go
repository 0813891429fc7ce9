package store

import (
	"encoding/json"
	"fmt"
	"io"
)

// section heads the records of one table in a snapshot stream.
type section struct {
	Table string `json:"table"`
	Count int    `json:"count"`
}

// Dump writes every record of the view to enc: per kind a section head, then
// its records. The kinds table drives it, so a new kind is in snapshots by being listed.
// Empty tables are left out: a member of an older release (in a rolling
// upgrade) can load the snapshot as long as no record is of a kind it does
// not know, and the writer's gate sees to that until every member knows it.
func (tx *Tx) Dump(enc *json.Encoder) error {
	for _, k := range AllKinds {
		n := tx.Count(k)
		if n == 0 {
			continue
		}
		if err := enc.Encode(section{Table: k.Table, Count: n}); err != nil {
			return fmt.Errorf("store: dump %s: %w", k.Table, err)
		}
		var err error
		tx.Each(k, "id", func(r Record) bool {
			if s, ok := r.(*Setting); ok && s.ID == SettingEvents {
				r = tx.eventsSettingAsOf(s)
			}
			err = enc.Encode(r)
			return err == nil
		})
		if err != nil {
			return fmt.Errorf("store: dump %s: %w", k.Table, err)
		}
	}
	return enc.Encode(section{Table: ""})
}

// Load builds a fresh model from a stream written by Dump and swaps it in.
// The old model stays untouched until the new one is complete. Decoding
// runs beside the inserts (a restart's snapshot restore is the longest
// thing a node does at scale), and the record and role counts are summed
// in maps and written once at the end instead of per record.
func (s *Store) Load(dec *json.Decoder) error {
	db := newDB()
	tx := &Tx{txn: db.Txn(true), s: s, db: db}
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
