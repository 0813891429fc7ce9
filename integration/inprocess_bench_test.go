package integration

import (
	"context"
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
