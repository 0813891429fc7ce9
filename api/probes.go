package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"
)

// Probes for load balancers and orchestrators, without authentication, at
// the root of the API port and on the metrics port (docs/operations.md,
// "Probes").

// probeCatchUpWait is how long /readyz lets a follower apply what it knows
// is committed before it calls the node behind: under a steady write load a
// follower is always a few entries behind for a moment, which is not a
// reason to take it out of a load balancer.
const probeCatchUpWait = 250 * time.Millisecond

// readiness is the body of /readyz.
type readiness struct {
	Status       string            `json:"status"` // ok or unavailable
	NodeID       string            `json:"nodeId"`
	LeaderID     string            `json:"leaderId"`
	Term         uint64            `json:"term"`
	AppliedIndex uint64            `json:"appliedIndex"`
	CommitIndex  uint64            `json:"commitIndex"`
	Checks       map[string]string `json:"checks"` // check name: "ok" or why not
}

// livez answers 200 while the process serves HTTP.
func (s *Server) livez(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
	writeProbe(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when the node knows a leader and has applied what the
// leader last told it it had committed; with ?leader=true, only on the
// leader.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	wantLeader := false
	if vs, ok := r.URL.Query()["leader"]; ok {
		if len(vs) != 1 || (vs[0] != "true" && vs[0] != "false") {
			writeProbe(w, http.StatusBadRequest, map[string]string{"status": "error", "error": "leader: must be true or false"})
			return
		}
		wantLeader = vs[0] == "true"
	}
	ctx, cancel := context.WithTimeout(r.Context(), probeCatchUpWait)
	defer cancel()
	applied, target, caughtUp := s.Cluster.CaughtUp(ctx)
	st := s.Cluster.Stats()
	rd := readiness{Status: "ok", NodeID: s.Cluster.ID(), LeaderID: st.LeaderID, Term: st.Term,
		AppliedIndex: applied, CommitIndex: st.CommitIndex, Checks: map[string]string{}}
	fail := func(check, why string) {
		rd.Checks[check] = why
		rd.Status = "unavailable"
	}
	rd.Checks["leader"] = "ok"
	if st.LeaderID == "" {
		fail("leader", "no leader known")
	}
	rd.Checks["caughtUp"] = "ok"
	if !caughtUp {
		fail("caughtUp", fmt.Sprintf("applied %d of %d committed", applied, target))
	}
	if wantLeader {
		rd.Checks["isLeader"] = "ok"
		if st.LeaderID != rd.NodeID || st.State != "Leader" {
			fail("isLeader", "this node is a "+st.State)
		}
	}
	code := http.StatusOK
	if rd.Status != "ok" {
		code = http.StatusServiceUnavailable
	}
	writeProbe(w, code, rd)
}

func writeProbe(w http.ResponseWriter, code int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

// addProbes registers the probes on router (the API's, or the metrics
// port's).
func (s *Server) addProbes(router *httprouter.Router) {
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		router.Handle(m, "/livez", s.livez)
		router.Handle(m, "/readyz", s.readyz)
	}
}

// ProbeHandler serves /livez and /readyz, for the metrics port.
func (s *Server) ProbeHandler() http.Handler {
	r := httprouter.New()
	s.addProbes(r)
	return r
}
