package controller

import (
	"context"
	"time"

	"edgectl/store"
)

// A snapshot writes the whole model, so with a fixed threshold its cost per
// write grows with the model: at a million identities, a snapshot every
// 8,192 entries rewrote gigabytes for every few seconds of writes (issue
// 16). The node therefore lets at least a quarter of the model's record
// count in entries pass between automatic snapshots, and never fewer than
// defaultSnapshotThreshold; a --snapshot-threshold given explicitly is kept
// as it is. The snapshot work per write stays bounded (about
// four records encoded per entry) while the log kept between snapshots
// stays a fraction of the model.
//
// The floor bounds what a restarting node replays while the model is small
// (the log since the last snapshot: up to the threshold plus two check
// intervals of writes, cluster.DefaultSnapshotInterval). Under `make chaos`
// on a loaded two-core machine a restarted node replayed 2,000 to 3,000
// entries a second: 8,192 (raft's default) left restarts at up to 6 s,
// 4,096 keeps them under the 5 s aim (issue 46). A snapshot of a model that
// small takes milliseconds.

// defaultSnapshotThreshold is the least the node waits between automatic
// snapshots (raft's own default is 8,192).
const defaultSnapshotThreshold = 4096

// snapshotThresholdEvery is how often the threshold is set to the model's
// size (counting the records is a lookup per kind). It must follow a model
// that grows fast: 100,000 terminators made through 100 routers in 12 s
// were snapshotted at 4,096 and 5,285 entries when it was 10 s (at 50,000
// to 100,000 records: each snapshot of the three nodes a second of CPU,
// the terminators' rate halved while it ran).
const snapshotThresholdEvery = time.Second

// snapshotThreshold is the threshold for a model of records records.
func snapshotThreshold(base uint64, records int) uint64 {
	return max(base, uint64(records)/4)
}

// adaptSnapshotThreshold keeps raft's snapshot threshold in step with the
// model's size until ctx ends; it changes it when it is off by a quarter.
func (n *Node) adaptSnapshotThreshold(ctx context.Context, base uint64, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		tx := n.Store.Read()
		records := 0
		for _, k := range store.AllKinds {
			records += tx.Count(k)
		}
		want, cur := snapshotThreshold(base, records), n.Raft.SnapshotThreshold()
		if want > cur+cur/4 || want < cur-cur/4 {
			if err := n.Raft.SetSnapshotThreshold(want); err != nil {
				n.log.Warn("snapshot threshold not changed", "error", err)
			} else {
				n.log.Info("snapshot threshold follows the model's size", "entries", want, "records", records)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
