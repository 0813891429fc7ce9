package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"edgectl/cluster"
)

// Read consistency of a GET (?consistency=, the node's --read-consistency).
const (
	// ConsistencyLocal reads this node's state as it is: every write this
	// node acknowledged is in it (read-your-writes on the node that took
	// the write), writes acknowledged elsewhere may not be yet.
	ConsistencyLocal = "local"
	// ConsistencyLinearizable first makes this node catch up with the
	// leader's commit index, proven current by a quorum round: the answer
	// reflects every write any node acknowledged before the read began.
	ConsistencyLinearizable = "linearizable"
)

// readIndexWait bounds the read-index round: without a reachable leader a
// linearizable read answers 503 after this long.
const readIndexWait = 5 * time.Second

// ValidConsistency reports whether v names a read consistency.
func ValidConsistency(v string) bool { return v == ConsistencyLocal || v == ConsistencyLinearizable }

// readConsistency is the consistency a GET asks for: its ?consistency=, or
// the node's default.
func (s *Server) readConsistency(r *http.Request) (string, error) {
	if !strings.Contains(r.URL.RawQuery, "consistency") {
		return s.cfg.ReadConsistency, nil
	}
	vs, ok := r.URL.Query()["consistency"]
	switch {
	case !ok:
		return s.cfg.ReadConsistency, nil
	case len(vs) != 1:
		return "", invalidField("consistency", "must be given once", vs)
	case !ValidConsistency(vs[0]):
		return "", invalidField("consistency", "must be local or linearizable", vs[0])
	}
	return vs[0], nil
}

// snapshot takes the call's read view, and the applied index it holds at
// least.
func (c *call) snapshot() {
	if c.s.Cluster != nil { // nil in the benchmarks of the encoders
		c.txIndex = c.s.Cluster.AppliedIndex()
	}
	c.tx = c.s.Store.Read()
}

// catchUp brings the call's read view up to the cluster's commit index:
// one read-index round, then a fresh view if the node had been behind when
// the view was taken. It reports whether the view changed; it runs the
// round at most once per call.
func (c *call) catchUp() (bool, error) {
	if c.caughtUp {
		return false, nil
	}
	c.caughtUp = true
	ctx, cancel := context.WithTimeout(c.r.Context(), readIndexWait)
	defer cancel()
	idx, err := c.s.Cluster.ReadIndex(ctx)
	if err != nil {
		return false, readIndexError(err)
	}
	if idx <= c.txIndex {
		return false, nil
	}
	c.snapshot()
	return true, nil
}

// rejudge is for a request about to be refused for something the model
// lacks (an unknown credential, token or authenticator): when this node
// was behind the leader, it reports true and the caller judges the request
// again on the caught-up view. An identity or authenticator created
// through another node then works here at once, and a refusal that was
// only due to lag counts nothing toward lockout.
func (c *call) rejudge() bool {
	again, err := c.catchUp()
	if err != nil {
		c.s.Log.Debug("read index before refusing", "error", err)
	}
	return again
}

// readIndexError maps a failed read-index round to 503.
func readIndexError(err error) error {
	var ae *apiError
	if errors.As(err, &ae) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &apiError{status: http.StatusServiceUnavailable, code: codeUnavailable,
		message: "no leader confirmed this node's state in time, so a linearizable read cannot be answered: try again, or read with consistency=local (" +
			shortCause(err) + ")"}
}

// shortCause is the innermost reason of a cluster error, for messages.
func shortCause(err error) string {
	switch {
	case errors.Is(err, cluster.ErrNoLeader):
		return "the cluster has no leader"
	case errors.Is(err, cluster.ErrShutdown):
		return "this node is shutting down"
	case errors.Is(err, context.DeadlineExceeded):
		return "the leader did not answer in time"
	}
	return "the leadership is changing"
}
