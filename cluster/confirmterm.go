package cluster

import (
	"context"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/raft"
)

// The leader's proof, for a read index, that it still leads (readindex.go).
//
// raft's VerifyLeader is not such a proof. It counts every successful
// AppendEntries answer that its replication goroutines read after the call,
// including answers to requests sent before it: a leader paused (SIGSTOP)
// with a heartbeat's answer in its socket, while the others elected a new
// leader and took writes, reads that old answer when it resumes, counts it
// as a follower's vote, and answers a read from its own stale state. Its
// lease check is fed by the same answers. (hashicorp/raft 1.7.3,
// replication.go: notifyAll(true) for any successful answer; issue 46.)
//
// So the leader asks the voters itself, over the cluster port, in a round
// that starts after the read arrived: each answers its current term. A
// voter whose term is not above the leader's has voted in no later term
// when it answers; with a quorum of such answers (the leader's own
// included) no later leader can have been elected before the round began,
// so every write acknowledged before the read began is at or below the
// leader's commit index taken on arrival. Concurrent reads share a round;
// a read only joins a round that has not started yet.

// rpcConfirmTerm asks a member for its current term.
const rpcConfirmTerm = "cluster.confirm_term"

// errNewerTerm: a voter is in a later term than the asking leader's.
var errNewerTerm = errors.New("a member is in a later term")

// termConfirmer runs the rounds one at a time.
type termConfirmer struct {
	mu      sync.Mutex
	next    *confirmRound // the round new callers join; it starts when the running one ends
	running bool
}

type confirmRound struct {
	done chan struct{}
	term uint64 // the term the round confirmed (or failed to)
	err  error
}

// confirmTerm returns nil once a quorum of voters was, after this call
// began, in no term later than term; this node must lead in term.
func (n *Node) confirmTerm(ctx context.Context, term uint64) error {
	c := &n.confirmer
	c.mu.Lock()
	r := c.next
	if r == nil {
		r = &confirmRound{done: make(chan struct{})}
		c.next = r
	}
	if !c.running {
		c.running = true
		go n.runConfirmRounds()
	}
	c.mu.Unlock()
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	switch {
	case r.err != nil:
		return r.err
	case r.term != term:
		return fmt.Errorf("cluster: read index: %w (the term changed)", ErrNotLeader)
	}
	return nil
}

// runConfirmRounds runs the waiting rounds until none is left.
func (n *Node) runConfirmRounds() {
	c := &n.confirmer
	for {
		c.mu.Lock()
		r := c.next
		c.next = nil
		if r == nil {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		r.term = n.raft.CurrentTerm()
		r.err = n.confirmRound(r.term)
		close(r.done)
	}
}

// confirmRound asks every other voter for its term and waits for a quorum
// at or below term, at most an election timeout: a leader that cannot hear
// from a quorum that long is about to be replaced anyway.
func (n *Node) confirmRound(term uint64) error {
	if n.raft.State() != raft.Leader {
		return ErrNotLeader
	}
	var peers []raft.Server
	votes, voters := 0, 0
	for _, s := range n.raft.GetConfiguration().Configuration().Servers {
		if s.Suffrage != raft.Voter {
			continue
		}
		voters++
		if string(s.ID) == n.id {
			votes++
		} else {
			peers = append(peers, s)
		}
	}
	quorum := voters/2 + 1
	if votes >= quorum {
		return nil
	}
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.ElectionTimeout)
	defer cancel()
	req := binary.BigEndian.AppendUint64(nil, term)
	answers := make(chan error, len(peers))
	for _, p := range peers {
		go func() {
			out, err := n.CallRPC(ctx, string(p.Address), rpcConfirmTerm, req)
			switch {
			case err != nil:
			case len(out) != 8:
				err = errors.New("cluster: malformed confirm_term answer")
			case binary.BigEndian.Uint64(out) > term:
				err = errNewerTerm
			}
			answers <- err
		}()
	}
	unknown := 0
	var lastErr error
	for range peers {
		var err error
		select {
		case err = <-answers:
		case <-ctx.Done(): // a call may be stuck in a write to a peer that reads nothing
			err = ctx.Err()
		}
		switch {
		case err == nil:
			votes++
			if votes >= quorum {
				return nil
			}
			continue
		case errors.Is(err, errNewerTerm):
			return fmt.Errorf("cluster: read index: %w (%v)", ErrNotLeader, err)
		case errors.Is(err, ErrUnknownRPC):
			unknown++
		}
		lastErr = err
	}
	if unknown > 0 && votes+unknown >= quorum {
		// Members of an older release, mid-upgrade: their heartbeat
		// answers are the proof they can give.
		if err := n.raft.VerifyLeader().Error(); err != nil {
			return mapCommitErr("read index", err)
		}
		return nil
	}
	return fmt.Errorf("cluster: read index: %w (no quorum confirmed term %d within %s: %v)", ErrNotLeader, term, n.cfg.ElectionTimeout, lastErr)
}

// confirmTermHandler answers this node's current term.
func (n *Node) confirmTermHandler(_ context.Context, _ *x509.Certificate, _ []byte) ([]byte, error) {
	return binary.BigEndian.AppendUint64(nil, n.raft.CurrentTerm()), nil
}
