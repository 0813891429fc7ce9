package controller

import (
	"bytes"
	"context"
	"time"

	"edgectl/fsm"
	"edgectl/store"
)

// registerCheckInterval is how often a node checks that the model still
// holds its controller record as it should be (a snapshot taken by an older
// binary drops the fields it does not know).
const registerCheckInterval = 5 * time.Second

// registerController keeps this node's record (name, API URL, cluster
// address, release and command version) in the model, in the background:
// in a cluster that is still electing a leader it waits for one, and it
// writes the record again whenever the model's copy differs.
func (n *Node) registerController() {
	rec := n.controllerRecord()
	ctx, cancel := context.WithCancel(context.Background())
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer cancel()
		wait := time.Duration(0)
		for attempt := 0; ; {
			select {
			case <-n.stopping:
				return
			case <-time.After(wait):
			}
			wait = registerCheckInterval
			if !n.needsRegister(rec) {
				attempt = 0
				continue
			}
			wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := n.Writer.Do(wctx, fsm.CmdControllerRegister, rec)
			wcancel()
			if err != nil {
				attempt++
				wait = time.Duration(min(attempt, 10)) * 500 * time.Millisecond
			}
		}
	}()
}

// controllerRecord is this node's controller record as it should be. A
// joining node sends its fields with its request to be added (completeJoin),
// and the member that adds it writes them first.
func (n *Node) controllerRecord() *store.Controller {
	rec := &store.Controller{Base: store.Base{ID: n.Raft.ID(), CreatedAt: time.Now().UTC()}, Named: store.Named{Name: n.Raft.ID()},
		APIURL: n.APIURL(), ClusterAddr: n.Raft.Addr(), Version: n.cfg.Version, CommandVersion: fsm.CommandVersion, JWK: n.API.JWK()}
	rec.UpdatedAt = rec.CreatedAt
	return rec
}

// needsRegister: this node is a member and the model's record of it is
// missing or differs from rec.
func (n *Node) needsRegister(rec *store.Controller) bool {
	cur := n.Store.Read().Controller(rec.ID)
	if cur != nil && cur.APIURL == rec.APIURL && cur.ClusterAddr == rec.ClusterAddr &&
		cur.Version == rec.Version && cur.CommandVersion == rec.CommandVersion && bytes.Equal(cur.JWK, rec.JWK) {
		return false
	}
	members, err := n.Raft.Members()
	if err != nil {
		return false
	}
	for _, m := range members {
		if m.ID == rec.ID {
			return true
		}
	}
	return false // removed, or not yet added: the record would outlive the membership
}

// commandGate refuses a command that some member of the cluster cannot
// apply, by the command versions the members published (gateCommand).
func (n *Node) commandGate(t fsm.CommandType) error {
	members, err := n.Raft.Members()
	if err != nil {
		return err
	}
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.ID
	}
	return gateCommand(t, n.Raft.ID(), ids, n.memberRecord)
}

// gateCommand refuses t with a *fsm.VersionError naming the first member
// (other than self, this binary, which applies what it proposes) whose
// controller record, as record gives it, shows a command version below
// t's. A member without a record (one that has not written it yet) counts
// as version 1: it is refused every command newer than that until it does.
func gateCommand(t fsm.CommandType, self string, members []string, record func(id string) *store.Controller) error {
	need := fsm.VersionOf(t)
	for _, id := range members {
		if id == self {
			continue
		}
		release, cv := "", 1
		if c := record(id); c != nil {
			release, cv = c.Version, max(c.CommandVersion, 1)
		}
		if cv < need {
			return &fsm.VersionError{Command: t, Need: need, NodeID: id, NodeVersion: release, NodeCommandVersion: cv}
		}
	}
	return nil
}

// recordWait is how long the gate waits for the controller record of a
// member that has none: a node that just joined writes its record as soon
// as it runs, and until then its command version is unknown.
const recordWait = 5 * time.Second

// memberRecord is the controller record of member id, waiting up to
// recordWait for a member that has not written one yet (nil after that).
func (n *Node) memberRecord(id string) *store.Controller {
	deadline := time.Now().Add(recordWait)
	for {
		if c := n.Store.Read().Controller(id); c != nil || time.Now().After(deadline) {
			return c
		}
		select {
		case <-n.stopping:
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}
