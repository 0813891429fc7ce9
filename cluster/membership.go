package cluster

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// Member is one server of the raft configuration.
type Member struct {
	ID       string
	Address  string
	IsVoter  bool
	IsLeader bool
}

// Members lists the servers of the latest raft configuration known to this
// node (on a follower it may lag the leader's by a heartbeat).
func (n *Node) Members() ([]Member, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, mapRaftErr("members", err)
	}
	leaderID, _ := n.Leader()
	servers := f.Configuration().Servers
	out := make([]Member, 0, len(servers))
	for _, s := range servers {
		out = append(out, Member{
			ID:       string(s.ID),
			Address:  string(s.Address),
			IsVoter:  s.Suffrage == raft.Voter,
			IsLeader: string(s.ID) == leaderID,
		})
	}
	return out, nil
}

// AddVoter adds (or updates the address of) a voting member. The new node
// must already run New with its own data dir and must not be bootstrapped;
// the leader streams it a snapshot and the log. Runs on the leader; a
// follower forwards it.
func (n *Node) AddVoter(ctx context.Context, id, addr string) error {
	return n.membershipCall(ctx, rpcAddVoter, memberReq{ID: id, Addr: addr}, n.addVoterLocal)
}

// AddNonvoter adds a member that replicates the log but does not vote (for
// example a node catching up before it is promoted with AddVoter).
func (n *Node) AddNonvoter(ctx context.Context, id, addr string) error {
	return n.membershipCall(ctx, rpcAddNonvoter, memberReq{ID: id, Addr: addr}, n.addNonvoterLocal)
}

// RemoveServer removes a member. Removing the leader makes it step down; a
// removed node shuts its raft down (its Apply then fails with ErrShutdown).
func (n *Node) RemoveServer(ctx context.Context, id string) error {
	return n.membershipCall(ctx, rpcRemoveServer, memberReq{ID: id}, n.removeServerLocal)
}

// TransferLeadership asks the leader to hand leadership to the voter toID,
// or to the most up-to-date voter if toID is "". It returns once the transfer
// finished or failed.
func (n *Node) TransferLeadership(ctx context.Context, toID string) error {
	before, _ := n.Leader()
	err := n.membershipCall(ctx, rpcTransfer, memberReq{ID: toID}, n.transferLocal)
	if err == nil || !errors.Is(err, ErrOutcomeUnknown) {
		return err
	}
	// A forwarded transfer is cut off when this node learns of the new
	// leader, which is what a transfer that worked looks like from here.
	// Judge it by its effect: leadership moved (to toID when one was named).
	wctx, cancel := context.WithTimeout(ctx, n.cfg.LeaderWait)
	defer cancel()
	for {
		if now, _ := n.Leader(); now != "" && now != before && (toID == "" || now == toID) {
			return nil
		}
		ch := n.leaderSig.wait()
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ch:
		case <-t.C:
		case <-wctx.Done():
			t.Stop()
			return err
		}
		t.Stop()
	}
}

// memberReq is the JSON body of the membership RPCs.
type memberReq struct {
	ID   string `json:"id"`
	Addr string `json:"addr,omitempty"`
}

func (n *Node) membershipCall(ctx context.Context, name string, req memberReq, local func(context.Context, memberReq) error) error {
	if name != rpcTransfer && req.ID == "" {
		return errors.New("cluster: member id is required")
	}
	if (name == rpcAddVoter || name == rpcAddNonvoter) && req.Addr == "" {
		return errors.New("cluster: member address is required")
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	// Adding or removing a member twice has the same effect as once, so
	// these are retried after an ambiguous failure; a transfer is not.
	_, err = n.leaderCall(ctx, name, body, name != rpcTransfer, func(ctx context.Context) ([]byte, error) {
		return nil, local(ctx, req)
	})
	return err
}

// membershipHandler adapts a leader-local membership operation to an RPC.
func (n *Node) membershipHandler(local func(context.Context, memberReq) error) RPCHandler {
	return func(ctx context.Context, _ *x509.Certificate, body []byte) ([]byte, error) {
		var req memberReq
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("cluster: bad membership request: %w", err)
		}
		if n.raft.State() != raft.Leader {
			return nil, ErrNotLeader
		}
		return nil, local(ctx, req)
	}
}

func (n *Node) addVoterLocal(ctx context.Context, r memberReq) error {
	f := n.raft.AddVoter(raft.ServerID(r.ID), raft.ServerAddress(r.Addr), 0, timeoutOf(ctx))
	return mapCommitErr("add voter "+r.ID, f.Error())
}

func (n *Node) addNonvoterLocal(ctx context.Context, r memberReq) error {
	f := n.raft.AddNonvoter(raft.ServerID(r.ID), raft.ServerAddress(r.Addr), 0, timeoutOf(ctx))
	return mapCommitErr("add nonvoter "+r.ID, f.Error())
}

func (n *Node) removeServerLocal(ctx context.Context, r memberReq) error {
	f := n.raft.RemoveServer(raft.ServerID(r.ID), 0, timeoutOf(ctx))
	return mapCommitErr("remove server "+r.ID, f.Error())
}

// mapCommitErr marks an entry (configuration change, barrier) whose leader
// lost leadership mid-way as ErrOutcomeUnknown: it may still commit.
func mapCommitErr(op string, err error) error {
	if errors.Is(err, raft.ErrLeadershipLost) {
		return fmt.Errorf("cluster: %s: %w: %w", op, ErrOutcomeUnknown, err)
	}
	return mapRaftErr(op, err)
}

func (n *Node) transferLocal(_ context.Context, r memberReq) error {
	err := n.transferLocalRaw(r)
	if errors.Is(err, raft.ErrLeadershipTransferInProgress) {
		// Not retryable here: retrying after the running transfer finished
		// would move leadership a second time.
		return fmt.Errorf("cluster: transfer leadership: %v", err)
	}
	return err
}

func (n *Node) transferLocalRaw(r memberReq) error {
	if r.ID == "" {
		return mapRaftErr("transfer leadership", n.raft.LeadershipTransfer().Error())
	}
	if r.ID == n.id {
		return nil // already the leader (this runs on the leader only)
	}
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return mapRaftErr("transfer leadership", err)
	}
	for _, s := range f.Configuration().Servers {
		if string(s.ID) == r.ID {
			if s.Suffrage != raft.Voter {
				return fmt.Errorf("cluster: transfer leadership: %s is not a voter", r.ID)
			}
			return mapRaftErr("transfer leadership to "+r.ID, n.raft.LeadershipTransferToServer(s.ID, s.Address).Error())
		}
	}
	return fmt.Errorf("cluster: transfer leadership: unknown member %q", r.ID)
}
