package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sync/atomic"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// JSON the nodes wrote and read back: log entries (fsm), snapshot streams,
// the API's encoded patches. It goes through encoding/json/v2
// (go-json-experiment/json, the mirror of the standard library's v2, stable
// in Go 1.27) run with v1's semantics: about half the time and a quarter of
// the allocations of encoding/json for a decode, two thirds of the time for
// an encode, and the same values and bytes. The same matters: every entry
// in a log was written by encoding/json (payloads) or the writer's envelope,
// and some carry client bytes verbatim (a config's data is a
// json.RawMessage, which may hold duplicate names or invalid UTF-8). A
// stricter decoder would refuse such an entry, and a node that cannot
// decode an entry stops; one that read it differently from an earlier
// release would make the nodes of a rolling upgrade diverge.
//
// JSON from clients is decoded by encoding/json (its error texts are part
// of the API's answers).

// v1Semantics makes encoding/json/v2 behave as encoding/json.
var v1Semantics = jsonv1.DefaultOptionsV1()

// DecodeJSON decodes b into v as encoding/json's Unmarshal does.
func DecodeJSON(b []byte, v any) error {
	return decodeJSONWith(b, v, v1Semantics)
}

func decodeJSONWith(b []byte, v any, opts jsonv2.Options) error {
	return crossCheckDecode(b, v, jsonv2.Unmarshal(b, v, opts))
}

// crossCheckDecode returns err, the error of a decode of b into v; with
// CrossCheckDecoding on it also decodes b with encoding/json and panics
// unless that reads the same.
func crossCheckDecode(b []byte, v any, err error) error {
	if crossCheck.Load() {
		want := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		wantErr := json.Unmarshal(b, want)
		if got, exp := encodedOrError(v, err), encodedOrError(want, wantErr); !bytes.Equal(got, exp) {
			panic(fmt.Sprintf("store: %s decodes as %s, but encoding/json reads %s", b, got, exp))
		}
	}
	return err
}

// EncodeJSON writes v to w as encoding/json's Marshal encodes it.
func EncodeJSON(w io.Writer, v any) error {
	if !crossCheck.Load() {
		return jsonv2.MarshalWrite(w, v, v1Semantics)
	}
	b, err := MarshalJSON(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// MarshalJSON returns v encoded as encoding/json's Marshal encodes it.
func MarshalJSON(v any) ([]byte, error) {
	got, err := jsonv2.Marshal(v, v1Semantics)
	if crossCheck.Load() {
		want, werr := json.Marshal(v)
		if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
			panic(fmt.Sprintf("store: a value encodes as %s (%v), but encoding/json writes %s (%v)", got, err, want, werr))
		}
	}
	return got, err
}

func encodedOrError(v any, err error) []byte {
	if err != nil {
		return []byte("error")
	}
	b, merr := json.Marshal(v)
	if merr != nil {
		return []byte("unencodable: " + merr.Error())
	}
	return b
}

// crossCheck: see CrossCheckDecoding.
var crossCheck atomic.Bool

// CrossCheckDecoding(true) makes every DecodeJSON, EncodeJSON and snapshot
// value of this process also run encoding/json, and panic unless both read
// (or write) the same. For tests (benchmarks turn it off): it more than
// doubles the cost.
func CrossCheckDecoding(on bool) { crossCheck.Store(on) }

// CrossCheckingDecoding reports whether CrossCheckDecoding is on, for
// decoders elsewhere that check themselves against DecodeJSON.
func CrossCheckingDecoding() bool { return crossCheck.Load() }
