package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"edgectl/bench/benchkit"
	"edgectl/controller"
)

// bench is the node(s) under test and the HTTPS client that measures them.
type bench struct {
	cfg   *config
	dir   string // temp dir of the data dirs; removed at the end
	nodes []*controller.Node
	base  string // API URL of the first node
	http  *http.Client
	admin string // admin API session token
	pass  string
	// turns is the turn-taking of a child of a paired run (nil otherwise);
	// phases are the measured phases, in order, for its summary.
	turns  *turns
	phases []*stats
}

// newBench starts the first node in-process on loopback ports :0 and logs
// the default admin in over HTTPS.
func newBench(ctx context.Context, c *config) (*bench, error) {
	dir, err := os.MkdirTemp("", "edgectl-scalebench-")
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 12)
	_, _ = rand.Read(secret)
	b := &bench{cfg: c, dir: dir, pass: hex.EncodeToString(secret)}
	t0 := time.Now()
	n, err := controller.Start(ctx, controller.Config{DataDir: filepath.Join(dir, "node1"), APIAddr: "127.0.0.1:0",
		ClusterAddr: "127.0.0.1:0", AdminPassword: b.pass}, nil, io.Discard)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start node: %w", err)
	}
	b.nodes = append(b.nodes, n)
	b.base = n.APIURL()
	if b.http, err = newClient(n.DataDir(), c.clients); err != nil {
		b.close()
		return nil, err
	}
	if b.admin, err = b.login(ctx, b.base, mgmt, "admin", b.pass); err != nil {
		b.close()
		return nil, err
	}
	fmt.Printf("node %s started in-process in %s (data in %s)\n", b.base, time.Since(t0).Round(time.Millisecond), dir)
	return b, nil
}

// login authenticates with a password on api (mgmt or client) of base and
// returns the API session token.
func (b *bench) login(ctx context.Context, base, api, user, pass string) (string, error) {
	do := func(ctx context.Context, method, path, token string, body []byte) (int, []byte, error) {
		return b.do(ctx, base, method, path, token, body)
	}
	tok, err := benchkit.Login(ctx, do, api, user, pass)
	if err != nil {
		return "", fmt.Errorf("on %s: %w", api, err)
	}
	return tok, nil
}

// close stops every node, the joined ones first, and removes the data.
func (b *bench) close() {
	if b.http != nil {
		b.http.CloseIdleConnections()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	for i := len(b.nodes) - 1; i >= 0; i-- {
		if b.nodes[i] == nil { // stopped by -restart, which failed to start it again
			continue
		}
		if err := b.nodes[i].Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("node %d: %w", i+1, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench: shutdown:", err)
	}
	os.RemoveAll(b.dir)
}
