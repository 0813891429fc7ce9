package cli

// The request bodies of create and update: -f files, --set paths typed by
// the operation's schema in the served OpenAPI document, and the fields that
// schema does not have refused.

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

// bodyFlags are the ways create and update take a body.
type bodyFlags struct {
	sets []string
	file string
}

func (b *bodyFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&b.sets, "set", nil, "path=value (repeatable): a.b=1, list=a,b, flag=true, x=null, or JSON")
	cmd.Flags().StringVarP(&b.file, "file", "f", "", "JSON or YAML body file, - for standard input")
}

// body builds the request body: the file, then each --set on top, typed by
// the schema of the operation (properties of type array take a,b lists).
func (b *bodyFlags) body(schema map[string]any) (map[string]any, error) {
	body := map[string]any{}
	if b.file != "" {
		var raw []byte
		var err error
		if b.file == "-" {
			raw, err = readAllStdin()
		} else {
			raw, err = os.ReadFile(b.file)
		}
		if err != nil {
			return nil, fmt.Errorf("-f: %w", err)
		}
		if err := yaml.Unmarshal(raw, &body); err != nil {
			return nil, usagef("-f %s: neither JSON nor YAML: %v", b.file, err)
		}
		body = normalizeYAML(body).(map[string]any)
		if err := checkFields(schema, body, "-f "+b.file+": "); err != nil {
			return nil, err
		}
	}
	for _, s := range b.sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, usagef("--set %q: want path=value", s)
		}
		path := strings.Split(k, ".")
		for _, p := range path {
			if p == "" {
				return nil, usagef("--set %q: empty name in the path", s)
			}
		}
		if err := checkPath(schema, path, "--set "+k+": "); err != nil {
			return nil, err
		}
		m := body
		for _, p := range path[:len(path)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[path[len(path)-1]] = setValue(v, propertyType(schema, path))
	}
	return body, nil
}

// fieldsOf are the named properties of an object schema, or nil when the
// schema does not close its fields (no properties, or additional ones
// allowed, as for tags or a config's data).
func fieldsOf(schema map[string]any) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		return nil
	}
	if ap, ok := schema["additionalProperties"]; ok && ap != false {
		return nil
	}
	return props
}

// checkFields refuses a field of body that the operation's schema does not
// have, at any depth where the schema names its fields, saying which known
// field it looks like: the API ignores unknown fields, so a misspelt one
// would change nothing while the command said it was done.
func checkFields(schema, body map[string]any, where string) error {
	props := fieldsOf(schema)
	if props == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(body)) {
		p, ok := props[k]
		if !ok {
			return unknownField(where, k, props)
		}
		sub, isObj := body[k].(map[string]any)
		ps, hasSchema := p.(map[string]any)
		if isObj && hasSchema {
			if err := checkFields(ps, sub, where); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPath refuses a --set path that leaves the schema's named fields.
func checkPath(schema map[string]any, path []string, where string) error {
	for _, p := range path {
		props := fieldsOf(schema)
		if props == nil {
			return nil
		}
		next, ok := props[p]
		if !ok {
			return unknownField(where, p, props)
		}
		schema, _ = next.(map[string]any)
	}
	return nil
}

// unknownField is the error of a field the schema lacks, with the closest
// known name when one is close enough to be a slip.
func unknownField(where, name string, props map[string]any) error {
	best, dist := "", 4
	for k := range props {
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < dist || (d == dist && k < best) {
			best, dist = k, d
		}
	}
	if best != "" {
		return usagef("%sno field %q here; did you mean %q?", where, name, best)
	}
	return usagef("%sno field %q here; the fields are %s", where, name, strings.Join(slices.Sorted(maps.Keys(props)), ", "))
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// propertyType is the "type" of the property at path in an object schema.
func propertyType(schema map[string]any, path []string) string {
	for i, p := range path {
		props, _ := schema["properties"].(map[string]any)
		prop, _ := props[p].(map[string]any)
		if prop == nil {
			return ""
		}
		if i == len(path)-1 {
			t, _ := prop["type"].(string)
			return t
		}
		schema = prop
	}
	return ""
}

// setValue types the value of a --set: by the schema's type when known,
// else JSON when it parses, else a string (a,b lists for arrays).
func setValue(v, typ string) any {
	switch typ {
	case "array":
		if strings.HasPrefix(v, "[") {
			var l []any
			if json.Unmarshal([]byte(v), &l) == nil {
				return l
			}
		}
		if v == "" {
			return []any{}
		}
		out := []any{}
		for _, e := range strings.Split(v, ",") {
			out = append(out, strings.TrimSpace(e))
		}
		return out
	case "string":
		if v == "null" {
			return nil
		}
		return v
	}
	var j any
	if json.Unmarshal([]byte(v), &j) == nil {
		return j
	}
	if strings.Contains(v, ",") {
		return setValue(v, "array")
	}
	return v
}

// normalizeYAML turns YAML's map[any]any (old decoders) into JSON shapes.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeYAML(e)
		}
		return x
	case map[any]any:
		m := map[string]any{}
		for k, e := range x {
			m[fmt.Sprint(k)] = normalizeYAML(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalizeYAML(e)
		}
	}
	return v
}

// operationSchema is the request body schema of METHOD /path in the served
// Management API document (nil when it has none).
func (c *client) operationSchema(method, path string) map[string]any {
	data, _, err := c.do(http.MethodGet, "/specs/edge-management/spec", nil)
	if err != nil {
		return nil
	}
	var doc map[string]any
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	paths, _ := doc["paths"].(map[string]any)
	op, _ := paths[path].(map[string]any)
	m, _ := op[strings.ToLower(method)].(map[string]any)
	rb, _ := m["requestBody"].(map[string]any)
	content, _ := rb["content"].(map[string]any)
	js, _ := content["application/json"].(map[string]any)
	schema, _ := js["schema"].(map[string]any)
	return schema
}
