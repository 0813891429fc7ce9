package api

import (
	"bytes"
	"encoding/json"
	"testing"
)

var jsonStringSeeds = []string{"", "plain-id_0123", "svc with \"quotes\" & <html>", "tab\there\nnew\r\x00\x1f\x7f",
	"back\\slash", "é ü 😀", "line\u2028sep\u2029", "bad \xff\xfe utf8", "\b\f"}

// TestAppendJSONStringMatchesEncodingJSON: strings come out as encoding/json
// writes them (HTML-escaped, control characters, invalid UTF-8, U+2028).
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range jsonStringSeeds {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("%q: got %s, want %s", s, got[1:], want)
		}
	}
	want, _ := json.Marshal(jsonStringSeeds)
	if got := appendJSONStrings(nil, jsonStringSeeds); !bytes.Equal(got, want) {
		t.Fatalf("array: got %s, want %s", got, want)
	}
	if got := appendJSONStrings(nil, []string{}); string(got) != "[]" {
		t.Fatalf("empty array: %s", got)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

// TestFragCacheBounded: a fragment is built once per key, and the cache
// starts over instead of growing past maxFrags.
func TestFragCacheBounded(t *testing.T) {
	t.Parallel()
	var c fragCache
	builds := 0
	build := func() (any, error) { builds++; return []byte("frag"), nil }
	keys := make([]*int, maxFrags+10)
	for i := range keys {
		keys[i] = new(int)
		if _, err := c.get(keys[i], build); err != nil {
			t.Fatal(err)
		}
	}
	if builds != len(keys) {
		t.Fatalf("%d builds for %d keys", builds, len(keys))
	}
	last := keys[len(keys)-1]
	if _, _ = c.get(last, build); builds != len(keys) {
		t.Fatal("a cached fragment was built again")
	}
	if n := c.n.Load(); n > maxFrags {
		t.Fatalf("%d fragments cached, bound %d", n, maxFrags)
	}
	if _, _ = c.get(keys[0], build); builds != len(keys)+1 {
		t.Fatal("a fragment dropped when the cache started over was not rebuilt")
	}
}
