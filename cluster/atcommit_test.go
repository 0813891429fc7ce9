package cluster

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
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

	ch := w.expectCommit(42, commitWait{})
	w.committed([]*raft.Log{entry(11, 41), entry(12, 42)})
	if c := <-ch; c != (commitPoint{index: 12, term: 2}) {
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
	resp, idx, term, here, err := decodeApplyResult(out)
	if err != nil || here || string(resp) != "v" || term == 0 {
		t.Fatalf("a follower at index 1, entry %d: result %q, here %v, term %d, %v; want the leader's result %q", idx, resp, here, term, err, "v")
	}

	out, err = leader.applyAtCommit(ctx, request(2, leader.fsm.AppliedIndex(), setCmd("k", "x")))
	if err != nil {
		t.Fatal(err)
	}
	if _, idx2, term, here, err := decodeApplyResult(out); err != nil || !here || idx2 <= idx || term == 0 {
		t.Fatalf("a follower close behind: entry %d, term %d, here %v, %v; want answered at commit after %d", idx2, term, here, err, idx)
	}
	if _, err := leader.applyAtCommit(ctx, []byte("short")); err == nil {
		t.Fatal("a malformed request was taken")
	}
}

// TestForwardWaits_AnswersSentWithTheCommitWhenTheyCannotWait: raft's
// apply goroutine sends the answers at commit of a batch on their
// connection itself, one flush, and tells their handlers so; it leaves an
// answer to its handler (which sends it, or waits for the leader's apply)
// when the follower is too far behind for an answer at commit, when
// another goroutine is writing on the connection, when the node is frozen,
// or when the socket holds more than nowQueueMax bytes its peer has not
// acknowledged: a write then could wait on a peer that stopped reading.
func TestForwardWaits_AnswersSentWithTheCommitWhenTheyCannotWait(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	clientTCP, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer clientTCP.Close()
	serverTCP := <-accepted
	defer serverTCP.Close()
	pki := clusterPKI(t)
	var gate freezeGate
	server := tls.Server(newGatedConn(serverTCP, &gate), pki.tlsConfig(t, "leader"))
	client := tls.Client(clientTCP, func() *tls.Config { c := pki.tlsConfig(t, "follower"); c.ServerName = "127.0.0.1"; return c }())
	handshake := make(chan error, 1)
	go func() { handshake <- client.Handshake() }()
	if err := server.Handshake(); err != nil || <-handshake != nil {
		t.Fatalf("handshake: %v", err)
	}
	fw := newFrameWriter(server)
	br := bufio.NewReader(client)

	var w forwardWaits
	entry := func(index, id uint64) *raft.Log {
		return &raft.Log{Index: index, Term: 3, Type: raft.LogCommand, Extensions: forwardIDExtension(id)}
	}
	expect := func(id, applied uint64) (*rpcReply, <-chan commitPoint) {
		r := &rpcReply{w: fw, id: id + 1000}
		return r, w.expectCommit(id, commitWait{reply: r, applied: applied, within: 8})
	}

	// Both close enough: one frame each, sent before the handlers know.
	r1, ch1 := expect(1, 10)
	r2, ch2 := expect(2, 10)
	far, chFar := expect(3, 1) // entry 13 is 12 past its applied index
	w.committed([]*raft.Log{entry(11, 1), entry(12, 2), entry(13, 3)})
	for _, c := range []struct {
		r   *rpcReply
		ch  <-chan commitPoint
		idx uint64
	}{{r1, ch1, 11}, {r2, ch2, 12}} {
		if got := <-c.ch; got != (commitPoint{index: c.idx, term: 3, answered: true}) || !c.r.sent.Load() {
			t.Fatalf("entry %d: %+v, sent %v; want answered with the commit", c.idx, got, c.r.sent.Load())
		}
		_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
		f, err := readFrame(br)
		if err != nil {
			t.Fatalf("entry %d: reading its answer: %v", c.idx, err)
		}
		if f[0] != frameResponse || binary.BigEndian.Uint64(f[1:9]) != c.r.id || f[9] != codeOK || !bytes.Equal(f[10:], atCommitAnswer(c.idx, 3)) {
			t.Fatalf("entry %d: answer frame %x", c.idx, f)
		}
	}
	if got := <-chFar; got != (commitPoint{index: 13, term: 3}) || far.sent.Load() {
		t.Fatalf("a follower far behind: %+v, sent %v; want its handler to wait for the apply", got, far.sent.Load())
	}

	// handled checks that the answer of the write with the id was left to
	// its handler, with nothing written.
	handled := func(why string, id, index uint64) {
		t.Helper()
		r, ch := expect(id, index-1)
		w.committed([]*raft.Log{entry(index, id)})
		if got := <-ch; got != (commitPoint{index: index, term: 3}) || r.sent.Load() || fw.bw.Buffered() != 0 {
			t.Fatalf("%s: %+v, sent %v, %d bytes buffered; want the answer left to the handler", why, got, r.sent.Load(), fw.bw.Buffered())
		}
	}
	fw.mu.Lock()
	handled("another writer on the connection", 4, 14)
	fw.mu.Unlock()
	gate.set(true)
	handled("the node frozen", 5, 15)
	gate.set(false)

	// The follower stops reading; bytes under the TLS stream fill its
	// socket's buffer and then stay unacknowledged in the leader's.
	_ = clientTCP.(*net.TCPConn).SetReadBuffer(4 << 10)
	go func() {
		junk := make([]byte, 64<<10)
		for {
			_ = serverTCP.SetWriteDeadline(time.Now().Add(20 * time.Second))
			if _, err := serverTCP.Write(junk); err != nil {
				return
			}
		}
	}()
	testPoll(t, func() bool { q, ok := sendQueued(serverTCP); return ok && q > nowQueueMax }, 10*time.Second)
	handled("a peer that does not acknowledge", 6, 16)

	if n := w.waiting.Load(); n != 0 {
		t.Errorf("%d waits left", n)
	}
	if got := w.sentWithCommit.Load(); got != 2 {
		t.Errorf("%d answers counted as sent with the commit, want 2", got)
	}
}
