package store

import "time"

// Record is a row of any table. Stored records are immutable: a change
// inserts a modified copy, so readers holding an old view never see it move.
type Record interface {
	base() *Base
	// GetID returns the record's id.
	GetID() string
	// RecordName is the unique name of the record, "" for kinds without one.
	RecordName() string
}

// Base holds the fields every record has.
type Base struct {
	ID        string         `json:"id"`
	CreatedAt time.Time      `json:"createdAt"`
	UpdatedAt time.Time      `json:"updatedAt"`
	Tags      map[string]any `json:"tags"`
}

func (b *Base) base() *Base { return b }

// RecordName is empty for records without a name.
func (b *Base) RecordName() string { return "" }

// Named is embedded by the kinds whose records have a unique name.
type Named struct {
	Name string `json:"name"`
}

// GetID returns the record's id.
func (b *Base) GetID() string { return b.ID }

// BaseOf returns the common fields of any record.
func BaseOf(r Record) *Base { return r.base() }
