package auth

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// An id that began with '-' was taken for an option by the CLI (one id in
// 64 did when ids were random from the first character). Ids are 18
// characters of URL-safe base64 and never begin with it, at any time.
func TestNewID_NeverBeginsWithADash(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 10000 {
		id := NewID()
		if len(id) != idLen || strings.Trim(id, idAlphabet) != "" {
			t.Fatalf("id %q: want %d characters of %q", id, idLen, idAlphabet)
		}
		if seen[id] {
			t.Fatalf("id %q twice", id)
		}
		seen[id] = true
	}
	// Every value the first character takes, and both sides of the wrap.
	epoch := time.UnixMilli(0)
	for k := range int64(64) {
		for _, ms := range []int64{k << 36, k<<36 - 1, idTimeWindow - 1, idTimeWindow, idTimeWindow + 1} {
			if ms < 0 {
				continue
			}
			if id := newIDAt(epoch.Add(time.Duration(ms) * time.Millisecond)); id[0] == '-' {
				t.Fatalf("id %q at %d ms begins with '-'", id, ms)
			}
		}
	}
}

// Ids sort as strings in the order they were made, and ids of one
// millisecond share their first seven characters: the prefix the store's
// radix trees share between the records of one batch.
func TestNewID_SortsInTheOrderMade(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 0, 10, 0, 0, time.UTC)
	var ids []string
	for _, d := range []time.Duration{0, time.Millisecond, 63 * time.Millisecond, 64 * time.Millisecond, time.Second,
		time.Hour, 24 * time.Hour, 365 * 24 * time.Hour, 50 * 365 * 24 * time.Hour} {
		ids = append(ids, newIDAt(at.Add(d)))
	}
	if !slices.IsSorted(ids) {
		t.Fatalf("ids made one after the other do not sort in that order: %q", ids)
	}
	a, b := newIDAt(at), newIDAt(at.Add(999*time.Microsecond))
	if a[:idTimeChars] != b[:idTimeChars] || a == b {
		t.Fatalf("ids of one millisecond: %q and %q", a, b)
	}
	if c := newIDAt(at.Add(time.Millisecond)); c[:idTimeChars] == a[:idTimeChars] {
		t.Fatalf("ids of two milliseconds share the time characters: %q and %q", a, c)
	}
}
