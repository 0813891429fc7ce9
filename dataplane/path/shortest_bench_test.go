package path

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// meshRouters and meshLinks are a full mesh of n routers (n(n-1)/2 links)
// with link costs that differ (1 to 50, by the pair), so that the cheapest
// path is often not the direct link and Dijkstra looks at most of the mesh.
func meshRouters(n int) []Router {
	rs := make([]Router, n)
	for i := range rs {
		rs[i] = Router{ID: fmt.Sprintf("r%03d", i)}
	}
	return rs
}

func meshLinks(n int) []Link {
	ls := make([]Link, 0, n*(n-1)/2)
	for i := range n {
		for j := i + 1; j < n; j++ {
			ls = append(ls, Link{ID: fmt.Sprintf("l-%d-%d", i, j), From: fmt.Sprintf("r%03d", i), To: fmt.Sprintf("r%03d", j),
				Cost: (i*31+j*17)%50 + 1})
		}
	}
	return ls
}

// benchPaths times path(src, dst) for pairs of routers of an n-router
// mesh in turn, and reports the p50 and p99 of the times, the aim of issue
// 45 being a p99 of at most 1 ms per path computation.
func benchPaths(b *testing.B, n int, path func(src, dst string) error) {
	lat := make([]time.Duration, 0, 1<<16)
	k := 0
	for b.Loop() {
		src, dst := fmt.Sprintf("r%03d", k%n), fmt.Sprintf("r%03d", (k*7+1)%n)
		k++
		start := time.Now()
		if err := path(src, dst); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkShortest_FullMesh100: the cheapest path between two routers of
// a 100-router full mesh (4,950 links), on a graph already built.
func BenchmarkShortest_FullMesh100(b *testing.B) {
	const n = 100
	g := NewGraph(meshRouters(n), meshLinks(n), nil)
	benchPaths(b, n, func(src, dst string) error {
		_, err := g.Shortest(src, dst)
		return err
	})
}

// BenchmarkSearch_FullMesh100: one search of a 100-router full mesh
// (4,950 links), from a router to all others: what the first path from a
// router costs on a new graph (Shortest keeps it for the graph's life).
func BenchmarkSearch_FullMesh100(b *testing.B) {
	const n = 100
	g := NewGraph(meshRouters(n), meshLinks(n), nil)
	benchPaths(b, n, func(src, _ string) error {
		reached := 0
		for _, d := range g.search(g.num[src]).dist {
			if d >= 0 {
				reached++
			}
		}
		if reached != n {
			return fmt.Errorf("%d routers reached", reached)
		}
		return nil
	})
}

// BenchmarkNewGraphShortest_FullMesh100: what a dial (or a move) pays for
// its path on a 100-router full mesh: the graph built from the routers and
// the 4,950 links, then the cheapest path.
func BenchmarkNewGraphShortest_FullMesh100(b *testing.B) {
	const n = 100
	routers, links := meshRouters(n), meshLinks(n)
	benchPaths(b, n, func(src, dst string) error {
		_, err := NewGraph(routers, links, nil).Shortest(src, dst)
		return err
	})
}

// TestShortest_FullMeshTakesCheaperTwoHops: the mesh of the benchmarks has
// paths cheaper than the direct link (so that they measure a search, not a
// lookup), and every router reaches every other.
func TestShortest_FullMeshTakesCheaperTwoHops(t *testing.T) {
	const n = 20
	g := NewGraph(meshRouters(n), meshLinks(n), nil)
	multi := 0
	for i := range n {
		for j := range n {
			p, err := g.Shortest(fmt.Sprintf("r%03d", i), fmt.Sprintf("r%03d", j))
			if err != nil {
				t.Fatalf("r%03d→r%03d: %v", i, j, err)
			}
			if len(p.Nodes) > 2 {
				multi++
			}
		}
	}
	if multi == 0 {
		t.Fatal("every cheapest path is the direct link: the mesh's costs do not exercise the search")
	}
}
