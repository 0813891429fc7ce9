package cli

import (
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
