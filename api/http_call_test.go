package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// created writes by hand the bytes json.Encoder writes for createdBody:
// the same for ids and paths with every kind of character an id may hold
// (a client may choose an id where the API lets it).
func TestCreated_SameBytesAsTheEncoder(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"abc", "QWxS2kdLp", "", `quote"back\slash`, "<script>&amp;", "tab\tnl\n", "é ü 漢", "\x00\x1f", "bad\xffutf8", "\u2028\u2029"} {
		for _, path := range []string{"identities", "service-policies"} {
			w := httptest.NewRecorder()
			c := &call{w: w}
			c.created(path, id)
			var want bytes.Buffer
			_ = json.NewEncoder(&want).Encode(map[string]any{"data": map[string]any{"id": id, "_links": selfLinks(path, id)}, "meta": meta(nil)})
			if w.Code != http.StatusCreated || !bytes.Equal(w.Body.Bytes(), want.Bytes()) {
				t.Fatalf("created(%q, %q): %d %q, the encoder writes %q", path, id, w.Code, w.Body.Bytes(), want.Bytes())
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
		}
	}
}
