package cli

import (
	"strings"
	"testing"
	"time"
)

// Times in tables are said as a person says them; other values as cell
// shows them.
func TestHumanCell(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    any
		want string
	}{
		{now.Add(-3 * time.Second).Format(time.RFC3339Nano), "now"},
		{now.Add(-42 * time.Second).Format(time.RFC3339Nano), "42 s ago"},
		{now.Add(-3 * time.Minute).Format(time.RFC3339), "3 min ago"},
		{now.Add(2*time.Hour + time.Minute).Format(time.RFC3339), "in 2 h"},
		{now.Add(-50 * time.Hour).Format(time.RFC3339), "2 days ago"},
		{now.Add(-30 * 24 * time.Hour).Format(time.RFC3339), now.Add(-30 * 24 * time.Hour).Local().Format("2006-01-02 15:04")},
		{"web", "web"},
		{"2026-11-27 not a time at all", "2026-11-27 not a time at all"},
		{[]any{"#a", "@b"}, "#a,@b"},
		{nil, "-"},
	} {
		if got := humanCell(c.v, now); got != c.want {
			t.Errorf("humanCell(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// A list's table shows the id and the columns of the resource's description,
// dotted paths by the record they name.
func TestTablesShowTheDescribedColumns(t *testing.T) {
	items := []map[string]any{{"id": "i1", "name": "alice", "type": map[string]any{"name": "User"}, "isAdmin": false,
		"secondary": map[string]any{"requireTotp": true}, "extra": "not shown"}}
	out := captureStdout(t, func() {
		if err := printRecords(items, "table", []string{"name", "type.name", "isAdmin", "secondary.requireTotp"}); err != nil {
			t.Fatal(err)
		}
	})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "ID NAME TYPE ADMIN REQUIRETOTP" ||
		strings.Join(strings.Fields(lines[1]), " ") != "i1 alice User false true" {
		t.Fatalf("table:\n%s", out)
	}
}
