package cluster

import (
	"context"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// Internal RPC names (the "cluster." prefix is reserved for them).
const (
	// cluster.apply_commit: a forwarded write, answered once committed,
	// with the entry's index and term; the follower takes the result from
	// its own apply (atcommit.go). It is the only forwarding RPC since
	// v0.1.0, the oldest release a cluster may upgrade from: a v0.1.0
	// node sends it first and answers it.
	rpcApplyCommit  = "cluster.apply_commit"
	rpcBarrier      = "cluster.barrier"
	rpcAddVoter     = "cluster.add_voter"
	rpcAddNonvoter  = "cluster.add_nonvoter"
	rpcRemoveServer = "cluster.remove_server"
	rpcTransfer     = "cluster.transfer_leadership"
)

// Apply result kinds in a forwarded apply response: index:u64 term:u64
// kind:u8 payload.
const (
	resultNil   byte = 0
	resultBytes byte = 1
	resultError byte = 2 // the FSM returned an error; payload is its text
	resultHere  byte = 3 // committed, not yet applied on the leader: the follower's own apply gives the result
)

// Apply replicates cmd and returns the FSM's result for it and its log
// index, once this node's FSM has applied that index. On a follower the
// command is forwarded to the leader. Without a leader it waits up to
// Config.LeaderWait (bounded by ctx) and then fails with ErrNoLeader; a
// forward that hits a node which is no longer leader is retried within that
// same window. Errors where the command may or may not have been committed
// (raft.ErrLeadershipLost, a connection lost after sending) wrap
// ErrOutcomeUnknown and are not retried, because commands need not be
// idempotent. If the FSM's Apply
// returned an error, it comes back wrapped together with the index.
func (n *Node) Apply(ctx context.Context, cmd []byte) ([]byte, uint64, error) {
	if n.closed.Load() {
		return nil, 0, ErrShutdown
	}
	// Fast path: the leader proposes directly, no allocation beyond raft's.
	if n.raft.State() == raft.Leader {
		resp, idx, err := n.applyLocal(ctx, cmd)
		if err == nil || !retryable(err) {
			return resp, idx, err
		}
	}
	// The write's id, for the leader to put in its entry and this node's
	// FSM to note the result of that entry by (atcommit.go).
	id := n.waits.expectResult()
	defer n.waits.dropResult(id)
	req := binary.BigEndian.AppendUint64(make([]byte, 0, 16+len(cmd)), id)
	req = binary.BigEndian.AppendUint64(req, n.fsm.AppliedIndex())
	out, err := n.leaderCall(ctx, rpcApplyCommit, append(req, cmd...), false, func(ctx context.Context) ([]byte, error) {
		return n.applyLocalEncoded(ctx, cmd)
	})
	if err != nil {
		return nil, 0, err
	}
	resp, idx, term, here, err := decodeApplyResult(out)
	if idx == 0 {
		return nil, 0, err
	}
	if here {
		n.answeredAtCommit.Add(1)
	} else {
		n.answeredAfterApply.Add(1)
	}
	// Read-your-writes on a follower: wait for this node's FSM to apply the
	// entry (the leader's answer says it committed).
	if werr := n.awaitForwarded(ctx, idx, term); werr != nil {
		return nil, idx, fmt.Errorf("cluster: committed at index %d but not yet applied on this node: %w", idx, werr)
	}
	if here {
		res, applied := n.waits.result(id, idx)
		if !applied {
			// It came with a snapshot this node restored past the entry.
			return nil, idx, fmt.Errorf("cluster: committed at index %d, but this node restored a snapshot past it and did not see its result: %w", idx, ErrOutcomeUnknown)
		}
		resp, err = FSMResult(res)
	}
	return resp, idx, err
}

// applyLocal proposes on this node, which must be the leader.
func (n *Node) applyLocal(ctx context.Context, cmd []byte) ([]byte, uint64, error) {
	enqueue, err := enqueueTimeout(ctx)
	if err != nil {
		return nil, 0, err
	}
	return n.applied(ctx, n.raft.Apply(cmd, enqueue))
}

// enqueueTimeout is how long raft may take to accept a proposal: until
// ctx's deadline (0, no limit, without one).
func enqueueTimeout(ctx context.Context) (time.Duration, error) {
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left > 0 {
			return left, nil
		}
		return 0, context.DeadlineExceeded
	}
	return 0, nil
}

// applied waits for a proposal of this node's and returns the FSM's result
// and the entry's index.
func (n *Node) applied(ctx context.Context, f raft.ApplyFuture) ([]byte, uint64, error) {
	if err := f.Error(); err != nil {
		switch {
		case errors.Is(err, raft.ErrRaftShutdown):
			// The entry may have been committed before raft stopped.
			return nil, 0, fmt.Errorf("cluster: apply: %w: %w", ErrOutcomeUnknown, ErrShutdown)
		case errors.Is(err, raft.ErrLeadershipLost):
			return nil, 0, fmt.Errorf("cluster: apply: %w: %w", ErrOutcomeUnknown, err)
		}
		return nil, 0, mapRaftErr("apply", err)
	}
	idx := f.Index()
	resp, err := FSMResult(f.Response())
	// raft answers the future after the FSM's Apply returned, so this is
	// normally already true; checking keeps the FSM contract explicit.
	if n.fsm.AppliedIndex() < idx {
		if werr := n.fsm.WaitApplied(ctx, idx); werr != nil {
			return nil, idx, werr
		}
	}
	return resp, idx, err
}

// FSMResult is an FSM's result for a command (what its Apply returned) as
// Node.Apply returns it: the answer, or the domain error wrapped. A
// Proposer that applies commands to an FSM itself (the in-process test
// harnesses) hands results back through it too.
func FSMResult(r any) ([]byte, error) {
	switch r := r.(type) {
	case nil:
		return nil, nil
	case []byte:
		return r, nil
	case error:
		return nil, fmt.Errorf("cluster: fsm: %w", r)
	default:
		return nil, fmt.Errorf("cluster: fsm returned unsupported %T", r)
	}
}

// applyLocalEncoded proposes cmd on this node (the leader) and encodes the
// answer of a forwarded apply.
func (n *Node) applyLocalEncoded(ctx context.Context, cmd []byte) ([]byte, error) {
	resp, idx, err := n.applyLocal(ctx, cmd)
	return n.encodeApplied(resp, idx, err)
}

// applyAtCommit runs a cluster.apply_commit on this node (the leader):
// req is the follower's id for the write, the follower's applied index
// when it sent it, then the command. It answers as soon as the entry is
// committed (resultHere), or, when raft answers the proposal first (an
// error, say), with its own result. It also answers with its own result,
// after its own apply, when the follower is so far
// behind the entry that raft might bring it a snapshot instead of the
// entries (a node catching up), which would lose the result: more than
// half the trailing logs raft keeps after a snapshot. A follower closer
// than that gets the entries after its applied index as entries, whose
// results it notes.
func (n *Node) applyAtCommit(ctx context.Context, req []byte) ([]byte, error) {
	if len(req) < 16 {
		return nil, errors.New("cluster: malformed apply_commit request")
	}
	id, applied, cmd := binary.BigEndian.Uint64(req), binary.BigEndian.Uint64(req[8:]), req[16:]
	enqueue, err := enqueueTimeout(ctx)
	if err != nil {
		return nil, err
	}
	cw := commitWait{reply: replyOf(ctx), applied: applied, within: n.raft.ReloadableConfig().TrailingLogs / 2}
	commit := n.waits.expectCommit(id, cw)
	defer n.waits.dropCommit(id)
	f := n.raft.ApplyLog(raft.Log{Type: raft.LogCommand, Data: cmd, Extensions: forwardIDExtension(id)}, enqueue)
	// raft answers the proposal only after the FSM applied it, or with an
	// error; the commit point comes first.
	done := make(chan struct{})
	go func() {
		f.Error()
		close(done)
	}()
	select {
	case c := <-commit:
		switch {
		case c.answered:
			return nil, nil // sent at commit (forwardWaits.committed)
		case cw.atCommit(c.index):
			n.waits.sentByHandler.Add(1)
			return atCommitAnswer(c.index, c.term), nil
		}
		<-done
	case <-done:
	}
	resp, idx, err := n.applied(ctx, f)
	return n.encodeApplied(resp, idx, err)
}

// encodeApplied encodes the answer of a forwarded apply, with the entry's
// index and term.
func (n *Node) encodeApplied(resp []byte, idx uint64, err error) ([]byte, error) {
	if idx == 0 {
		return nil, err // not committed: travels as an error code
	}
	kind, payload := resultBytes, resp
	switch {
	case err != nil:
		kind, payload = resultError, []byte(err.Error())
	case resp == nil:
		kind = resultNil
	}
	out := make([]byte, 0, 17+len(payload))
	out = binary.BigEndian.AppendUint64(out, idx)
	// The entry is committed, so the leader's log keeps it as it is. 0
	// (never a real term) if it is gone already: the follower then waits
	// for raft.
	var l raft.Log
	var term uint64
	if n.logs.GetLog(idx, &l) == nil {
		term = l.Term
	}
	out = binary.BigEndian.AppendUint64(out, term)
	out = append(out, kind)
	return append(out, payload...), nil
}

// decodeApplyResult reads a forwarded apply's answer (encodeApplied,
// applyAtCommit); term is 0 when the leader did not know it, and here is
// true when the result is this node's to find (resultHere).
func decodeApplyResult(b []byte) (resp []byte, idx, term uint64, here bool, err error) {
	const head = 17
	if len(b) < head {
		return nil, 0, 0, false, errors.New("cluster: malformed apply response")
	}
	idx = binary.BigEndian.Uint64(b)
	term = binary.BigEndian.Uint64(b[8:])
	switch b[head-1] {
	case resultNil:
		return nil, idx, term, false, nil
	case resultBytes:
		return b[head:], idx, term, false, nil
	case resultError:
		return nil, idx, term, false, errors.New(string(b[head:]))
	case resultHere:
		if term != 0 {
			return nil, idx, term, true, nil
		}
	}
	return nil, 0, 0, false, fmt.Errorf("cluster: unknown apply result kind %d", b[head-1])
}

// leaderCall runs an operation on the leader: local() when this node leads,
// else the RPC name with body on the leader. Retryable failures (see
// retryable) are retried until Config.LeaderWait has passed since the
// start, or ctx ends. Idempotent operations (barrier, adding or removing a
// member) are also retried after ErrOutcomeUnknown.
func (n *Node) leaderCall(ctx context.Context, name string, body []byte, idempotent bool, local func(context.Context) ([]byte, error)) ([]byte, error) {
	deadline := time.Now().Add(n.cfg.LeaderWait)
	backoff := 5 * time.Millisecond
	var lastErr error
	for {
		if n.closed.Load() || n.raft.State() == raft.Shutdown {
			return nil, ErrShutdown
		}
		var out []byte
		var err error
		id, addr := n.Leader()
		switch {
		case n.raft.State() == raft.Leader:
			out, err = local(ctx)
		case id == "" || id == n.id:
			// No leader known, or raft still names us while stepping
			// down: wait for news.
			err = ErrNoLeader
		default:
			out, err = n.forward(ctx, id, addr, name, body)
		}
		if err == nil || !(retryable(err) || idempotent && errors.Is(err, ErrOutcomeUnknown) && ctx.Err() == nil) {
			return out, err
		}
		lastErr = err
		if err := n.waitLeaderChange(ctx, deadline, backoff); err != nil {
			if errors.Is(lastErr, ErrNoLeader) || !errors.Is(err, ErrNoLeader) {
				return nil, err
			}
			return nil, fmt.Errorf("%w (last error: %v)", err, lastErr)
		}
		backoff = min(2*backoff, 100*time.Millisecond)
	}
}

// forward calls the RPC name on the leader id at addr within the current
// forward epoch of that leader: when this node learns of another leader, or
// the leader has been silent for Config.ForwardStallTimeout, the call is
// abandoned at once instead of waiting for the leader to wake up. An
// abandoned call that had not left this node fails with a retryable error
// (leaderCall sends it to the new leader); one already written fails with
// ErrOutcomeUnknown, since the old leader may still commit it.
func (n *Node) forward(ctx context.Context, id, addr, name string, body []byte) ([]byte, error) {
	ep := n.forwardEpoch(id)
	cctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(ep.ctx, func() { cancel(context.Cause(ep.ctx)) })
	out, err := n.CallRPC(cctx, addr, name, body)
	stop()
	cancel(nil)
	if err != nil && ctx.Err() == nil && ep.ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", err, context.Cause(ep.ctx))
	}
	return out, err
}

// waitLeaderChange waits for a leader change notification, at most backoff,
// and fails with ErrNoLeader once deadline (or ctx) has passed.
func (n *Node) waitLeaderChange(ctx context.Context, deadline time.Time, backoff time.Duration) error {
	left := time.Until(deadline)
	if left <= 0 {
		return ErrNoLeader
	}
	t := time.NewTimer(min(left, backoff))
	defer t.Stop()
	select {
	case <-n.leaderSig.wait():
	case <-t.C:
	case <-n.ctx.Done():
		return ErrShutdown
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrNoLeader, ctx.Err())
	}
	return nil
}

// WaitForLeader blocks until this node knows a leader, or ctx ends (then it
// returns an error wrapping ErrNoLeader and the context's error).
func (n *Node) WaitForLeader(ctx context.Context) error {
	for {
		ch := n.leaderSig.wait()
		if id, _ := n.Leader(); id != "" {
			return nil
		}
		if n.closed.Load() {
			return ErrShutdown
		}
		// The poll interval only guards against a dropped observation
		// (raft drops them when the observer channel is full).
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: %w", ErrNoLeader, ctx.Err())
		}
		t.Stop()
	}
}

// WaitForApplied blocks until this node's FSM has applied index. Pass
// indexes from Apply or Barrier: raft entries that never reach the FSM
// (no-ops, configuration changes) do not advance FSM.AppliedIndex.
func (n *Node) WaitForApplied(ctx context.Context, index uint64) error {
	if n.fsm.AppliedIndex() >= index {
		return nil
	}
	return n.fsm.WaitApplied(ctx, index)
}

// Barrier makes a following read linearizable: when it returns, this node's
// FSM reflects every write committed before Barrier was called. The leader
// runs raft.Barrier (which also proves it still leads); a follower asks the
// leader to do so, gets back the leader's FSM index and waits for it.
func (n *Node) Barrier(ctx context.Context) error {
	out, err := n.leaderCall(ctx, rpcBarrier, nil, true, n.barrierLocal)
	if err != nil {
		return err
	}
	if len(out) != 8 {
		return errors.New("cluster: malformed barrier response")
	}
	return n.WaitForApplied(ctx, binary.BigEndian.Uint64(out))
}

// barrierLocal runs raft.Barrier on the leader and returns the FSM index
// that a reader must reach. That is the FSM's own index (the last command it
// applied), not raft's commit index, which may point at a no-op entry that
// the FSM never sees.
func (n *Node) barrierLocal(ctx context.Context) ([]byte, error) {
	if n.raft.State() != raft.Leader {
		return nil, ErrNotLeader
	}
	if err := n.raft.Barrier(timeoutOf(ctx)).Error(); err != nil {
		return nil, mapCommitErr("barrier", err)
	}
	return binary.BigEndian.AppendUint64(nil, n.fsm.AppliedIndex()), nil
}

// timeoutOf converts ctx's deadline into raft's enqueue timeout (0 = none).
func timeoutOf(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Until(dl), time.Millisecond)
	}
	return 0
}

// registerInternalRPCs installs the handlers that followers call on the
// leader. They never forward themselves (that could loop between nodes that
// disagree on the leader): a non-leader answers ErrNotLeader and the caller
// retries.
func (n *Node) registerInternalRPCs() {
	n.registerRPC(rpcApplyCommit, func(ctx context.Context, _ *x509.Certificate, req []byte) ([]byte, error) {
		if n.raft.State() != raft.Leader {
			return nil, ErrNotLeader
		}
		return n.applyAtCommit(ctx, req)
	})
	n.registerRPC(rpcBarrier, func(ctx context.Context, _ *x509.Certificate, _ []byte) ([]byte, error) {
		return n.barrierLocal(ctx)
	})
	n.registerRPC(rpcReadIndex, func(ctx context.Context, _ *x509.Certificate, _ []byte) ([]byte, error) {
		return n.readIndexLocal(ctx)
	})
	n.registerRPC(rpcConfirmTerm, n.confirmTermHandler)
	n.registerRPC(rpcAddVoter, n.membershipHandler(n.addVoterLocal))
	n.registerRPC(rpcAddNonvoter, n.membershipHandler(n.addNonvoterLocal))
	n.registerRPC(rpcRemoveServer, n.membershipHandler(n.removeServerLocal))
	n.registerRPC(rpcTransfer, n.membershipHandler(n.transferLocal))
}
