package store

import (
	"time"

	"edgectl/store/filter"
)

// The getters below read one field of a record for the filter language. They
// are resolved once when a query compiles, so a list scan does no name lookups.

func baseFields(extra map[string]filter.Field) *filter.Schema {
	f := map[string]filter.Field{
		"id":        filter.StringField(func(r any) string { return r.(Record).base().ID }),
		"createdAt": filter.TimeField(func(r any) time.Time { return r.(Record).base().CreatedAt }),
		"updatedAt": filter.TimeField(func(r any) time.Time { return r.(Record).base().UpdatedAt }),
	}
	for name, fld := range extra {
		f[name] = fld
	}
	return &filter.Schema{Fields: f, Prefixes: map[string]func(any, string) any{
		"tags": func(r any, key string) any {
			v, ok := r.(Record).base().Tags[key]
			if !ok {
				return nil
			}
			return tagValue(v)
		},
	}}
}

func namedFields(extra map[string]filter.Field) *filter.Schema {
	s := baseFields(extra)
	s.Fields["name"] = filter.StringField(func(r any) string { return r.(Record).RecordName() })
	return s
}

// tagValue converts a decoded JSON tag value to a filter value.
func tagValue(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
		return x
	case string, bool, nil:
		return x
	default:
		return nil
	}
}

func optTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

func optString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// BaseFields is the filter schema of records that have only the common
// fields and those in extra (lists the API builds of node-local things).
func BaseFields(extra map[string]filter.Field) *filter.Schema { return baseFields(extra) }
