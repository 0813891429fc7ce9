package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"edgectl/cluster"
	"edgectl/fsm"
	"edgectl/internal/atomicfile"
	"edgectl/store"
)

func (s *Server) listMembers(c *call) error {
	return s.listMemberViews(c, func(m cluster.Member, st cluster.Stats, v map[string]any) {
		if m.ID == s.Cluster.ID() {
			v["raft"] = map[string]any{"state": st.State, "term": st.Term, "lastLogIndex": st.LastLogIndex,
				"commitIndex": st.CommitIndex, "appliedIndex": st.AppliedIndex, "lastSnapshotIndex": st.LastSnapshotIndex,
				"lastContact": st.LastContact}
		}
	})
}

// listClusterMembers answers the Fabric API's GET /cluster/list-members
// (`ziti ops cluster list`, ZAC's look for the other controllers) as
// OpenZiti's HA controller does: each member's id, its cluster address in
// OpenZiti's transport form (tls:HOST:PORT, as `ziti ops cluster add` takes
// it), whether it votes and leads, its version (this node's own, another's
// from its controller record) and whether this node reaches it. readOnly
// (OpenZiti's cluster refusing writes while its members' versions differ)
// is false: edgectl's members take writes then, refusing only the commands
// some member cannot apply (fsm/versions.go).
func (s *Server) listClusterMembers(c *call) error {
	members, err := s.Cluster.Members()
	if err != nil {
		return err
	}
	out := make([]any, 0, len(members))
	for _, m := range members {
		connected, version := true, s.cfg.Version
		if m.ID != s.Cluster.ID() {
			connected, _, _ = s.Peers.PeerStatus(m.ID)
			version = "unknown"
			if ctrl := c.tx.Controller(m.ID); ctrl != nil && ctrl.Version != "" {
				version = ctrl.Version
			}
		}
		out = append(out, map[string]any{"id": m.ID, "address": "tls:" + m.Address, "voter": m.IsVoter, "leader": m.IsLeader,
			"version": version, "connected": connected, "readOnly": false})
	}
	c.write(http.StatusOK, map[string]any{"data": out, "meta": meta(nil)})
	return nil
}

// memberBody is the body of an add-member request.
type memberBody struct {
	ID      *string `json:"id"`
	Address *string `json:"address"`
	IsVoter *bool   `json:"isVoter"`
}

var hostPort = regexp.MustCompile(`^[A-Za-z0-9._\-\[\]:]+:[0-9]{1,5}$`)

func (s *Server) addMember(c *call) error {
	var b memberBody
	if err := decodeInto(c.r, &b); err != nil {
		return err
	}
	if b.ID == nil || *b.ID == "" {
		return invalidField("id", "is required", nil)
	}
	if b.Address == nil || !hostPort.MatchString(*b.Address) {
		return invalidField("address", "must be the member's cluster address, HOST:PORT", b.Address)
	}
	voter := b.IsVoter == nil || *b.IsVoter
	var err error
	if voter {
		err = s.Cluster.AddVoter(c.r.Context(), *b.ID, *b.Address)
	} else {
		err = s.Cluster.AddNonvoter(c.r.Context(), *b.ID, *b.Address)
	}
	if err != nil {
		return err
	}
	c.created("cluster/members", *b.ID)
	return nil
}

// removeMember removes a member. Removing the leader hands leadership over first.
func (s *Server) removeMember(c *call) error {
	id := c.param("id")
	members, err := s.Cluster.Members()
	if err != nil {
		return err
	}
	known := false
	for _, m := range members {
		known = known || m.ID == id
	}
	if !known {
		return notFound("cluster member", id)
	}
	if leader, _ := s.Cluster.Leader(); leader == id && len(members) > 1 {
		if err := s.Cluster.TransferLeadership(c.r.Context(), ""); err != nil {
			return err
		}
		if err := s.waitNewLeader(c.r.Context(), id); err != nil {
			return err
		}
	}
	if err := s.Cluster.RemoveServer(c.r.Context(), id); err != nil {
		return err
	}
	// The member's record would otherwise keep its API URL in /controllers and in join tokens.
	// The member is gone either way: a failure here (leadership moving right now) is logged, not answered.
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdControllerRemove, fsm.Delete{ID: id}); err != nil {
		s.Log.Warn("removed member's controller record stays until the next removal", "id", id, "error", err)
	}
	return nil
}

// waitNewLeader polls until a leader other than old is known.
func (s *Server) waitNewLeader(ctx context.Context, old string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if id, _ := s.Cluster.Leader(); id != "" && id != old {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: no new leader after the transfer", cluster.ErrNoLeader)
		case <-t.C:
		}
	}
}

func (s *Server) transferLeadership(c *call) error {
	var b struct {
		ID *string `json:"id"`
	}
	if err := decodeInto(c.r, &b); err != nil {
		return err
	}
	to := ""
	if b.ID != nil {
		to = *b.ID
	}
	return s.Cluster.TransferLeadership(c.r.Context(), to)
}

// snapshotID is the form of snapshot ids, so a download can never name a path outside the backup dir.
var snapshotID = regexp.MustCompile(`^[A-Za-z0-9._\-]+$`)

// createSnapshot takes a Raft snapshot now and keeps a copy for download.
func (s *Server) createSnapshot(c *call) error {
	info, err := s.Cluster.Snapshot(c.r.Context())
	if errors.Is(err, cluster.ErrSnapshotRunning) {
		return tooMany("a snapshot is already being taken: try again when it is done")
	}
	if err != nil {
		return err
	}
	rc, _, err := s.Cluster.OpenSnapshot(info.ID)
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := os.MkdirAll(s.cfg.BackupDir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(s.cfg.BackupDir, info.ID+".snapshot")
	size, err := atomicfile.Copy(path, path+".tmp", rc)
	if err != nil {
		return err
	}
	c.ok(map[string]any{"id": info.ID, "index": info.Index, "term": info.Term, "path": path, "size": size})
	return nil
}

func (s *Server) downloadSnapshot(c *call) error {
	id := c.param("id")
	if !snapshotID.MatchString(id) {
		return notFound("snapshot", id)
	}
	f, err := os.Open(filepath.Join(s.cfg.BackupDir, id+".snapshot"))
	if err != nil {
		return notFound("snapshot", id)
	}
	defer f.Close()
	c.wrote = true
	c.w.Header().Set("Content-Type", "application/octet-stream")
	c.w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", id+".snapshot"))
	c.w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(c.w, f)
	return nil
}

// integrityRun is the state of this node's integrity scan or fix.
type integrityRun struct {
	mu            sync.Mutex
	inProgress    bool
	fixing        bool
	start, end    *time.Time
	err           string
	results       []store.Finding
	tooManyErrors bool
}

// maxFindings bounds a run's report.
const maxFindings = 1000

// startIntegrity starts a scan (or a fix, which goes through Raft so every
// node repairs alike) in the background; one run at a time.
func (s *Server) startIntegrity(fix bool) func(c *call) error {
	return func(c *call) error {
		run := &s.integrity
		run.mu.Lock()
		if run.inProgress {
			run.mu.Unlock()
			return tooMany("a data integrity run is already in progress")
		}
		now := s.now()
		run.inProgress, run.fixing, run.start, run.end, run.err, run.results, run.tooManyErrors = true, fix, &now, nil, "", nil, false
		run.mu.Unlock()
		go s.runIntegrity(fix)
		c.write(http.StatusAccepted, map[string]any{"data": map[string]any{}, "meta": meta(nil)})
		return nil
	}
}

func (s *Server) runIntegrity(fix bool) {
	var findings []store.Finding
	var err error
	if fix {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var raw json.RawMessage
		raw, err = s.Writer.Do(ctx, fsm.CmdIntegrityFix, fsm.IntegrityFix{Max: maxFindings})
		cancel()
		if err == nil && raw != nil {
			err = json.Unmarshal(raw, &findings)
		}
	} else {
		findings, err = s.Store.Read().CheckIntegrity(false, maxFindings)
	}
	run := &s.integrity
	run.mu.Lock()
	defer run.mu.Unlock()
	end := s.now()
	run.inProgress, run.end, run.results = false, &end, findings
	run.tooManyErrors = len(findings) >= maxFindings
	if err != nil {
		run.err = err.Error()
	}
}

func (s *Server) integrityResults(c *call) error {
	run := &s.integrity
	run.mu.Lock()
	defer run.mu.Unlock()
	results := run.results
	if results == nil {
		results = []store.Finding{}
	}
	var errv any
	if run.err != "" {
		errv = run.err
	}
	c.ok(map[string]any{"inProgress": run.inProgress, "fixingErrors": run.fixing, "startTime": run.start,
		"endTime": run.end, "error": errv, "tooManyErrors": run.tooManyErrors, "results": results})
	return nil
}

// clusterRoutes are the cluster and database operations.
func (s *Server) clusterRoutes() []route {
	return []route{
		{managementAPI, get, "/cluster/members", "listClusterMembers", "Cluster", admin, s.listMembers},
		{managementAPI, post, "/cluster/members", "addClusterMember", "Cluster", admin, s.addMember},
		{managementAPI, del, "/cluster/members/:id", "removeClusterMember", "Cluster", admin, s.removeMember},
		{managementAPI, post, "/cluster/transfer-leadership", "transferLeadership", "Cluster", admin, s.transferLeadership},
		{fabricAPI, get, "/cluster/list-members", "clusterListMembers", "Cluster", admin, s.listClusterMembers},
		{managementAPI, post, "/database/snapshot", "createDatabaseSnapshot", "Database", admin, s.createSnapshot},
		{managementAPI, get, "/database/snapshots/:id", "downloadDatabaseSnapshot", "Database", admin, s.downloadSnapshot},
		{managementAPI, post, "/database/check-data-integrity", "checkDataIntegrity", "Database", admin, s.startIntegrity(false)},
		{managementAPI, post, "/database/fix-data-integrity", "fixDataIntegrity", "Database", admin, s.startIntegrity(true)},
		{managementAPI, get, "/database/data-integrity-results", "dataIntegrityResults", "Database", admin, s.integrityResults},
	}
}
