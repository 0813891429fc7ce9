// Package filter owns the list filter language of the REST API: it parses a
// query string such as
//
//	name contains "web" and isAdmin = false sort by name desc skip 20 limit 10
//
// into an AST, resolves the field names against a Schema, and compiles the
// result into closures that Match, Compare and page records.
//
// The package never touches storage: callers hand it records as opaque values
// and describe how to read each field with a getter. It never panics on input:
// every malformed, oversized or ill-typed query yields an *Error that says
// where the query broke and what was expected, which the API reports as
// INVALID_FILTER.
package filter

import (
	"fmt"
	"sort"
	"time"
)

// Limits that keep a hostile query from costing more than a normal one.
const (
	// MaxQueryLen is the longest accepted query, in bytes.
	MaxQueryLen = 4096
	// MaxDepth bounds the nesting of parentheses, "not" and functions, so
	// the recursive-descent parser cannot exhaust the stack.
	MaxDepth = 32
	// MaxListItems bounds the values of one "in [...]" list.
	MaxListItems = 1000
)

// FieldType is the declared type of a filterable field.
type FieldType int

// The field types. A field's type decides which operators and literals a
// query may use with it; mismatches are compile errors.
const (
	// String fields hold text; ordering is byte order.
	String FieldType = iota
	// Number fields hold int64 or float64 values.
	Number
	// Bool fields hold true or false.
	Bool
	// Time fields hold time.Time values.
	Time
	// StringList fields hold []string and are only usable through anyOf,
	// allOf, isEmpty and count.
	StringList
	// Any fields are dynamic (for example tag values): string, number, bool
	// or null, checked when a record is read rather than at compile time.
	Any
)

// String returns the name used for the type in error messages.
func (t FieldType) String() string {
	switch t {
	case String:
		return "string"
	case Number:
		return "number"
	case Bool:
		return "bool"
	case Time:
		return "datetime"
	case StringList:
		return "list of strings"
	case Any:
		return "any"
	}
	return fmt.Sprintf("FieldType(%d)", int(t))
}

// Field describes one filterable field: its type and how to read it from a
// record.
//
// Get is the general getter. It returns string, int64, float64, bool,
// time.Time, []string, or nil for null/absent; a value of the wrong Go type
// for the field reads as null. Boxing a string, time or slice into an any
// allocates, so for hot fields set the typed getter matching Type instead
// (the constructors StringField, IntField, ... do): when it is set the
// compiled query uses it and never calls Get. Typed getters report null with
// ok == false.
type Field struct {
	Type FieldType
	Get  func(rec any) any
	// Ref, on a String field, makes it a reference to another record,
	// whose fields a query reads through it ("service.name").
	Ref *Ref

	// GetString is the allocation-free getter of a String field.
	GetString func(rec any) (v string, ok bool)
	// GetInt is the allocation-free getter of an integer Number field; it
	// wins over GetFloat when both are set.
	GetInt func(rec any) (v int64, ok bool)
	// GetFloat is the allocation-free getter of a decimal Number field.
	GetFloat func(rec any) (v float64, ok bool)
	// GetBool is the allocation-free getter of a Bool field.
	GetBool func(rec any) (v bool, ok bool)
	// GetTime is the allocation-free getter of a Time field.
	GetTime func(rec any) (v time.Time, ok bool)
	// GetStrings is the allocation-free getter of a StringList field; nil
	// reads as an empty list.
	GetStrings func(rec any) []string
}

// StringField returns a String field that is never null.
func StringField(get func(rec any) string) Field {
	return Field{
		Type:      String,
		Get:       func(rec any) any { return get(rec) },
		GetString: func(rec any) (string, bool) { return get(rec), true },
	}
}

// IntField returns an integer Number field that is never null.
func IntField(get func(rec any) int64) Field {
	return Field{
		Type:   Number,
		Get:    func(rec any) any { return get(rec) },
		GetInt: func(rec any) (int64, bool) { return get(rec), true },
	}
}

// FloatField returns a decimal Number field that is never null.
func FloatField(get func(rec any) float64) Field {
	return Field{
		Type:     Number,
		Get:      func(rec any) any { return get(rec) },
		GetFloat: func(rec any) (float64, bool) { return get(rec), true },
	}
}

// BoolField returns a Bool field that is never null.
func BoolField(get func(rec any) bool) Field {
	return Field{
		Type:    Bool,
		Get:     func(rec any) any { return get(rec) },
		GetBool: func(rec any) (bool, bool) { return get(rec), true },
	}
}

// TimeField returns a Time field that is never null; a zero time is an
// ordinary (very early) value, as it is through Get.
func TimeField(get func(rec any) time.Time) Field {
	return Field{
		Type:    Time,
		Get:     func(rec any) any { return get(rec) },
		GetTime: func(rec any) (time.Time, bool) { return get(rec), true },
	}
}

// StringListField returns a StringList field.
func StringListField(get func(rec any) []string) Field {
	return Field{
		Type:       StringList,
		Get:        func(rec any) any { return get(rec) },
		GetStrings: get,
	}
}

// Schema is the set of fields a list accepts.
//
// Field names are matched exactly (case-sensitive) and may contain dots
// ("type.name"); a name that is not a field may be a field of the records
// a reference field points to ("service.name", see Ref). The reserved words and, or, not, in, contains, icontains,
// between, true, false, null, sort, by, skip and limit cannot be used as bare
// field names.
type Schema struct {
	Fields map[string]Field
	// Prefixes serves dotted dynamic fields of type Any: "tags" maps to a
	// func(rec, key) used for `tags.team` (key "team"). A name in Fields wins
	// over a prefix.
	Prefixes map[string]func(rec any, key string) any
}

// Names returns the sorted names a query may use: every field, plus each
// prefix by itself (for example "tags", meaning "tags.<key>"). It is meant for
// meta.filterableFields.
func (s *Schema) Names() []string {
	if s == nil {
		return nil
	}
	names := make([]string, 0, len(s.Fields)+len(s.Prefixes))
	for n := range s.Fields {
		names = append(names, n)
	}
	for p := range s.Prefixes {
		if _, dup := s.Fields[p]; !dup {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	return names
}

// Error is a query that does not parse or compile. Pos is the byte offset in
// the query where it broke (len(query) for "end of query").
type Error struct {
	Pos int
	Msg string
}

// Error formats the error as "filter: at position N: message".
func (e *Error) Error() string {
	return fmt.Sprintf("filter: at position %d: %s", e.Pos, e.Msg)
}

func errorf(pos int, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
