package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"edgectl/store"
)

// TestDecodeObject_ReadsWhatEncodingJSONReads: a body's fields are what
// encoding/json reads (the last of duplicate names, invalid UTF-8 kept in
// values), and a body it refuses is refused with its error text.
func TestDecodeObject_ReadsWhatEncodingJSONReads(t *testing.T) {
	for _, body := range []string{
		`{"name":"perf-1","type":"Device","isAdmin":false}`,
		`{"name":"a","name":"b"}`,
		`{"appData":{"k":[1,2,{"x":null}]},"tags":{} }`,
		`{"name":"a",}`,
		`{"name":"a"} {}`,
		`{"name":`,
	} {
		var want map[string]json.RawMessage
		werr := json.Unmarshal([]byte(body), &want)
		got, err := decodeObject(httptest.NewRequest("POST", "/", strings.NewReader(body)))
		switch {
		case werr != nil:
			if err == nil || !strings.Contains(err.Error(), werr.Error()) {
				t.Errorf("%q: error %v, encoding/json's is %v", body, err, werr)
			}
		case err != nil:
			t.Errorf("%q: %v", body, err)
		case !reflect.DeepEqual(compacted(got), compacted(want)):
			t.Errorf("%q: %s, encoding/json reads %s", body, got, want)
		}
	}
}

func compacted(m map[string]json.RawMessage) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		var b bytes.Buffer
		_ = json.Compact(&b, v)
		out[k] = b.String()
	}
	return out
}

// A create's body is read in 10 allocations, encoding/json's reading in 17
// (every write the API takes is read here).
func TestDecodeObject_ACreateBodyInFewAllocations(t *testing.T) {
	store.CrossCheckDecoding(false) // nodes do not cross-check
	defer store.CrossCheckDecoding(true)
	body := `{"name":"perf-1","type":"Device","isAdmin":false}`
	r := httptest.NewRequest("POST", "/", nil)
	var rd strings.Reader
	r.Body = io.NopCloser(&rd)
	n := testing.AllocsPerRun(50, func() {
		rd.Reset(body)
		if _, err := decodeObject(r); err != nil {
			t.Fatal(err)
		}
	})
	if n > 12 {
		t.Fatalf("%v allocations to read a create's body, want at most 12", n)
	}
}
