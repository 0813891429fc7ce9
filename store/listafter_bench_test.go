package store

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

// The first page of the identity list, and a page of a name search, right
// after each write to a large table: what a console shows under a stream of
// renames. Each write leaves a new generation, whose list order is made
// from the last one and the changes (store/internal/order), so its cost must not
// grow with the changes since the order's root, nor much with the table.
//
//	go test -run '^$' -bench ListAfterRename -benchtime 8000x ./store/
//	EDGECTL_BENCH_MILLION=1 go test -run '^$' -bench ListAfterRename/1000000 -benchtime 8000x -timeout 30m ./store/
func BenchmarkListAfterRename(b *testing.B) {
	sizes := []int{100000}
	if os.Getenv("EDGECTL_BENCH_MILLION") != "" {
		sizes = append(sizes, 1000000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := New()
			tx := s.Write()
			for i := range n {
				if err := tx.Insert(KindIdentity, &Identity{Base: Base{ID: fmt.Sprintf("id-%07d", i), CreatedAt: time.Unix(0, 0)},
					Named: Named{Name: fmt.Sprintf("identity-%07d", i)}}); err != nil {
					b.Fatal(err)
				}
			}
			tx.Commit()
			s.Read().EachSorted(KindIdentity, func(Record) bool { return true }) // the first root
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tx := s.Write()
				id := fmt.Sprintf("id-%07d", (i*7919)%n)
				r, err := tx.Get(KindIdentity, id)
				if err != nil {
					b.Fatal(err)
				}
				u := *r.(*Identity)
				u.Name = fmt.Sprintf("renamed-%07d-%d", (i*7919)%n, i)
				if err := tx.Replace(KindIdentity, &u); err != nil {
					b.Fatal(err)
				}
				tx.Commit()
				start := time.Now()
				page := 0
				s.Read().EachSorted(KindIdentity, func(Record) bool { page++; return page < 10 })
				recs, names := s.Read().SortedNames(KindIdentity)
				found := 0
				names.EachContaining("renamed-00001", func(i int) bool { _ = recs.At(i); found++; return found < 10 })
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(took[len(took)-1].Microseconds()), "max-µs")
		})
	}
}
