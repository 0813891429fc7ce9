package store

import (
	"fmt"
	"testing"
	"time"

	"edgectl/store/filter"
)

// refModel is 10,000 terminators of 1,000 services (one name in ten has an
// "x") on 10 edge routers, in the order a list reads them.
func refModel(b *testing.B) (*Tx, []Record) {
	s := New()
	tx := s.Write()
	for i := range 10 {
		must(b, tx.Insert(KindEdgeRouter, &EdgeRouter{Base: Base{ID: fmt.Sprintf("er-%02d", i), CreatedAt: time.Unix(0, 0)},
			Named: Named{Name: fmt.Sprintf("router-%02d", i)}}))
	}
	for i := range 1000 {
		name := fmt.Sprintf("service-%04d", i)
		if i%10 == 0 {
			name += "-x"
		}
		must(b, tx.Insert(KindService, &Service{Base: Base{ID: fmt.Sprintf("svc-%04d", i), CreatedAt: time.Unix(0, 0)}, Named: Named{Name: name}}))
	}
	for i := range 10000 {
		binding := "edge"
		if i%10 == 0 {
			binding = "edge-x"
		}
		must(b, tx.Insert(KindTerminator, &Terminator{Base: Base{ID: fmt.Sprintf("t-%05d", i), CreatedAt: time.Unix(int64(i), 0)},
			ServiceID: fmt.Sprintf("svc-%04d", (i*7919)%1000), RouterID: fmt.Sprintf("er-%02d", i%10), Binding: binding}))
	}
	tx.Commit()
	rtx := s.Read()
	return rtx, rtx.Sorted(KindTerminator)
}

func must(b testing.TB, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFilter_Terminators10k is one filtered scan of 10,000 terminators
// per op: by a field of their own (binding), and by a field of the service
// or router each refers to, read through the reference.
//
//	go test -run '^$' -bench Filter_Terminators10k -benchtime 200x ./store/
func BenchmarkFilter_Terminators10k(b *testing.B) {
	tx, recs := refModel(b)
	for _, c := range []struct{ name, src string }{
		{"plain", `binding contains "x"`},
		{"serviceName", `service.name contains "x"`},
		{"routerName", `router.name = "router-03"`},
	} {
		b.Run(c.name, func(b *testing.B) {
			q, err := filter.CompileIn(c.src, KindTerminator.Fields, tx)
			must(b, err)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n = 0
				for _, r := range recs {
					if q.Match(r) {
						n++
					}
				}
			}
			if n != 1000 {
				b.Fatalf("%d matches, want 1000", n)
			}
		})
	}
}
