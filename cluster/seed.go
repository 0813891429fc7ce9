package cluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// keyCurrentTerm is the stable-store key under which hashicorp/raft keeps
// its current term (raft's own constant is unexported; the key is part of
// its on-disk format, so it does not change).
var keyCurrentTerm = []byte("CurrentTerm")

// SeedSnapshot prepares dataDir so that New starts a one-voter cluster made
// of nodeID whose state is the FSM snapshot read from r: it writes r as a
// raft file snapshot (under dataDir/raft/snapshots) at log index and term,
// with a configuration of just this node as voter at advertiseAddr (the
// address the node will advertise, Config.AdvertiseAddr or its bound
// address), and sets the stable store's current term to term.
//
// New then finds existing state (no BootstrapSelf), restores the FSM from
// the snapshot, and the node elects itself in the next term. This is how a
// cluster is rebuilt from a backup, or from the latest snapshot of the last
// surviving node when quorum is lost for good; it works like
// raft.RecoverCluster, but from a snapshot instead of an existing log.
//
// r must yield exactly what the FSM's snapshot Persist writes (what
// OpenSnapshot returns); index should be the last index that snapshot
// covers. SeedSnapshot refuses a data dir that already holds raft state.
func SeedSnapshot(dataDir, nodeID, advertiseAddr string, index, term uint64, r io.Reader) (err error) {
	switch {
	case dataDir == "":
		return errors.New("cluster: seed: data dir is required")
	case nodeID == "":
		return errors.New("cluster: seed: node id is required")
	case index == 0 || term == 0:
		return fmt.Errorf("cluster: seed: index (%d) and term (%d) must be at least 1", index, term)
	}
	if _, port, err := net.SplitHostPort(advertiseAddr); err != nil || port == "0" || port == "" {
		return fmt.Errorf("cluster: seed: the advertised address %q must be HOST:PORT with a fixed port", advertiseAddr)
	}

	dir := filepath.Join(dataDir, "raft")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cluster: seed: %w", err)
	}
	if HasLogStore(dataDir) {
		return fmt.Errorf("cluster: seed: %s already holds a raft log: this data dir has raft state", dir)
	}
	logger := hclog.NewNullLogger()
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, snapshotsRetain, logger)
	if err != nil {
		return fmt.Errorf("cluster: seed: snapshot store: %w", err)
	}
	if list, err := snaps.List(); err != nil || len(list) > 0 {
		return fmt.Errorf("cluster: seed: %s already holds snapshots (or cannot be read: %v)", filepath.Join(dir, "snapshots"), err)
	}
	store, err := openLogStore(dir, logger, 0)
	if err != nil {
		return fmt.Errorf("cluster: seed: %w", err)
	}
	defer func() {
		if cerr := store.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("cluster: seed: close the raft log: %w", cerr)
		}
		if err != nil {
			// Leave nothing that HasExistingState would mistake for a seeded
			// node (the snapshot dir held no snapshot before).
			os.RemoveAll(filepath.Join(dir, walDirName))
			os.RemoveAll(filepath.Join(dir, "snapshots"))
		}
	}()

	conf := raft.Configuration{Servers: []raft.Server{{
		Suffrage: raft.Voter, ID: raft.ServerID(nodeID), Address: raft.ServerAddress(advertiseAddr),
	}}}
	// Create only asks the transport to encode the (legacy) peer list; an
	// in-memory transport encodes addresses exactly as the network one does.
	_, trans := raft.NewInmemTransport(raft.ServerAddress(advertiseAddr))
	defer trans.Close()
	sink, err := snaps.Create(1, index, term, conf, index, trans)
	if err != nil {
		return fmt.Errorf("cluster: seed: create snapshot: %w", err)
	}
	if _, err := io.Copy(sink, r); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("cluster: seed: write snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("cluster: seed: finish snapshot: %w", err)
	}
	// A node's term must not be behind the last term of its log (here, the
	// snapshot's): it campaigns in term+1, so its new entries sort after it.
	if err := store.SetUint64(keyCurrentTerm, term); err != nil {
		return fmt.Errorf("cluster: seed: set current term: %w", err)
	}
	return nil
}
