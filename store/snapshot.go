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
// The old model stays untouched until the new one is complete.
func (s *Store) Load(dec *json.Decoder) error {
	db := newDB()
	tx := &Tx{txn: db.Txn(true), s: s, db: db}
	defer tx.Abort()
	for {
		var sec section
		if err := dec.Decode(&sec); err != nil {
			if err == io.EOF {
				return fmt.Errorf("store: load: stream ended without its end marker")
			}
			return fmt.Errorf("store: load: section head: %w", err)
		}
		if sec.Table == "" {
			break
		}
		k, ok := KindByTable(sec.Table)
		if !ok {
			return fmt.Errorf("store: load: unknown table %q", sec.Table)
		}
		for i := 0; i < sec.Count; i++ {
			r := k.New()
			if err := dec.Decode(r); err != nil {
				return fmt.Errorf("store: load %s record %d: %w", k.Table, i, err)
			}
			if err := tx.Insert(k, r); err != nil {
				return fmt.Errorf("store: load %s record %d: %w", k.Table, i, err)
			}
		}
	}
	tx.Commit()
	s.swap(db)
	return nil
}
