package controller

import (
	"time"

	"github.com/hashicorp/go-hclog"

	"edgectl/cluster"
)

// startupLog times the phases of a node's start, for the operator and for
// the chaos test, which reads them from the log when a restart is slow:
//
//   - "raft open": the log store opened and the newest snapshot restored
//     into the model (raft restores it before anything else);
//   - "caught up": a leader known and a barrier through it, so every entry
//     committed before the restart, the log's own tail included, applied;
//   - "serving": the API serving (startGate open: what the API port held
//     since it opened is served, /readyz answers 200 from here on).
//
// Each line says how long the phase took, how long since the start, and
// where the log stood, so a slow start names its cause: a large snapshot,
// a long tail of log to replay, or no quorum to catch up with.
type startupLog struct {
	log   hclog.Logger
	start time.Time
	last  time.Time
}

func newStartupLog(log hclog.Logger) *startupLog {
	now := time.Now()
	return &startupLog{log: log, start: now, last: now}
}

// phase logs the end of one phase with the raft node's indexes.
func (s *startupLog) phase(name string, r *cluster.Node, args ...any) {
	now := time.Now()
	st := r.Stats()
	s.log.Info("startup phase", append([]any{"phase", name,
		"took", now.Sub(s.last).Round(time.Millisecond).String(), "since_start", now.Sub(s.start).Round(time.Millisecond).String(),
		"snapshot_index", st.LastSnapshotIndex, "applied_index", st.AppliedIndex, "commit_index", st.CommitIndex,
		"last_log_index", st.LastLogIndex}, args...)...)
	s.last = now
}
