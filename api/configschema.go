package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"edgectl/store"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaURL is the address a config type schema is compiled under. Nothing is
// ever fetched from it: the loader refuses every URL that is not a metaschema.
const schemaURL = "urn:edgectl:config-type-schema"

// schemaPrinter renders validator messages in English.
var schemaPrinter = message.NewPrinter(language.English)

// noLoader refuses remote and file references: a schema must be self-contained,
// and a request must never make the controller read files or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("references to other documents (%s) are not allowed: a schema must be self-contained", url)
}

// compileSchema compiles a JSON schema document. The error is the reason to
// show the client.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("is not valid JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, errors.New(schemaErrorReason(err))
	}
	return sch, nil
}

// schemaErrorReason turns a compile error into a short reason: a schema that
// breaks its metaschema names the offending keyword's location.
func schemaErrorReason(err error) string {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			leaf := firstLeaf(ve)
			return fmt.Sprintf("is not a valid JSON schema: at %s: %s", pointer(leaf.InstanceLocation), leaf.ErrorKind.LocalizedString(schemaPrinter))
		}
	}
	return "is not a valid JSON schema: " + strings.ReplaceAll(err.Error(), schemaURL, "schema")
}

// firstLeaf returns the first innermost error: the most specific reason.
func firstLeaf(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return ve
}

func pointer(loc []string) string {
	if len(loc) == 0 {
		return "the root"
	}
	return "/" + strings.Join(loc, "/")
}

// compiledSchema is the cached compilation of one version of a config type's schema.
type compiledSchema struct {
	version time.Time
	schema  *jsonschema.Schema // nil: the type has no schema
}

// schemaCache keeps the compiled schema of each config type, per updatedAt.
// Ids are random and a (id, updatedAt) pair names one schema in any cluster,
// so one cache serves every node of the process. Only the newest version of a
// type is kept; the node that serves a type's delete drops its entry (on the
// others it stays, small and never read again).
var schemaCache sync.Map // config type id → *compiledSchema

// typeSchema returns the compiled schema of a config type (nil when it has none).
func typeSchema(t *store.ConfigType) (*jsonschema.Schema, error) {
	if v, ok := schemaCache.Load(t.ID); ok && v.(*compiledSchema).version.Equal(t.UpdatedAt) {
		return v.(*compiledSchema).schema, nil
	}
	var sch *jsonschema.Schema
	if store.HasSchema(t.Schema) {
		var err error
		if sch, err = compileSchema(t.Schema); err != nil {
			return nil, fmt.Errorf("config type %s: stored schema: %v", t.ID, err)
		}
	}
	schemaCache.Store(t.ID, &compiledSchema{version: t.UpdatedAt, schema: sch})
	return sch, nil
}

// validateData checks config data against a compiled schema (nil accepts
// anything) and returns a validation error naming the failing location as
// data.<path>.
func validateData(sch *jsonschema.Schema, data json.RawMessage) error {
	if sch == nil {
		return nil
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return invalidField("data", "is not valid JSON", nil)
	}
	err = sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return invalidField("data", err.Error(), nil)
	}
	leaf := firstLeaf(ve)
	loc := leaf.InstanceLocation
	if req, ok := leaf.ErrorKind.(*kind.Required); ok && len(req.Missing) > 0 {
		// A missing property is best named by where it should be.
		loc = append(append([]string{}, loc...), req.Missing[0])
	}
	path, value := dataPath(inst, loc)
	return invalidField(path, leaf.ErrorKind.LocalizedString(schemaPrinter), value)
}

// dataPath renders an instance location as a field path (data.port,
// data.ports[0]) and returns the value found there (nil when absent).
func dataPath(inst any, loc []string) (string, any) {
	var b strings.Builder
	b.WriteString("data")
	cur := inst
	for _, tok := range loc {
		switch v := cur.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			var i int
			if _, err := fmt.Sscan(tok, &i); err == nil && i >= 0 && i < len(v) {
				cur = v[i]
			} else {
				cur = nil
			}
		case map[string]any:
			b.WriteString("." + tok)
			cur = v[tok]
		default:
			b.WriteString("." + tok)
			cur = nil
		}
	}
	return b.String(), cur
}
