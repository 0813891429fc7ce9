package path

import (
	"fmt"
	"testing"
	"time"

	"edgectl/store"
)

// BenchmarkPick_20kTerminators: a dial's pick among 20,000 terminators of
// one service spread over 20 routers, all reachable (the size at which the
// fleet tool's circuits slowed down).
func BenchmarkPick_20kTerminators(b *testing.B) {
	costs := map[string]int{}
	for i := range 20 {
		costs[fmt.Sprintf("r%d", i)] = 0
	}
	read := benchTerminators(b, 20000, func(i int) string { return fmt.Sprintf("r%d", i%20) })
	g := testGraph(costs, nil, testLink{"l", "r0", "r1", 1})
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := Pick(g, read, "svc", "r0", "", nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPick_100Routers: a dial's pick at the fleet's size: 100 routers
// in a ring (each linked to the next two, as the fleet tool's routers),
// 10,000 terminators of one service, 100 on each router. The pick asks
// for the path to every router.
func BenchmarkPick_100Routers(b *testing.B) {
	const routers = 100
	read := benchTerminators(b, 10000, func(i int) string { return fmt.Sprintf("r%03d", i%routers) })
	var links []Link
	for i := range routers {
		for _, j := range []int{i + 1, i + 2} {
			links = append(links, Link{ID: fmt.Sprintf("l%d-%d", i, j%routers), From: fmt.Sprintf("r%03d", i), To: fmt.Sprintf("r%03d", j%routers), Cost: 1 + (i*7+j)%5})
		}
	}
	g := NewGraph(meshRouters(routers), links, nil)
	k := 0
	for b.Loop() {
		if _, _, err := Pick(g, read, "svc", fmt.Sprintf("r%03d", k%routers), "", nil, nil); err != nil {
			b.Fatal(err)
		}
		k++
	}
}

// benchTerminators is a model with n terminators of service "svc", the
// i-th on router routerOf(i).
func benchTerminators(b *testing.B, n int, routerOf func(i int) string) *store.Tx {
	b.Helper()
	s := store.New()
	tx := s.Write()
	for i := range n {
		t := term(fmt.Sprintf("t%05d", i), routerOf(i), 0, "")
		t.Base.CreatedAt, t.Base.UpdatedAt = time.Unix(1, 0), time.Unix(1, 0)
		t.ServiceID = "svc"
		if err := tx.Insert(store.KindTerminator, t); err != nil {
			b.Fatal(err)
		}
	}
	tx.Commit()
	return s.Read()
}
