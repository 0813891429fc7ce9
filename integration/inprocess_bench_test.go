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

func BenchmarkCreateIdentity_InProcess(b *testing.B) {
	dir := b.TempDir()
	n, err := controller.Start(context.Background(), controller.Config{DataDir: dir, APIAddr: "127.0.0.1:0", ClusterAddr: "127.0.0.1:0",
		AdminPassword: "admin-password-1", MaintenanceInterval: time.Hour}, nil, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	defer n.Shutdown(context.Background())
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
