package controller

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"edgectl/cluster"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// restoredTerm is the Raft term a restored cluster's snapshot is written at:
// the cluster is new, so its terms start again (the node campaigns in term 2).
const restoredTerm = 1

// RestoreResult describes the one-node cluster Restore made.
type RestoreResult struct {
	NodeID      string
	ClusterAddr string         // the node's Raft address in the new configuration
	Index       uint64         // the log index the snapshot was taken at
	Counts      map[string]int // records per table of the restored model (settings left out)
	// DroppedControllers are the ids of the old cluster's nodes whose
	// controller records (name, API URL) were left out: they describe the
	// old membership, not data, and would otherwise be handed out in join tokens.
	DroppedControllers []string
}

// Restore makes cfg.DataDir a new one-node cluster whose model is the
// snapshot in snapshotPath (a file from GET /database/snapshots/{id}, that
// is the stream fsm.WriteSnapshot writes). The data dir must be new or empty.
//
// The cluster keeps its CA: the node and API certificates are issued by the
// PKI inside the snapshot, so clients that trust the old CA bundle trust the
// restored node. The model is the snapshot's, API sessions included (a
// database restore brings back who was logged in, until their sessions
// expire), except the controller records of the old nodes. A later
// `edgectl run` with the same --data-dir, --cluster-addr, --advertise and
// --cluster-advertise resumes it.
func Restore(cfg Config, snapshotPath string) (_ *RestoreResult, err error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	addr := cfg.clusterAdvertiseAddr()
	if addr == "" {
		return nil, errors.New("a restored node needs a fixed --cluster-addr port: it is written into the new cluster's configuration")
	}
	existed, err := checkEmptyDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}

	// Read and check the snapshot before anything is written.
	model, index, err := readSnapshotFile(snapshotPath)
	if err != nil {
		return nil, err
	}
	authority, err := snapshotAuthority(model.Read())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", snapshotPath, err)
	}

	defer func() {
		if err != nil {
			removeCreated(cfg.DataDir, existed)
		}
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	nodeID, err := loadNodeID(cfg.DataDir, cfg.NodeID)
	if err != nil {
		return nil, err
	}
	res := &RestoreResult{NodeID: nodeID, ClusterAddr: addr, Index: index, Counts: map[string]int{}}
	if res.DroppedControllers, err = dropOtherControllers(model, nodeID, addr); err != nil {
		return nil, err
	}
	if err := newRouterTimeline(model); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	if err := issueNodeCerts(cfg.DataDir, nodeID, (&Node{cfg: cfg}).certHosts(), authority, now); err != nil {
		return nil, fmt.Errorf("issue the node's certificates: %w", err)
	}

	tx := model.Read()
	for _, k := range store.AllKinds {
		if k != store.KindSetting {
			res.Counts[k.Table] = tx.Count(k)
		}
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(fsm.WriteSnapshot(pw, tx, index)) }()
	err = cluster.SeedSnapshot(cfg.DataDir, nodeID, addr, index, restoredTerm, pr)
	pr.Close() // unblocks the writer if the seed stopped reading early
	if err != nil {
		return nil, err
	}
	marker, _ := json.Marshal(map[string]any{"snapshot": filepath.Base(snapshotPath), "index": index, "restoredAt": now})
	if err := writeFileAtomic(filepath.Join(cfg.DataDir, restoredMarker), marker, 0o600); err != nil {
		return nil, err
	}
	return res, nil
}

// checkEmptyDir refuses a data dir that holds anything: a restore makes a
// new cluster and must never mix with (or overwrite) an existing node's files.
func checkEmptyDir(dir string) (existed bool, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("data dir: %w", err)
	case len(entries) > 0:
		return true, fmt.Errorf("%s already has data (%s...): a restore makes a new cluster in a new, empty data dir; "+
			"stop the node that uses it and move it away, or pick another --data-dir", dir, entries[0].Name())
	}
	return true, nil
}

// removeCreated undoes a failed restore: the dir was empty or absent before.
func removeCreated(dir string, existed bool) {
	if !existed {
		os.RemoveAll(dir)
		return
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// readSnapshotFile loads a snapshot file into a model of its own, which
// also checks that it is complete and well-formed.
func readSnapshotFile(path string) (*store.Store, uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	model := store.New()
	m := fsm.New(model)
	if err := m.Restore(f); err != nil { // Restore closes f
		return nil, 0, fmt.Errorf("%s is not a complete edgectl snapshot (a file from GET /database/snapshots/{id}): %w", path, err)
	}
	return model, max(m.AppliedIndex(), 1), nil
}

// snapshotAuthority loads the cluster's CA from the snapshot's model.
func snapshotAuthority(tx *store.Tx) (*pki.Authority, error) {
	if !tx.Bootstrapped() {
		return nil, errors.New("the snapshot holds no bootstrapped cluster (no bootstrap records)")
	}
	raw := tx.Setting(store.SettingPKI)
	if raw == nil {
		return nil, errors.New("the snapshot holds no PKI")
	}
	var st pki.State
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("the snapshot's PKI is damaged: %w", err)
	}
	a, err := pki.Load(&st)
	if err != nil {
		return nil, fmt.Errorf("the snapshot's PKI is damaged: %w", err)
	}
	return a, nil
}

// dropOtherControllers removes the controller records of every node but keep.
func dropOtherControllers(model *store.Store, keep, addr string) ([]string, error) {
	tx := model.Write()
	defer tx.Abort()
	var ids []string
	tx.Controllers(func(c *store.Controller) bool {
		if c.ID != keep {
			ids = append(ids, c.ID)
		}
		return true
	})
	for _, id := range ids {
		if err := tx.Remove(store.KindController, id); err != nil {
			return nil, fmt.Errorf("drop the old controller record %s: %w", id, err)
		}
	}
	// The old membership goes too: the new cluster is this node alone, so
	// the next configuration change is not reported as the old nodes leaving.
	if tx.Exists(store.KindSetting, store.SettingMembership) {
		if err := tx.SetMembership([]store.Member{{ID: keep, Address: addr, Suffrage: "Voter"}}, tx.EventsClock()); err != nil {
			return nil, err
		}
	}
	tx.Commit()
	return ids, nil
}

// newRouterTimeline gives a restored model a new router data model
// timeline: its Raft indexes start a history of their own, and routers that
// followed the old cluster must get the full state.
func newRouterTimeline(model *store.Store) error {
	tx := model.Write()
	defer tx.Abort()
	cur := tx.DataPlaneKeys()
	if cur == nil {
		return nil
	}
	k := *cur // DataPlaneKeys is shared: change a copy
	k.TimelineID = newTimelineID()
	raw, err := json.Marshal(&k)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	if err := tx.Upsert(store.KindSetting, &store.Setting{Base: store.Base{ID: store.SettingDataPlane, CreatedAt: now, UpdatedAt: now}, Value: raw}); err != nil {
		return err
	}
	tx.Commit()
	return nil
}
