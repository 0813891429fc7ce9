package fsm

import (
	"testing"

	"edgectl/store"
)

// Every command this binary applies is of a version it claims, and every
// versioned command is one it applies.
func TestCommandVersions(t *testing.T) {
	f := New(store.New())
	for typ := range f.handlers {
		if v := VersionOf(typ); v < 1 || v > CommandVersion {
			t.Errorf("%s: command version %d, this binary applies up to %d", typ, v, CommandVersion)
		}
	}
	newest := 1
	for typ, v := range commandSince {
		if _, ok := f.handlers[typ]; !ok {
			t.Errorf("%s has a command version but no handler", typ)
		}
		newest = max(newest, v)
	}
	if newest != CommandVersion {
		t.Errorf("the newest command is of version %d, CommandVersion is %d", newest, CommandVersion)
	}
}
