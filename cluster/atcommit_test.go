package cluster

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestForwardWaits_TheFirstApplyOfTheEntryGivesTheResult: a forwarded
// write's result is the one its entry got when this node first applied it
// (raft's later delivery of an entry applied ahead has none); an entry this
// node never applied itself (a snapshot restored past it) has no result.
func TestForwardWaits_TheFirstApplyOfTheEntryGivesTheResult(t *testing.T) {
	t.Parallel()
	var w forwardWaits
	id, other := w.expectResult(), w.expectResult()
	entry := func(index, id uint64) *raft.Log {
		return &raft.Log{Index: index, Term: 2, Type: raft.LogCommand, Extensions: forwardIDExtension(id)}
	}
	if _, ok := w.result(id, 7); ok {
		t.Fatal("a result before the entry was applied")
	}
	w.applied([]*raft.Log{entry(6, other), entry(7, id), {Index: 8, Type: raft.LogCommand}}, []any{[]byte("a"), []byte("b"), []byte("c")})
	w.applied([]*raft.Log{entry(7, id)}, []any{nil}) // raft's delivery after the apply ahead
	if res, ok := w.result(id, 7); !ok || string(res.([]byte)) != "b" {
		t.Fatalf("result of entry 7: %v, %v; want b", res, ok)
	}
	if _, ok := w.result(id, 9); ok {
		t.Fatal("a result for an index the write's entry is not at")
	}
	w.dropResult(id)
	w.dropResult(other)
	if n := w.waiting.Load(); n != 0 {
		t.Fatalf("%d waits left after dropping both", n)
	}
	restored := w.expectResult()
	if _, ok := w.result(restored, 12); ok {
		t.Fatal("a result for an entry never applied here")
	}
	w.dropResult(restored)

	ch := w.expectCommit(42)
	w.committed([]*raft.Log{entry(11, 41), entry(12, 42)})
	if c := <-ch; c != (commitPoint{12, 2}) {
		t.Fatalf("commit point %+v, want index 12 term 2", c)
	}
	w.dropCommit(42)
	if n := w.waiting.Load(); n != 0 {
		t.Fatalf("%d waits left", n)
	}
}

// TestApplyAtCommit_AFollowerFarBehindGetsTheLeadersResult: the leader
// answers a forwarded write at commit only when the entry is within half
// the trailing logs of the follower's applied index; a follower further
// behind (catching up, perhaps by a snapshot that would not give it the
// entry's result) gets the leader's own result, after the leader's apply.
func TestApplyAtCommit_AFollowerFarBehindGetsTheLeadersResult(t *testing.T) {
	t.Parallel()
	const trailing = 64
	c := mustNewCluster(t, 3, func(c *Config) { c.TrailingLogs = trailing })
	ctx := ctxTimeout(t, 20*time.Second)
	leader := c.Leader()
	mustApply(t, ctx, leader, setCmd("k", "v"))
	var wg sync.WaitGroup
	for i := range trailing/2 + 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := leader.Apply(ctx, setCmd(fmt.Sprintf("n%d", i), "x")); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	request := func(id, applied uint64, cmd []byte) []byte {
		req := binary.BigEndian.AppendUint64(nil, id)
		return append(binary.BigEndian.AppendUint64(req, applied), cmd...)
	}

	out, err := leader.applyAtCommit(ctx, request(1, 1, setCmd("k", "w")))
	if err != nil {
		t.Fatal(err)
	}
	resp, idx, term, here, err := decodeApplyResult(out, true)
	if err != nil || here || string(resp) != "v" || term == 0 {
		t.Fatalf("a follower at index 1, entry %d: result %q, here %v, term %d, %v; want the leader's result %q", idx, resp, here, term, err, "v")
	}

	out, err = leader.applyAtCommit(ctx, request(2, leader.fsm.AppliedIndex(), setCmd("k", "x")))
	if err != nil {
		t.Fatal(err)
	}
	if _, idx2, term, here, err := decodeApplyResult(out, true); err != nil || !here || idx2 <= idx || term == 0 {
		t.Fatalf("a follower close behind: entry %d, term %d, here %v, %v; want answered at commit after %d", idx2, term, here, err, idx)
	}
	if _, err := leader.applyAtCommit(ctx, []byte("short")); err == nil {
		t.Fatal("a malformed request was taken")
	}
}
