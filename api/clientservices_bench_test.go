package api

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// discardResponse is a ResponseWriter that counts the body and keeps
// nothing, so the benchmark measures the handler, not a recorder.
type discardResponse struct {
	h    http.Header
	code int
	n    int
}

func (w *discardResponse) Header() http.Header         { return w.h }
func (w *discardResponse) WriteHeader(code int)        { w.code = code }
func (w *discardResponse) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkClientServices_List50 is the handler side of scalebench's Issue 5
// list: one identity sees 50 services (10 guarded by 5 posture checks),
// GET /services?limit=100 from many goroutines, each its own API session.
// In-process, no TLS: the cost of authentication, views and encoding.
func BenchmarkClientServices_List50(b *testing.B) {
	f := newCSFixture(b, csOptions{services: 58, guarded: 10, sessions: 32})
	h := f.s.Handler()
	target := ClientPrefix + "/services?limit=100"
	if rec := serveAs(f.s, f.tokens[0], target); rec.Code != http.StatusOK || rec.Body.Len() < 30000 {
		b.Fatalf("%d, %d bytes", rec.Code, rec.Body.Len())
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		tok := f.tokens[int(next.Add(1))%len(f.tokens)]
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("zt-session", tok)
		w := &discardResponse{h: http.Header{}}
		for pb.Next() {
			clear(w.h)
			w.code, w.n = 0, 0
			h.ServeHTTP(w, req)
			if w.code != 0 && w.code != http.StatusOK {
				b.Fatalf("status %d", w.code)
			}
		}
	})
}
