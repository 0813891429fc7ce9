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
	s := store.New()
	tx := s.Write()
	costs := map[string]int{}
	for i := range 20000 {
		r := fmt.Sprintf("r%d", i%20)
		costs[r] = 0
		t := term(fmt.Sprintf("t%05d", i), r, 0, "")
		t.Base.CreatedAt, t.Base.UpdatedAt = time.Unix(1, 0), time.Unix(1, 0)
		t.ServiceID = "svc"
		if err := tx.Insert(store.KindTerminator, t); err != nil {
			b.Fatal(err)
		}
	}
	tx.Commit()
	read := s.Read()
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
	s := store.New()
	tx := s.Write()
	for i := range 10000 {
		t := term(fmt.Sprintf("t%05d", i), fmt.Sprintf("r%03d", i%routers), 0, "")
		t.Base.CreatedAt, t.Base.UpdatedAt = time.Unix(1, 0), time.Unix(1, 0)
		t.ServiceID = "svc"
		if err := tx.Insert(store.KindTerminator, t); err != nil {
			b.Fatal(err)
		}
	}
	tx.Commit()
	read := s.Read()
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
