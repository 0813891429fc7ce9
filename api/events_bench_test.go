package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"edgectl/store"
)

// BenchmarkEventStream_100SlowClients measures what 100 event streams whose
// clients stop reading cost the node: each stream holds one bounded batch
// (streamBytes) while its writes block on the full socket, so the heap
// grows by about that per client, not by the backlog they have not read
// (20,000 events of about 1 KB here). Reported as heap-MB (growth with the
// 100 clients stalled) and KB/client.
func BenchmarkEventStream_100SlowClients(b *testing.B) {
	const clients, events = 100, 20_000
	s := benchServer(b, 10)
	tx := s.Store.Write()
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	now := time.Now().UTC()
	must(tx.SetEvents(store.EventState{Enabled: true, RetentionCount: 1_000_000}, now))
	payload, _ := json.Marshal(map[string]string{"description": strings.Repeat("x", 900)})
	batch := make([]*store.Event, 0, events)
	for i := range events {
		batch = append(batch, &store.Event{Index: uint64(i + 1), Namespace: "entity", Action: "created", EntityType: "services",
			EntityID: fmt.Sprint(i), After: payload})
	}
	must(tx.AppendEvents(batch, now))
	tx.Commit()
	srv := httptest.NewServer(s.LocalAdminHandler())
	defer srv.Close()

	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	for b.Loop() {
		before := heap()
		conns := make([]net.Conn, 0, clients)
		for range clients {
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			must(err)
			fmt.Fprintf(c, "GET /edge/management/v1/events/stream?fromId=0 HTTP/1.1\r\nHost: x\r\n\r\n")
			// Read the status line, then never read again.
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil || !strings.Contains(line, "200") {
				b.Fatalf("stream: %q %v", line, err)
			}
			conns = append(conns, c)
		}
		// Wait until the heap stops growing: every stream is blocked on its socket.
		var peak uint64
		for stable, deadline := 0, time.Now().Add(20*time.Second); stable < 5 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			h := heap()
			if h > peak+peak/100 {
				peak, stable = h, 0
			} else {
				stable++
			}
		}
		if n := s.streams.Load(); n != clients {
			b.Fatalf("%d streams open, want %d", n, clients)
		}
		growth := float64(peak) - float64(before)
		b.ReportMetric(growth/(1<<20), "heap-MB")
		b.ReportMetric(growth/clients/1024, "KB/client")
		for _, c := range conns {
			c.Close()
		}
	}
}
