package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"edgectl/controller"
)

// BenchmarkCreateIdentity_InProcess prices the write path of one node
// (Raft with its fsync, the FSM, the API in process), with the event log on
// and off in the same run (docs/performance-history.md, issue 15: on must be at
// least 0.9x off).
func BenchmarkCreateIdentity_InProcess(b *testing.B) {
	for _, events := range []bool{true, false} {
		b.Run(fmt.Sprintf("events=%v", events), func(b *testing.B) { benchCreateIdentity(b, !events) })
	}
}

func benchCreateIdentity(b *testing.B, noEvents bool) {
	dir := b.TempDir()
	n, err := controller.Start(context.Background(), controller.Config{DataDir: dir, APIAddr: "127.0.0.1:0", ClusterAddr: "127.0.0.1:0",
		AdminPassword: "admin-password-1", MaintenanceInterval: time.Hour, NoEventLog: noEvents}, nil, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	if got := n.Store.Read().Events().Enabled; got == noEvents {
		b.Fatalf("event log on: %v", got)
	}
	h := n.API.LocalAdminHandler()
	var ctr atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := ctr.Add(1)
			body := fmt.Sprintf(`{"name":"bench-%d","type":"Device","isAdmin":false,"roleAttributes":["a"]}`, i)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("POST", "/edge/management/v1/identities", strings.NewReader(body)))
			if w.Code != 201 {
				b.Fatalf("%d %s", w.Code, w.Body.String())
			}
		}
	})
}

// BenchmarkCreateTerminator_InProcess prices a terminator's write on one
// node (the write every hosting endpoint makes) with the data-plane events
// on and off in the same run (issue 47: on at least 0.95x off): each
// terminator made is a data-plane event on every node.
func BenchmarkCreateTerminator_InProcess(b *testing.B) {
	for _, events := range []bool{true, false} {
		b.Run(fmt.Sprintf("dpevents=%v", events), func(b *testing.B) { benchCreateTerminator(b, !events) })
	}
}

func benchCreateTerminator(b *testing.B, noEvents bool) {
	n, err := controller.Start(context.Background(), controller.Config{DataDir: b.TempDir(), APIAddr: "127.0.0.1:0", ClusterAddr: "127.0.0.1:0",
		AdminPassword: "admin-password-1", MaintenanceInterval: time.Hour, NoDataPlaneEvents: noEvents}, nil, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	h := n.API.LocalAdminHandler()
	post := func(path, body string) string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/edge/management/v1"+path, strings.NewReader(body)))
		if w.Code != 201 {
			b.Fatalf("POST %s: %d %s", path, w.Code, w.Body.String())
		}
		var out struct {
			Data struct{ ID string } `json:"data"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			b.Fatal(err)
		}
		return out.Data.ID
	}
	svc := post("/services", `{"name":"bench"}`)
	router := post("/edge-routers", `{"name":"bench-router"}`)
	var ctr atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			post("/terminators", fmt.Sprintf(`{"service":%q,"router":%q,"binding":"transport","address":"tcp:10.0.0.1:%d"}`, svc, router, ctr.Add(1)))
		}
	})
}
