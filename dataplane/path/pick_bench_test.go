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
