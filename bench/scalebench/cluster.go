package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"edgectl/bench/benchkit"
	"edgectl/controller"
)

// joinTimeout bounds how long a joining node may take to be a voter that
// applied the whole model (a snapshot of it, then the log).
const joinTimeout = 10 * time.Minute

// issue7Cluster joins two in-process nodes to the first (join token, then
// controller.Start with Join and JoinToken), waits until both applied the
// model, and measures posture responses with the clients spread over the
// three nodes: a follower forwards the write to the leader.
func (b *bench) issue7Cluster(ctx context.Context, r *report) error {
	fmt.Printf("\nIssue 7 on three nodes: joining two in-process nodes to the model's node\n")
	u, err := url.Parse(b.base)
	if err != nil {
		return err
	}
	start := time.Now()
	stop := b.profile("join")
	for k := 2; k <= 3; k++ {
		if err := b.join(ctx, k, u.Host); err != nil {
			stop()
			return fmt.Errorf("join node %d: %w", k, err)
		}
	}
	stop()
	r.joinTook = time.Since(start)
	fmt.Printf("  three voters, all caught up, %s after the first join token\n", r.joinTook.Round(time.Millisecond))

	bases := make([]string, len(b.nodes))
	for i, n := range b.nodes {
		bases[i] = n.APIURL()
	}
	body := postureBulk(r.model)
	for i, base := range bases { // each node answers, with the replicated API session
		if st, data, err := b.do(ctx, base, http.MethodPost, client+"/posture-response-bulk", r.postureTokens[i%len(r.postureTokens)], body); err != nil || st != http.StatusOK {
			return fmt.Errorf("posture bulk on node %d: status %d, %v: %.300s", i+1, st, err, data)
		}
	}
	r.posture3 = b.concurrent(ctx, "POST /edge/client/v1/posture-response-bulk (3 nodes)", b.cfg.clients, func(ctx context.Context, w, _ int) (int, []byte, error) {
		return b.send(ctx, bases[w%len(bases)], http.MethodPost, client+"/posture-response-bulk", r.postureTokens[w], body)
	})
	r.posture3Leader = b.concurrent(ctx, "POST /edge/client/v1/posture-response-bulk (3 nodes, all to leader)", b.cfg.clients, func(ctx context.Context, w, _ int) (int, []byte, error) {
		return b.send(ctx, bases[0], http.MethodPost, client+"/posture-response-bulk", r.postureTokens[w], body)
	})
	return nil
}

// join starts node k with a fresh join token and waits until the first
// node lists it as a voter and it applied everything the leader had.
func (b *bench) join(ctx context.Context, k int, leaderHost string) error {
	data, err := b.call(ctx, http.MethodPost, mgmt+"/cluster/join-tokens", b.admin, map[string]any{}, http.StatusCreated)
	if err != nil {
		return err
	}
	joinToken := benchkit.TokenOf(data)
	if joinToken == "" {
		return fmt.Errorf("join token: %.300s", data)
	}
	port, err := benchkit.FreePort()
	if err != nil {
		return err
	}
	t0 := time.Now()
	n, err := controller.Start(ctx, controller.Config{DataDir: filepath.Join(b.dir, fmt.Sprintf("node%d", k)), APIAddr: "127.0.0.1:0",
		ClusterAddr: fmt.Sprintf("127.0.0.1:%d", port), Join: leaderHost, JoinToken: joinToken}, nil, io.Discard)
	if err != nil {
		return err
	}
	b.nodes = append(b.nodes, n)
	leader := b.nodes[0].Raft
	want := leader.Stats().AppliedIndex
	wctx, cancel := context.WithTimeout(ctx, joinTimeout)
	defer cancel()
	for {
		voter := false
		if ms, err := leader.Members(); err == nil {
			for _, mb := range ms {
				voter = voter || (mb.ID == n.Raft.ID() && mb.IsVoter)
			}
		}
		if voter && n.Raft.Stats().AppliedIndex >= want {
			fmt.Printf("  node %d (%s) joined and caught up in %s\n", k, n.APIURL(), time.Since(t0).Round(time.Millisecond))
			return nil
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("node %d not caught up after %s (applied %d of %d)", k, joinTimeout, n.Raft.Stats().AppliedIndex, want)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
