package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"time"

	"edgectl/controller"
)

// restartFigures are the figures of -restart (issue 16): a snapshot taken
// through the API, then the node stopped and started again on its data dir.
type restartFigures struct {
	snapshotTime  time.Duration
	snapshotBytes int64
	stopTime      time.Duration
	heapLeft      uint64        // live heap after the stop and a full GC: what the old node still holds
	startTime     time.Duration // controller.Start returned (model restored, log replayed, serving)
	firstAnswer   time.Duration // then until the first authenticated API answer
	err           error
}

// restart measures a snapshot and a restart of the first node (one node only).
func (b *bench) restart(ctx context.Context) *restartFigures {
	f := &restartFigures{}
	t0 := time.Now()
	st, body, err := b.do(ctx, b.base, "POST", mgmt+"/database/snapshot", b.admin, nil)
	if err != nil || st != 200 {
		f.err = fmt.Errorf("snapshot: %d %s %v", st, body, err)
		return f
	}
	f.snapshotTime = time.Since(t0)
	var snap struct {
		Data struct {
			Size int64 `json:"size"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &snap)
	f.snapshotBytes = snap.Data.Size

	n := b.nodes[0]
	cfg := controller.Config{DataDir: n.DataDir(), APIAddr: hostPort(n.APIURL()), ClusterAddr: n.Raft.Addr(), AdminPassword: b.pass}
	t0 = time.Now()
	if err := n.Shutdown(ctx); err != nil {
		f.err = fmt.Errorf("stop: %w", err)
		return f
	}
	f.stopTime = time.Since(t0)
	// A restart is a new process: nothing of the stopped node may stay in
	// memory for the collector to mark while the new one restores (the old
	// model is as large as the new one).
	n, b.nodes[0] = nil, nil
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f.heapLeft = ms.HeapAlloc
	t0 = time.Now()
	stopProfile := b.profile("restart")
	n2, err := controller.Start(ctx, cfg, nil, io.Discard)
	stopProfile()
	if err != nil {
		f.err = fmt.Errorf("start again: %w", err)
		return f
	}
	f.startTime = time.Since(t0)
	b.nodes[0] = n2
	b.http.CloseIdleConnections()
	for {
		st, _, err := b.do(ctx, b.base, "GET", mgmt+"/identities?limit=1", b.admin, nil)
		if err == nil && st == 200 {
			break
		}
		if time.Since(t0) > 5*time.Minute || ctx.Err() != nil {
			f.err = fmt.Errorf("no answer after the restart: %d %v", st, err)
			return f
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.firstAnswer = time.Since(t0)
	return f
}

// hostPort is the HOST:PORT of an https URL.
func hostPort(u string) string {
	const p = "https://"
	if len(u) > len(p) && u[:len(p)] == p {
		return u[len(p):]
	}
	return u
}

func (f *restartFigures) print(w io.Writer) {
	fmt.Fprintln(w, "\nRestart (one node): a snapshot through the API, then the node stopped and started on its data dir")
	if f.err != nil {
		fmt.Fprintln(w, "  failed:", f.err)
		return
	}
	fmt.Fprintf(w, "  POST /database/snapshot: %s, %.1f MiB\n", f.snapshotTime.Round(time.Millisecond), float64(f.snapshotBytes)/(1<<20))
	fmt.Fprintf(w, "  stop (SIGTERM path, Shutdown): %s; live heap after it (old node released, full GC): %.1f MiB\n",
		f.stopTime.Round(time.Millisecond), float64(f.heapLeft)/(1<<20))
	fmt.Fprintf(w, "  start until serving: %s; until the first authenticated answer: %s\n",
		f.startTime.Round(time.Millisecond), f.firstAnswer.Round(time.Millisecond))
}
