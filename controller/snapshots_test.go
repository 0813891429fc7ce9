package controller

import "testing"

func TestSnapshotThresholdGrowsWithTheModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		base    uint64
		records int
		want    uint64
	}{
		{8192, 0, 8192},
		{8192, 30000, 8192},           // a small model: the flag's value
		{8192, 1_000_000, 250_000},    // a million records: a quarter of them
		{500_000, 1_000_000, 500_000}, // never below the flag
	} {
		if got := snapshotThreshold(c.base, c.records); got != c.want {
			t.Errorf("snapshotThreshold(%d, %d) = %d, want %d", c.base, c.records, got, c.want)
		}
	}
}
