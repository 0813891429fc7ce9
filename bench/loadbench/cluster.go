package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"edgectl/bench/benchkit"
)

// The -cluster mode: a one-node figure, then a three-node cluster on
// loopback (joined with join tokens, as an operator would):
//
//   - identity creates/s with -clients clients, on one node and then spread
//     evenly over the three nodes;
//   - failover time over -trials trials: the leader is SIGKILLed and a
//     surviving node is sent creates back to back until one answers 201;
//     the time from the kill to that 201 is one trial. The killed node is
//     restarted and the cluster made whole again before the next trial.

// member is one node of the benchmark cluster.
type member struct {
	*node
	dataDir string
	args    []string // the run arguments, for a restart
	conns   int
}

func runCluster(bin string, duration time.Duration, clients, trials int) (err error) {
	if bin, err = benchkit.Binary(bin); err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	rep := &clusterReport{clients: clients, duration: duration}

	// One node, for comparison on the same machine at the same moment.
	one, err := startNode(ctx, bin, max(clients, 4))
	if err != nil {
		return err
	}
	tok, err := one.login(ctx)
	if err == nil {
		rep.rate1, err = createPhaseOn(ctx, []*node{one}, tok, "one-", clients, duration)
	}
	if serr := one.stop(); serr != nil {
		err = errors.Join(err, serr)
	}
	os.RemoveAll(one.dir)
	if err != nil {
		return err
	}
	fmt.Printf("one node: identity creates/s, %d clients: %.0f (%d in %s, %d errors%s)\n",
		clients, rep.rate1.perSec(), rep.rate1.ok, rep.rate1.elapsed.Round(time.Millisecond), rep.rate1.errs, rep.rate1.errDetail())

	root, err := os.MkdirTemp("", "edgectl-loadbench-cluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	var members []*member
	defer func() {
		for _, m := range members {
			if serr := m.stop(); serr != nil && !strings.Contains(serr.Error(), "exited early") {
				err = errors.Join(err, serr)
			}
		}
		if err != nil {
			for _, m := range members {
				fmt.Fprintf(os.Stderr, "---- %s log (last lines) ----\n%s\n", m.dataDir, tail(m.log.String(), 20))
			}
		}
	}()
	pass := one.pass
	for i := range 3 {
		m, err := startMember(ctx, bin, filepath.Join(root, fmt.Sprintf("n%d", i+1)), pass, members, max(clients, 4))
		if err != nil {
			return err
		}
		members = append(members, m)
	}
	if tok, err = members[0].login(ctx); err != nil {
		return err
	}
	if _, err := waitLeader(ctx, members, tok); err != nil {
		return err
	}
	fmt.Printf("three nodes joined: %s, %s, %s\n", members[0].base, members[1].base, members[2].base)

	nodes := []*node{members[0].node, members[1].node, members[2].node}
	rep.rate3, err = createPhaseOn(ctx, nodes, tok, "three-", clients, duration)
	if err != nil {
		return err
	}
	fmt.Printf("three nodes: identity creates/s, %d clients over 3 nodes: %.0f (%d in %s, %d errors%s)\n",
		clients, rep.rate3.perSec(), rep.rate3.ok, rep.rate3.elapsed.Round(time.Millisecond), rep.rate3.errs, rep.rate3.errDetail())

	if rep.reads, err = readLatencies(ctx, members, tok); err != nil {
		return err
	}
	rep.pauseGaps, err = runTrials(trials, "pause", "paused leader trial %d: longest window without an acknowledged write %s", func(trial int) (time.Duration, error) {
		return pauseTrial(ctx, members, tok, clients, trial)
	})
	if err != nil {
		return err
	}
	rep.failovers, err = runTrials(trials, "failover", "failover trial %d: %s", func(trial int) (time.Duration, error) {
		return failoverTrial(ctx, bin, members, tok, trial)
	})
	if err != nil {
		return err
	}
	rep.print(os.Stdout)
	return nil
}

// runTrials runs n trials of what one after another, printing each one's
// figure with format (the trial's number, the figure); the first failure
// ends them.
func runTrials(n int, what, format string, run func(trial int) (time.Duration, error)) ([]time.Duration, error) {
	var out []time.Duration
	for trial := range n {
		d, err := run(trial)
		if err != nil {
			return nil, fmt.Errorf("%s trial %d: %w", what, trial+1, err)
		}
		out = append(out, d)
		fmt.Printf(format+"\n", trial+1, d.Round(time.Millisecond))
	}
	return out, nil
}

// startMember starts a node on dataDir: the first one bootstraps, the others
// join through the first with a token from its admin socket.
func startMember(ctx context.Context, bin, dataDir, pass string, others []*member, conns int) (*member, error) {
	apiPort, err := benchkit.FreePorts(2) // the API's and, one up, the cluster's
	if err != nil {
		return nil, err
	}
	clusterPort := apiPort + 1
	args := []string{"run", "--data-dir", dataDir, "--api-addr", fmt.Sprintf("127.0.0.1:%d", apiPort),
		"--cluster-addr", fmt.Sprintf("127.0.0.1:%d", clusterPort), "--admin-password", pass, "--log-level", "warn"}
	if len(others) > 0 {
		out, err := exec.CommandContext(ctx, bin, "cluster", "join-token", "--data-dir", others[0].dataDir).Output()
		if err != nil {
			return nil, fmt.Errorf("edgectl cluster join-token: %w", err)
		}
		args = append(args, "--join", strings.TrimPrefix(others[0].base, "https://"), "--join-token", strings.TrimSpace(string(out)))
	}
	m := &member{dataDir: dataDir, args: args, conns: conns}
	if m.node, err = launch(ctx, bin, m, pass); err != nil {
		return nil, err
	}
	return m, nil
}

// launch runs the member's command and waits until /version answers over
// TLS verified with the node's CA bundle.
func launch(ctx context.Context, bin string, m *member, pass string) (*node, error) {
	var apiAddr string
	for i, a := range m.args {
		if a == "--api-addr" {
			apiAddr = m.args[i+1]
		}
	}
	n := &node{dir: m.dataDir, base: "https://" + apiAddr, log: &benchkit.SyncBuffer{}, done: make(chan struct{}), pass: pass}
	n.cmd = exec.Command(bin, m.args...)
	n.cmd.Stdout, n.cmd.Stderr = n.log, n.log
	start := time.Now()
	if err := n.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { n.waitErr = n.cmd.Wait(); close(n.done) }()
	if err := n.waitReady(ctx, m.dataDir, m.conns, start, 60*time.Second); err != nil {
		_ = n.cmd.Process.Kill()
		return nil, fmt.Errorf("%w\n%s", err, tail(n.log.String(), 20))
	}
	return n, nil
}

// waitLeader waits until every running member lists three voters and names
// the same leader, and returns the leader's index in members.
func waitLeader(ctx context.Context, members []*member, tok string) (int, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		idx, err := agreedLeader(ctx, members, tok)
		if err == nil {
			return idx, nil
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("no agreed leader after 30s: %w", err)
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

func agreedLeader(ctx context.Context, members []*member, tok string) (int, error) {
	leader := ""
	for _, m := range members {
		st, data, err := m.do(ctx, http.MethodGet, mgmt+"/cluster/members", tok, nil)
		if err != nil || st != http.StatusOK {
			return -1, fmt.Errorf("%s: %d %v", m.base, st, err)
		}
		var out struct {
			Data []struct {
				ID       string `json:"id"`
				IsLeader bool   `json:"isLeader"`
			} `json:"data"`
		}
		if err := json.Unmarshal(data, &out); err != nil || len(out.Data) != len(members) {
			return -1, fmt.Errorf("%s lists %d members", m.base, len(out.Data))
		}
		l := ""
		for _, d := range out.Data {
			if d.IsLeader {
				l = d.ID
			}
		}
		if l == "" || (leader != "" && l != leader) {
			return -1, fmt.Errorf("%s names leader %q, another %q", m.base, l, leader)
		}
		leader = l
	}
	for i, m := range members {
		if nodeID(m.dataDir) == leader {
			return i, nil
		}
	}
	return -1, fmt.Errorf("the leader %s is none of the members", leader)
}

// nodeID reads the id a node keeps in its data dir.
func nodeID(dataDir string) string {
	raw, _ := os.ReadFile(filepath.Join(dataDir, "node.json"))
	var ni struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &ni)
	return ni.ID
}

// failoverTrial kills the leader, times the first successful create through
// a surviving node, then restarts the killed node and waits for the cluster
// to be whole again.
func failoverTrial(ctx context.Context, bin string, members []*member, tok string, trial int) (time.Duration, error) {
	li, err := waitLeader(ctx, members, tok)
	if err != nil {
		return 0, err
	}
	survivor := members[(li+1+trial%2)%3]
	victim := members[li]
	_ = victim.cmd.Process.Kill()
	<-victim.done
	killed := time.Now()
	var d time.Duration
	for i := 0; ; i++ {
		st, err := survivor.createIdentity(ctx, tok, fmt.Sprintf("failover-%d-%04d", trial, i), false)
		if err == nil && st == http.StatusCreated {
			d = time.Since(killed)
			break
		}
		if time.Since(killed) > time.Minute || ctx.Err() != nil {
			return 0, fmt.Errorf("no successful write through %s within a minute of the kill (last: %d %v)", survivor.base, st, err)
		}
	}
	victim.client.CloseIdleConnections()
	n, err := launch(ctx, bin, victim, victim.pass)
	if err != nil {
		return 0, err
	}
	victim.node = n
	_, err = waitLeader(ctx, members, tok)
	return d, err
}

// readFigure is the latency of one kind of read on one node.
type readFigure struct {
	where, consistency string
	lat                latencies
}

// readLatencies times sequential reads of one identity list page on the
// leader and on a follower, with consistency=local and =linearizable.
func readLatencies(ctx context.Context, members []*member, tok string) ([]readFigure, error) {
	li, err := waitLeader(ctx, members, tok)
	if err != nil {
		return nil, err
	}
	var out []readFigure
	for _, w := range []struct {
		where string
		m     *member
	}{{"leader", members[li]}, {"follower", members[(li+1)%3]}} {
		for _, cons := range []string{"local", "linearizable"} {
			l, err := latency(ctx, w.m.node, tok, mgmt+"/identities?limit=1&consistency="+cons, 1000, 1)
			if err != nil {
				return nil, err
			}
			out = append(out, readFigure{where: w.where, consistency: cons, lat: l})
			fmt.Printf("read on the %s, consistency=%s: p50 %s ms, p99 %s ms\n", w.where, cons, ms(l.p50), ms(l.p99))
		}
	}
	return out, nil
}

// pauseTrial sends creates through the two followers while the leader is
// SIGSTOPped for 5 s, and returns the longest time within the pause without
// an acknowledged create.
func pauseTrial(ctx context.Context, members []*member, tok string, clients, trial int) (time.Duration, error) {
	li, err := waitLeader(ctx, members, tok)
	if err != nil {
		return 0, err
	}
	leader := members[li]
	followers := []*node{members[(li+1)%3].node, members[(li+2)%3].node}
	var mu sync.Mutex
	var acked []time.Time
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var seq int64
	for w := range clients {
		n := followers[w%2]
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := atomic.AddInt64(&seq, 1)
				st, err := n.createIdentity(ctx, tok, fmt.Sprintf("pause-%d-%07d", trial, i), false)
				if err == nil && st == http.StatusCreated {
					mu.Lock()
					acked = append(acked, time.Now())
					mu.Unlock()
				} else {
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
	time.Sleep(time.Second)
	if err := leader.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		close(stop)
		wg.Wait()
		return 0, err
	}
	from := time.Now()
	time.Sleep(5 * time.Second)
	to := time.Now()
	err = leader.cmd.Process.Signal(syscall.SIGCONT)
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	if err != nil {
		return 0, err
	}
	slices.SortFunc(acked, func(a, b time.Time) int { return a.Compare(b) })
	gap, prev := time.Duration(0), from
	for _, at := range acked {
		if at.Before(from) {
			continue
		}
		if at.After(to) {
			at = to
		}
		gap = max(gap, at.Sub(prev))
		prev = at
		if at.Equal(to) {
			break
		}
	}
	gap = max(gap, to.Sub(prev))
	_, err = waitLeader(ctx, members, tok)
	return gap, err
}

// createPhaseOn runs `workers` clients creating identities for d, worker w
// sending to nodes[w % len(nodes)].
func createPhaseOn(ctx context.Context, nodes []*node, tok, prefix string, workers int, d time.Duration) (*result, error) {
	r := &result{}
	var seq int64
	end := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		n := nodes[w%len(nodes)]
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				i := atomic.AddInt64(&seq, 1)
				st, err := n.createIdentity(ctx, tok, fmt.Sprintf("%s%07d", prefix, i), false)
				r.record(st, err)
			}
		})
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	return r, ctx.Err()
}

type clusterReport struct {
	clients      int
	duration     time.Duration
	rate1, rate3 *result
	failovers    []time.Duration
	reads        []readFigure
	pauseGaps    []time.Duration
}

func (r *clusterReport) print(w io.Writer) {
	sorted := slices.Clone(r.failovers)
	slices.Sort(sorted)
	var all []string
	for _, d := range r.failovers {
		all = append(all, ms(d))
	}
	median := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		median = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	env := fmt.Sprintf("%s, %s/%s, %d CPUs, %s", time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(w, "\nSummary (%s):\n", env)
	fmt.Fprintf(w, "  creates/s with %d clients: %.0f on one node, %.0f on three nodes (clients spread over all three)\n",
		r.clients, r.rate1.perSec(), r.rate3.perSec())
	fmt.Fprintf(w, "  failover, %d trials: min %s ms, median %s ms, max %s ms (each: %s)\n",
		len(sorted), ms(sorted[0]), ms(median), ms(sorted[len(sorted)-1]), strings.Join(all, ", "))

	fmt.Fprintf(w, "\nMarkdown (docs/performance.md):\n\n")
	fmt.Fprintf(w, "| measurement | result |\n|---|---|\n")
	fmt.Fprintf(w, "| identity creates/s, %d clients, one node (%d in %s) | %.0f |\n", r.clients, r.rate1.ok, r.rate1.elapsed.Round(10*time.Millisecond), r.rate1.perSec())
	fmt.Fprintf(w, "| identity creates/s, %d clients spread over three nodes (%d in %s) | %.0f |\n", r.clients, r.rate3.ok, r.rate3.elapsed.Round(10*time.Millisecond), r.rate3.perSec())
	fmt.Fprintf(w, "| failover: leader SIGKILLed → first 201 through a surviving node, %d trials, min / median / max | %s / %s / %s ms |\n",
		len(sorted), ms(sorted[0]), ms(median), ms(sorted[len(sorted)-1]))
	for _, f := range r.reads {
		fmt.Fprintf(w, "| read of one list page on the %s, consistency=%s, p50 / p99 | %s / %s ms |\n", f.where, f.consistency, ms(f.lat.p50), ms(f.lat.p99))
	}
	gaps := slices.Clone(r.pauseGaps)
	slices.Sort(gaps)
	var each []string
	for _, g := range r.pauseGaps {
		each = append(each, ms(g))
	}
	fmt.Fprintf(w, "| longest window without an acknowledged create while the leader is SIGSTOPped for 5 s (clients on the followers), %d trials, max | %s ms (each: %s) |\n",
		len(gaps), ms(gaps[len(gaps)-1]), strings.Join(each, ", "))
	fmt.Fprintf(w, "\nCreate errors: %d on one node%s; %d on three nodes%s. Failover trials: %s ms. %s.\n",
		r.rate1.errs, r.rate1.errDetail(), r.rate3.errs, r.rate3.errDetail(), strings.Join(all, ", "), env)
}
