package controller

import (
	"os"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"
)

// DefaultGCPercent is the collector target a node runs with unless told
// otherwise. Most of a controller's heap is the model, which lives as long
// as the process; a collection marks all of it, and with Go's default of 100
// one runs each time the requests have allocated as much again as the model
// holds. At 200 they run half as often, which cut the collector's share of
// the CPU of a loaded node (about a third of it at 100,000 identities, see
// docs/performance-history.md, Session 2), for a heap that peaks at about three times the live
// model instead of two (1.2 GiB instead of 0.8 GiB at 100,000 identities).
const DefaultGCPercent = 200

// applyGCPercent sets the collector target of the process, unless the
// operator set GOGC in the environment (the runtime has applied it already).
func applyGCPercent(percent int, log hclog.Logger) {
	if v, ok := os.LookupEnv("GOGC"); ok {
		log.Debug("garbage collector target from the environment", "GOGC", v)
		return
	}
	if percent == 0 {
		percent = DefaultGCPercent
	}
	debug.SetGCPercent(percent)
}
