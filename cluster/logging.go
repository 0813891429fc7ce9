package cluster

import (
	"strings"

	"github.com/hashicorp/go-hclog"
)

// raftLogger quiets hashicorp/raft's routine messages: its state changes
// (becoming leader included: the event log records every leader change as
// cluster.leaderChanged) and catch-up mechanics go to debug, so that a
// healthy start or join logs no warning and an operator's info log is about
// the node, not raft's steps. Real trouble (errors, and warnings other than
// the routine ones below) is kept as raft logs it.
type raftLogger struct{ hclog.Logger }

// routineWarnings are raft warnings that healthy operation produces: the
// first election of a node that never had a leader, and a follower that is
// brought up to date by sending it older entries.
var routineWarnings = []string{
	"heartbeat timeout reached, starting election",
	"failed to get previous log",
	"appendEntries rejected, sending older logs",
}

func (l raftLogger) Info(msg string, args ...any) { l.Logger.Debug(msg, args...) }

func (l raftLogger) Warn(msg string, args ...any) {
	for _, r := range routineWarnings {
		if strings.HasPrefix(msg, r) {
			l.Logger.Debug(msg, args...)
			return
		}
	}
	l.Logger.Warn(msg, args...)
}

func (l raftLogger) Log(level hclog.Level, msg string, args ...any) {
	switch level {
	case hclog.Info:
		l.Info(msg, args...)
	case hclog.Warn:
		l.Warn(msg, args...)
	default:
		l.Logger.Log(level, msg, args...)
	}
}

func (l raftLogger) Named(name string) hclog.Logger { return raftLogger{l.Logger.Named(name)} }
func (l raftLogger) ResetNamed(name string) hclog.Logger {
	return raftLogger{l.Logger.ResetNamed(name)}
}
func (l raftLogger) With(args ...any) hclog.Logger { return raftLogger{l.Logger.With(args...)} }
