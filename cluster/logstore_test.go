package cluster

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// legacyDataDir writes a raft.db as releases before the WAL left it: n
// entries from index first, a term and a vote.
func legacyDataDir(t *testing.T, first, n uint64) string {
	return legacyDataDirVote(t, first, n, true)
}

func legacyDataDirVote(t *testing.T, first, n uint64, voted bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "raft")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old, err := raftboltdb.NewBoltStore(filepath.Join(dir, legacyLogFile))
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := first; i < first+n; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 3, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("entry %d", i))})
	}
	if len(logs) > 0 {
		if err := old.StoreLogs(logs); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.SetUint64([]byte("CurrentTerm"), 4); err != nil {
		t.Fatal(err)
	}
	if voted {
		if err := old.SetUint64([]byte("LastVoteTerm"), 4); err != nil {
			t.Fatal(err)
		}
		if err := old.Set([]byte("LastVoteCand"), []byte("n2")); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A data dir of an earlier release keeps its log, term and vote in the WAL,
// and its raft.db is gone.
func TestLogStoreMovesAnEarlierReleasesRaftDB(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name           string
		first, n       uint64
		crashedMidMove bool // a half-built WAL of an interrupted move is there
		neverVoted     bool // a follower that never voted has no vote keys
	}{
		{name: "log after a compaction", first: 101, n: 300},
		{name: "empty log", first: 1, n: 0},
		{name: "interrupted move", first: 1, n: 50, crashedMidMove: true},
		{name: "never voted", first: 1, n: 20, neverVoted: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := legacyDataDirVote(t, c.first, c.n, !c.neverVoted)
			if c.crashedMidMove {
				half := filepath.Join(dir, walDirName+".moving")
				if err := os.MkdirAll(half, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(half, "junk"), []byte("half"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if !HasLogStore(filepath.Dir(dir)) {
				t.Fatal("HasLogStore does not see raft.db")
			}
			w, err := openLogStore(dir, hclog.NewNullLogger(), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if exists(filepath.Join(dir, legacyLogFile)) || exists(filepath.Join(dir, walDirName+".moving")) {
				t.Error("raft.db or the half-built WAL is still there after the move")
			}
			firstIdx, _ := w.FirstIndex()
			lastIdx, _ := w.LastIndex()
			if c.n == 0 {
				if firstIdx != 0 || lastIdx != 0 {
					t.Errorf("empty log moved to [%d, %d]", firstIdx, lastIdx)
				}
			} else if firstIdx != c.first || lastIdx != c.first+c.n-1 {
				t.Errorf("log [%d, %d], want [%d, %d]", firstIdx, lastIdx, c.first, c.first+c.n-1)
			}
			for i := firstIdx; c.n > 0 && i <= lastIdx; i++ {
				var l raft.Log
				if err := w.GetLog(i, &l); err != nil || l.Term != 3 || !bytes.Equal(l.Data, []byte(fmt.Sprintf("entry %d", i))) {
					t.Fatalf("entry %d: %v %+v", i, err, l)
				}
			}
			if v, err := w.GetUint64([]byte("CurrentTerm")); err != nil || v != 4 {
				t.Errorf("current term %d (%v), want 4", v, err)
			}
			wantVote := "n2"
			if c.neverVoted {
				wantVote = ""
			}
			if v, _ := w.Get([]byte("LastVoteCand")); string(v) != wantVote {
				t.Errorf("vote %q, want %q", v, wantVote)
			}
		})
	}
}

// A move that finished but crashed before removing raft.db: the WAL is the
// state, and the stale raft.db is dropped rather than copied again.
func TestLogStoreDropsRaftDBLeftBehindByAFinishedMove(t *testing.T) {
	t.Parallel()
	dir := legacyDataDir(t, 1, 10)
	w, err := openLogStore(dir, hclog.NewNullLogger(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.StoreLogs([]*raft.Log{{Index: 11, Term: 5, Type: raft.LogCommand, Data: []byte("new")}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// An old raft.db (with fewer entries) reappears beside the WAL.
	stale := legacyDataDir(t, 1, 3)
	if err := os.Rename(filepath.Join(stale, legacyLogFile), filepath.Join(dir, legacyLogFile)); err != nil {
		t.Fatal(err)
	}
	w, err = openLogStore(dir, hclog.NewNullLogger(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if last, _ := w.LastIndex(); last != 11 {
		t.Errorf("last index %d after reopening, want 11 (the WAL's)", last)
	}
	if exists(filepath.Join(dir, legacyLogFile)) {
		t.Error("the stale raft.db is still there")
	}
}
