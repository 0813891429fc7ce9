package auth

import "testing"

// An id that began with '-' was taken for an option by the CLI (one id in
// 64); ids are 16 characters of URL-safe base64 and never begin with it.
func TestNewIDNeverBeginsWithADash(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 10000 {
		id := NewID()
		if len(id) != 16 || id[0] == '-' {
			t.Fatalf("id %q", id)
		}
		if seen[id] {
			t.Fatalf("id %q twice", id)
		}
		seen[id] = true
	}
}
