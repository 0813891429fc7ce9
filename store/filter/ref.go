package filter

import (
	"fmt"
	"strings"
	"time"
)

// Ref makes a String field a reference: its value is the id of a record of
// another kind, whose fields a query reads through it with a dot. On
// terminators, "service" holds the service's id, and "service.name" is the
// name of that service, read when a terminator is matched; "service.id" is
// the id itself. References chain ("apiSession.identity.name" on sessions)
// and reach the tags of the record ("service.tags.team"). A reference that
// is null or empty, or names no record, reads every field through it as
// null.
//
// Lists cannot sort by a field read through a reference, as OpenZiti's
// cannot ("no such sort field").
type Ref struct {
	// Entity names the referenced records in messages ("service").
	Entity string
	// Schema returns the fields of the referenced records. It is a function
	// so that schemas may refer to each other; it is called when a query
	// compiles, never while one matches.
	Schema func() *Schema
	// Bind returns how to find a referenced record by id in env, the value
	// the query was compiled with (CompileIn; a store's read transaction),
	// or nil when env cannot find them. It is called once per field when
	// the query compiles; what it returns is called for every record
	// matched, possibly from several goroutines at once.
	Bind func(env any) func(id string) (rec any, ok bool)
}

// MaxRefs bounds the references one field name follows, so a schema that
// refers to itself cannot make a name that costs a lookup per dot.
const MaxRefs = 8

// lookup resolves name in s: an exact field, then a prefix's key
// ("tags.team"), then a field of the records a reference field points to
// ("service.name"). path is what was followed to reach s ("" or
// "service."), refs the references followed, and owner says what s is for
// messages about an unknown sub-field. via reports a field read through a
// reference. A failure is a message naming the whole field.
func (c *compiler) lookup(s *Schema, name, path, owner string, refs int) (f Field, via bool, msg string) {
	full := path + name
	if s != nil {
		if f, ok := s.Fields[name]; ok {
			return f, false, ""
		}
		if i := strings.IndexByte(name, '.'); i > 0 {
			if pf := s.Prefixes[name[:i]]; pf != nil {
				key := name[i+1:]
				return Field{Type: Any, Get: func(rec any) any { return pf(rec, key) }}, false, ""
			}
		}
		// Field names may hold dots themselves ("secondary.requireExtJwtSigner"),
		// so every dot may end the name of the reference.
		for i := 1; i < len(name); i++ {
			if name[i] != '.' {
				continue
			}
			if ref, ok := s.Fields[name[:i]]; ok && ref.Ref != nil {
				return c.deref(ref, name[:i], name[i+1:], path, refs)
			}
		}
		if s.Prefixes[name] != nil {
			return Field{}, false, fmt.Sprintf("field %q needs a key, like \"%s.name\"", full, full)
		}
	}
	msg = fmt.Sprintf("unknown field %q", full)
	if owner != "" {
		msg += fmt.Sprintf(": %s, which have no field %q", owner, name)
	}
	for _, n := range s.Names() {
		if strings.EqualFold(n, name) {
			return Field{}, false, msg + fmt.Sprintf(" (did you mean %q?)", path+n)
		}
	}
	return Field{}, false, msg
}

// deref resolves sub, a field of the records that ref (named head) points
// to, into a field of the records that hold ref.
func (c *compiler) deref(ref Field, head, sub, path string, refs int) (Field, bool, string) {
	name := path + head
	if sub == "id" {
		f := ref
		f.Ref = nil
		return f, true, ""
	}
	if refs >= MaxRefs {
		return Field{}, false, fmt.Sprintf("field %q follows more than %d references", name+"."+sub, MaxRefs)
	}
	var target *Schema
	if ref.Ref.Schema != nil {
		target = ref.Ref.Schema()
	}
	owner := fmt.Sprintf("%q refers to %s records", name, ref.Ref.Entity)
	f, _, msg := c.lookup(target, sub, name+".", owner, refs+1)
	if msg != "" {
		return Field{}, false, msg
	}
	id := stringGetter(ref)
	var load func(string) (any, bool)
	if ref.Ref.Bind != nil {
		load = ref.Ref.Bind(c.env)
	}
	if id == nil || load == nil {
		return Field{}, false, fmt.Sprintf("field %q cannot be read here: this list cannot look up the %s records %q refers to",
			name+"."+sub, ref.Ref.Entity, name)
	}
	return through(f, func(rec any) (any, bool) {
		v, ok := id(rec)
		if !ok || v == "" {
			return nil, false
		}
		return load(v)
	}), true, ""
}

// through is sub read from the record target finds for each record: every
// getter sub has, reading null (an empty list) when there is no record.
func through(sub Field, target func(any) (any, bool)) Field {
	f := Field{
		Type:      sub.Type,
		GetString: via(target, sub.GetString),
		GetInt:    via(target, sub.GetInt),
		GetFloat:  via(target, sub.GetFloat),
		GetBool:   via(target, sub.GetBool),
		GetTime:   via(target, sub.GetTime),
	}
	if g := sub.Get; g != nil {
		f.Get = func(rec any) any {
			if t, ok := target(rec); ok {
				return g(t)
			}
			return nil
		}
	}
	if g := sub.GetStrings; g != nil {
		f.GetStrings = func(rec any) []string {
			if t, ok := target(rec); ok {
				return g(t)
			}
			return nil
		}
	}
	return f
}

// via reads get from the record target finds; nil when get is nil.
func via[T string | int64 | float64 | bool | time.Time](target func(any) (any, bool), get func(any) (T, bool)) func(any) (T, bool) {
	if get == nil {
		return nil
	}
	return func(rec any) (T, bool) {
		t, ok := target(rec)
		if !ok {
			var zero T
			return zero, false
		}
		return get(t)
	}
}
