package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"slices"
	"time"
)

// latencies are the percentiles of one list figure, and what the load
// generator's own heap did meanwhile (see latency).
type latencies struct {
	p50, p99, mean time.Duration
	clientGCs      uint32 // garbage collections of this process during the figure
	clientAlloc    uint64 // bytes this process allocated per request
}

// latency runs `requests` sequential GETs of path (after a short warm-up)
// and checks each answer holds `want` items.
//
// The loop allocates little: one request reused, one body buffer, and a check
// that decodes the items as empty structs. This process shares the two CPUs
// with the node, and each of its garbage collections (every ~70 requests when
// it decoded every answer into fresh buffers) delayed the requests it
// overlapped by up to milliseconds: that was most of the p99 it reported.
func latency(ctx context.Context, n *node, tok, path string, requests, want int) (latencies, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.base+path, nil)
	if err != nil {
		return latencies{}, err
	}
	req.Header.Set("svc-session", tok)
	var body bytes.Buffer
	var out struct {
		Data []struct{} `json:"data"`
	}
	// get times one request, from sending it to the last byte of the answer;
	// the check runs after the clock stops. The request may be sent again
	// once the answer's body is closed.
	get := func() (time.Duration, error) {
		body.Reset()
		t0 := time.Now()
		resp, err := n.client.Do(req)
		if err != nil {
			return 0, err
		}
		_, err = body.ReadFrom(resp.Body)
		resp.Body.Close()
		d := time.Since(t0)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body.Bytes(), &out) != nil {
			return 0, fmt.Errorf("GET %s: status %d: %.300s", path, resp.StatusCode, body.Bytes())
		}
		if len(out.Data) != want {
			return 0, fmt.Errorf("GET %s: %d items, want %d", path, len(out.Data), want)
		}
		return d, nil
	}
	for range 20 { // warm-up: connection, caches, buffers
		if _, err := get(); err != nil {
			return latencies{}, err
		}
	}
	ds := make([]time.Duration, 0, requests)
	var sum time.Duration
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range requests {
		d, err := get()
		if err != nil {
			return latencies{}, err
		}
		ds = append(ds, d)
		sum += d
	}
	runtime.ReadMemStats(&after)
	slices.Sort(ds)
	return latencies{p50: percentile(ds, 50), p99: percentile(ds, 99), mean: sum / time.Duration(len(ds)),
		clientGCs: after.NumGC - before.NumGC, clientAlloc: (after.TotalAlloc - before.TotalAlloc) / uint64(requests)}, nil
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

// client describes the load generator's heap during a figure.
func (l latencies) client() string {
	return fmt.Sprintf("  (load generator: %d GCs, %.1f KB allocated per request)", l.clientGCs, float64(l.clientAlloc)/1024)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }
