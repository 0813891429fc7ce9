package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"edgectl/store"
)

// maxBody is the default limit of a request body (conventions §2).
const maxBody = 1 << 20

// readBody reads the request body up to max bytes.
func readBody(r *http.Request, max int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, max))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &apiError{status: http.StatusRequestEntityTooLarge, code: codeParseBody,
				message: fmt.Sprintf("the request body is larger than %d bytes", max)}
		}
		return nil, badBody("the request body could not be read: %v", err)
	}
	if !utf8.Valid(b) {
		// encoding/json would turn the bad bytes into U+FFFD and store
		// something the client never sent.
		if field := invalidUTF8Field(b); field != "" {
			return nil, invalidField(field, "is not valid UTF-8 (JSON text must be UTF-8)", nil)
		}
		return nil, badBody("the request body is not valid UTF-8")
	}
	return b, nil
}

// invalidUTF8Field is the JSON path (name, tags.team, roleAttributes[2]) of
// the first key or string of b that is not valid UTF-8, or "" when b is not
// JSON or the bad bytes are outside strings.
func invalidUTF8Field(b []byte) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	type level struct {
		array bool
		key   string // the current key of an object
		index int    // the next index of an array
		isKey bool   // an object expects a key next
	}
	var stack []*level
	path := func() string {
		var sb strings.Builder
		for _, l := range stack {
			if l.array {
				fmt.Fprintf(&sb, "[%d]", l.index-1)
				continue
			}
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(l.key)
		}
		return sb.String()
	}
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && !stack[len(stack)-1].array {
				stack[len(stack)-1].isKey = true
			}
			continue
		}
		if top != nil && !top.array && top.isKey {
			top.key, top.isKey = tok.(string), false
			if !utf8.Valid(b[start:dec.InputOffset()]) {
				return path()
			}
			continue
		}
		if top != nil && top.array {
			top.index++
		}
		switch t := tok.(type) {
		case json.Delim:
			stack = append(stack, &level{array: t == '[', isKey: t == '{'})
			continue
		case string:
			if !utf8.Valid(b[start:dec.InputOffset()]) {
				if p := path(); p != "" {
					return p
				}
				return "body"
			}
		}
		if top != nil && !top.array {
			top.isKey = true
		}
	}
}

// decodeObject reads a JSON object body into its raw fields, so handlers can
// tell a field that is absent from one that is null.
func decodeObject(r *http.Request) (map[string]json.RawMessage, error) {
	b, err := readBody(r, maxBody)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	if b[0] != '{' {
		return nil, badBody("the request body must be a JSON object")
	}
	// The store's codec reads what encoding/json reads, in 10 allocations
	// instead of 17 for a create's body; a body it refuses is read again
	// by encoding/json, whose error text the answer quotes.
	var raw map[string]json.RawMessage
	if store.DecodeJSON(b, &raw) != nil {
		raw = nil
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, badBody("the request body is not valid JSON: %v", err)
		}
	}
	return raw, nil
}

// decodeInto decodes a JSON body into v; a wrong type names the field.
func decodeInto(r *http.Request, v any) error {
	b, err := readBody(r, maxBody)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}")
	}
	return unmarshalField("", b, v)
}

// unmarshalField decodes raw into v and turns a type error into a validation
// error on field (joined with the path the decoder reports).
func unmarshalField(field string, raw []byte, v any) error {
	err := json.Unmarshal(raw, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		name := field
		if te.Field != "" {
			if name != "" {
				name += "."
			}
			name += te.Field
		}
		if name == "" {
			// The body itself is of the wrong kind (an array where an
			// object is expected): not a field's validation.
			want := "a JSON object"
			if k := te.Type.Kind(); k == reflect.Slice || k == reflect.Array {
				want = "a JSON array"
			}
			return badBody("the request body must be %s, not %s", want, te.Value)
		}
		var value any
		if te.Field == "" && field != "" && json.Valid(raw) {
			value = json.RawMessage(raw) // the field's own value, as sent (conventions §3)
		} else if field == "" && !strings.Contains(te.Field, ".") {
			var top map[string]json.RawMessage // a top-level field of the body
			if json.Unmarshal(raw, &top) == nil && json.Valid(top[te.Field]) {
				value = top[te.Field]
			}
		}
		return invalidField(name, fmt.Sprintf("must be %s, not %s", jsonTypeName(te.Type.String()), te.Value), value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return badBody("the request body is not valid JSON: %v", err)
	}
	if field == "" {
		return badBody("the request body could not be decoded: %v", err)
	}
	return invalidField(field, err.Error(), nil)
}

func jsonTypeName(goType string) string {
	switch goType {
	case "string", "*string":
		return "a string"
	case "bool", "*bool":
		return "a boolean"
	case "int", "int64", "*int", "*int64", "uint16", "int32":
		return "an integer"
	case "float64", "*float64":
		return "a number"
	case "time.Time", "*time.Time":
		return "an RFC 3339 date-time string"
	}
	switch {
	case len(goType) > 2 && goType[:2] == "[]":
		return "an array"
	case len(goType) > 3 && goType[:3] == "map":
		return "an object"
	}
	return "a " + goType
}

// mode is the kind of write a body is for.
type mode int

const (
	modeCreate mode = iota
	modePut
	modePatch
)

// fieldKind is how a body field is decoded and checked.
type fieldKind int

const (
	fString fieldKind = iota
	fBool
	fInt
	fStringList
	fObject
	fTags
	fIntMap
	fEnumMap
	fTime
	fCustom
)

// field declares one writable field of a resource: its JSON name, type and
// rules. One list of fields serves create, PUT and PATCH alike.
type field struct {
	name     string    // JSON name in the body
	to       string    // JSON name in the record, when it differs
	kind     fieldKind // how it decodes
	required bool      // on create and PUT
	nullable bool      // null is allowed (and stored as the default)
	min, max int       // string length or integer range; 0,0 = unchecked
	enum     []string  // allowed string (or map value) values
	def      any       // value for PUT and create when absent or null
	create   bool      // create only: not part of PUT or PATCH
	// patchNullKeeps: in a PATCH, null leaves the field as it is (as if absent).
	patchNullKeeps bool
	// patchEmptyKeeps: in a PATCH, an empty object {} leaves the field as it
	// is (what generated clients send for an object they do not change).
	patchEmptyKeeps bool
	// custom decodes and checks a fCustom field, returning the value to store.
	custom func(raw json.RawMessage) (any, error)
	// schema describes a fCustom field in the OpenAPI document (nil: any value).
	schema map[string]any

	// What the field means to people and tools, published in the OpenAPI
	// document as x-edgectl-* keywords (api/describe.go) and read by the CLI
	// (names for ids, export) and the console's forms.
	ref   string  // the resource whose record id (or list of ids) it holds
	roles string  // the resource whose records its role selectors select
	ui    fieldUI // how a form shows it
}

// fieldUI is how a form shows a field; the zero value derives everything
// from the field's type.
type fieldUI struct {
	label       string // instead of the name made readable
	help        string // a line under the input (the schema's description)
	placeholder string
	input       string // an input other than the type's: pem, password, attrs, datetime
	attrs       string // attrs: the role attribute list that completes it
	value       any    // the value a new record's form starts with
}

func (f *field) target() string {
	if f.to != "" {
		return f.to
	}
	return f.name
}

// parsed is a validated body: the record patch and the decoded values.
type parsed struct {
	patch  store.Patch
	values map[string]any
	raw    map[string]json.RawMessage
}

// set puts a derived field into the patch (and the values).
func (p *parsed) set(name string, v any) error {
	enc, err := encodeValue(v)
	if err != nil {
		return err
	}
	p.values[name], p.patch[name] = v, enc
	return nil
}

// has reports whether the body carried the field (null included).
func (p *parsed) has(name string) bool { _, ok := p.raw[name]; return ok }

// isEmptyObject reports whether raw is {} (with any spacing).
func isEmptyObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil && len(m) == 0
}

// parseFields validates raw against fields for the mode. For create and PUT
// every field ends up in the patch (absent ones at their default), for PATCH
// only the fields present.
func parseFields(raw map[string]json.RawMessage, fields []field, m mode) (*parsed, error) {
	n := len(fields) // create and PUT fill every field
	if m == modePatch {
		n = len(raw)
	}
	p := &parsed{patch: make(store.Patch, n), values: make(map[string]any, n), raw: raw}
	for i := range fields {
		f := &fields[i]
		if f.create && m != modeCreate {
			continue
		}
		rv, present := raw[f.name]
		isNull := present && (string(bytes.TrimSpace(rv)) == "null" || blankMeansUnset(f, rv))
		var v any
		switch {
		case isNull && m == modePatch && (f.patchNullKeeps || f.kind == fStringList):
			// Generated clients send every array they were not given as
			// null: in a PATCH, a null list is a list not given, for every
			// resource (docs/openziti.md).
			continue
		case present && m == modePatch && f.patchEmptyKeeps && isEmptyObject(rv):
			continue
		case present && !isNull:
			var err error
			if v, err = decodeField(f, rv); err != nil {
				return nil, err
			}
		case isNull:
			if f.required && !f.nullable {
				return nil, invalidField(f.name, "is required and cannot be null", nil)
			}
			v = f.def
		case m == modePatch:
			continue
		case f.required:
			return nil, invalidField(f.name, "is required", nil)
		default:
			v = f.def
		}
		p.values[f.name] = v
		enc, err := encodeValue(v)
		if err != nil {
			return nil, invalidField(f.name, err.Error(), nil)
		}
		p.patch[f.target()] = enc
	}
	return p, nil
}

// blankMeansUnset reports whether rv is a blank string for optional string
// field f that no blank string can be (it has a minimum length or a list of
// values): generated clients (OpenZiti's ZAC among them) send every optional
// string they were not given as "", which then means "not set", like null.
func blankMeansUnset(f *field, rv json.RawMessage) bool {
	return f.kind == fString && !f.required && (f.min > 0 || len(f.enum) > 0) && string(bytes.TrimSpace(rv)) == `""`
}

// encodeValue is json.Marshal(v), with the values most fields hold (no
// value, a bool, an int, a string that needs no escape) written directly:
// a create fills every field of its record, most with their defaults.
func encodeValue(v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return []byte("null"), nil
	case bool:
		return strconv.AppendBool(nil, v), nil
	case int:
		return strconv.AppendInt(nil, int64(v), 10), nil
	case string:
		for i := 0; i < len(v); i++ {
			// encoding/json escapes these (and <, >, & for HTML), and
			// rewrites invalid UTF-8.
			if c := v[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return json.Marshal(v)
			}
		}
		out := make([]byte, 0, len(v)+2)
		out = append(out, '"')
		out = append(out, v...)
		return append(out, '"'), nil
	}
	return json.Marshal(v)
}

func decodeField(f *field, rv json.RawMessage) (any, error) {
	switch f.kind {
	case fString:
		var s string
		if err := unmarshalField(f.name, rv, &s); err != nil {
			return nil, err
		}
		return s, checkString(f.name, s, f)
	case fBool:
		var b bool
		return b, unmarshalField(f.name, rv, &b)
	case fInt:
		return decodeInt(f.name, rv, f.min, f.max)
	case fStringList:
		var l []string
		if err := unmarshalField(f.name, rv, &l); err != nil {
			return nil, err
		}
		for i, s := range l {
			if err := checkString(fmt.Sprintf("%s[%d]", f.name, i), s, f); err != nil {
				return nil, err
			}
		}
		return l, nil
	case fObject:
		var o map[string]any
		return o, unmarshalField(f.name, rv, &o)
	case fTags:
		return decodeTags(f.name, rv)
	case fIntMap:
		var m map[string]json.RawMessage
		if err := unmarshalField(f.name, rv, &m); err != nil {
			return nil, err
		}
		out := make(map[string]int64, len(m))
		for k, v := range m {
			n, err := decodeInt(f.name+"."+k, v, f.min, f.max)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case fEnumMap:
		var m map[string]string
		if err := unmarshalField(f.name, rv, &m); err != nil {
			return nil, err
		}
		for k, v := range m {
			if err := checkEnum(f.name+"."+k, v, f.enum); err != nil {
				return nil, err
			}
		}
		return m, nil
	case fTime:
		var s string
		if err := unmarshalField(f.name, rv, &s); err != nil {
			return nil, err
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, invalidField(f.name, "must be an RFC 3339 date-time", s)
		}
		return t.UTC(), nil
	case fCustom:
		return f.custom(rv)
	}
	return nil, fmt.Errorf("api: field %s has no kind", f.name)
}

func checkString(name, s string, f *field) error {
	if f.enum != nil {
		return checkEnum(name, s, f.enum)
	}
	n := len([]rune(s))
	if f.min > 0 && n < f.min {
		if f.min == 1 {
			return invalidField(name, "must not be empty", s)
		}
		return invalidField(name, fmt.Sprintf("must be at least %d characters", f.min), s)
	}
	if f.max > 0 && n > f.max {
		return invalidField(name, fmt.Sprintf("must be at most %d characters", f.max), s)
	}
	return nil
}

func checkEnum(name, s string, enum []string) error {
	for _, e := range enum {
		if s == e {
			return nil
		}
	}
	return invalidField(name, fmt.Sprintf("must be one of %v", enum), s)
}

func decodeInt(name string, rv json.RawMessage, min, max int) (int64, error) {
	dec := json.NewDecoder(bytes.NewReader(rv))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return 0, invalidField(name, "must be an integer", nil)
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, invalidField(name, "must be an integer", v)
	}
	i, err := n.Int64()
	if err != nil {
		return 0, invalidField(name, "must be an integer", n.String())
	}
	if (min != 0 || max != 0) && (i < int64(min) || i > int64(max)) {
		return 0, invalidField(name, fmt.Sprintf("must be between %d and %d", min, max), i)
	}
	return i, nil
}

// decodeTags checks that tag values are null, strings, numbers or booleans.
func decodeTags(name string, rv json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := unmarshalField(name, rv, &m); err != nil {
		return nil, err
	}
	for k, v := range m {
		switch v.(type) {
		case nil, string, float64, bool:
		default:
			return nil, invalidField(name+"."+k, "a tag value must be null, a string, a number or a boolean", v)
		}
	}
	return m, nil
}

// tagsField is the tags field every resource has.
var tagsField = field{name: "tags", kind: fTags, nullable: true}
