package controller

import (
	"context"
	"crypto/x509"
	"encoding/binary"
	"sync"
	"time"
)

// rpcStatus is the cluster RPC a node answers with its applied index.
const rpcStatus = "edgectl.status"

// peerProbeInterval is how often each node asks the others for their
// status. With the probe's timeout of twice this, /controllers shows a
// member that stopped answering as offline within 1.5 s (2 s promised).
const peerProbeInterval = 500 * time.Millisecond

// peerStatus is what this node last learned of another member: whether it
// answered the last probe, and the applied index of its last answer (kept
// when it stops answering: the last index known of it, never a made-up 0).
type peerStatus struct {
	online   bool
	applied  uint64
	answered bool // it has answered once since this node started
}

// peers probes the other members over the cluster port, so /controllers can
// tell which are online and how far each has applied.
type peers struct {
	mu     sync.Mutex
	status map[string]peerStatus
}

func (n *Node) startPeerProbe(interval time.Duration) {
	n.Raft.RegisterRPC(rpcStatus, func(context.Context, *x509.Certificate, []byte) ([]byte, error) {
		return binary.BigEndian.AppendUint64(nil, n.FSM.AppliedIndex()), nil
	})
	n.every(interval, func() { n.probePeers(2 * interval) })
}

// every runs fn every interval, in a goroutine of the node, until the node
// stops.
func (n *Node) every(interval time.Duration, fn func()) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-n.stopping:
				return
			case <-t.C:
			}
			fn()
		}
	}()
}

func (n *Node) probePeers(timeout time.Duration) {
	_ = n.eachPeer(func(id, addr string) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		out, err := n.Raft.CallRPC(ctx, addr, rpcStatus, nil)
		n.peers.mu.Lock()
		defer n.peers.mu.Unlock()
		st := n.peers.status[id]
		st.online = err == nil && len(out) == 8
		if st.online {
			st.applied, st.answered = binary.BigEndian.Uint64(out), true
		}
		n.peers.status[id] = st
	})
}

// eachPeer calls fn for every other member at once, and waits for them.
func (n *Node) eachPeer(fn func(id, addr string)) error {
	members, err := n.Raft.Members()
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, m := range members {
		if m.ID != n.Raft.ID() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fn(m.ID, m.Address)
			}()
		}
	}
	wg.Wait()
	return nil
}

// PeerStatus reports whether member id answered the last probe, and the
// applied index of its last answer; known is false when it has not answered
// since this node started (its index is then not known at all).
func (n *Node) PeerStatus(id string) (online bool, applied uint64, known bool) {
	if id == n.Raft.ID() {
		return true, n.FSM.AppliedIndex(), true
	}
	if n.peers == nil {
		return false, 0, false
	}
	n.peers.mu.Lock()
	defer n.peers.mu.Unlock()
	st := n.peers.status[id]
	return st.online, st.applied, st.answered
}
