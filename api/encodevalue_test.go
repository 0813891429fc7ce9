package api

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// TestEncodeValue_WritesWhatJSONMarshalWrites: the values written directly
// and the ones handed on encode as json.Marshal encodes them.
func TestEncodeValue_WritesWhatJSONMarshalWrites(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		nil, true, false, 0, -1, 65535, math.MaxInt, math.MinInt, int64(7), 1.5,
		"", "default", "perf-1", "a b~!#$%^*()_+-=[]{}|;:',./?`",
		`quote"`, `back\slash`, "<b>", "a&b", "tab\t", "nl\n", "\x7f", "é", "日本", "\xff", "\u2028",
		[]string(nil), []string{}, []string{"a"}, map[string]any(nil), map[string]any{"k": "<"}, map[string]int64{"s": 1},
	} {
		want, werr := json.Marshal(v)
		got, err := encodeValue(v)
		if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Errorf("%#v: %s (%v), json.Marshal %s (%v)", v, got, err, want, werr)
		}
	}
}
