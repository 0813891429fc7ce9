package controller

import "testing"

func TestSnapshotThresholdGrowsWithTheModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		base    uint64
		records int
		want    uint64
	}{
		{defaultSnapshotThreshold, 0, 4096},
		{defaultSnapshotThreshold, 16000, 4096},        // a small model: the floor, for a short replay at restart
		{defaultSnapshotThreshold, 30000, 7500},        // past 16,384 records: a quarter of them
		{defaultSnapshotThreshold, 1_000_000, 250_000}, // a million records: a quarter of them
		{500_000, 1_000_000, 500_000},                  // never below the flag
	} {
		if got := snapshotThreshold(c.base, c.records); got != c.want {
			t.Errorf("snapshotThreshold(%d, %d) = %d, want %d", c.base, c.records, got, c.want)
		}
	}
}
