package fsm

import (
	"io"
	"runtime"
	"testing"
	"time"

	"edgectl/store"

	"github.com/hashicorp/raft"
)

// BenchmarkSnapshot_AfterATerminatorStorm is a node's snapshot after routers
// made 50,000 terminators with the event log on (issue 45's fleet: an event
// for each terminator): the first snapshot also encodes each event's body
// (the record it shows); later ones find them encoded.
//
//	go test -run '^$' -bench 'Snapshot_AfterATerminatorStorm' -benchtime 3x ./fsm/
func BenchmarkSnapshot_AfterATerminatorStorm(b *testing.B) {
	const n = 50_000
	withoutCrossCheck(b)
	storm := func() (*FSM, uint64) {
		t := &testing.T{}
		f := eventsOn(t)
		if err := resultErr(t, f.Apply(entry(t, 4, CmdEventsEnable, store.EventState{RetentionCount: 100_000}))); err != nil {
			b.Fatal(err)
		}
		terminatorModel(b, f, 0)
		index := uint64(10)
		for i := 0; i < n; i += 256 {
			batch := make([]*raft.Log, 0, 256)
			for j := i; j < min(i+256, n); j++ {
				index++
				batch = append(batch, &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: terminatorCreateEntry(b, j)})
			}
			for _, r := range f.ApplyBatch(batch) {
				if err := resultErr(t, r); err != nil {
					b.Fatal(err)
				}
			}
		}
		if got := f.store.Read().Count(store.KindEvent); got < n {
			b.Fatalf("%d events, want at least %d", got, n)
		}
		return f, index
	}
	dump := func(b *testing.B, f *FSM, index uint64) {
		if err := WriteSnapshot(io.Discard, f.store.Read(), index); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("first", func(b *testing.B) {
		cpu := time.Duration(0)
		for b.Loop() {
			b.StopTimer()
			f, index := storm()
			runtime.GC() // the storm's garbage is not the snapshot's
			before := processCPU()
			b.StartTimer()
			dump(b, f, index)
			cpu += processCPU() - before
		}
		b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
	})
	b.Run("later", func(b *testing.B) {
		f, index := storm()
		dump(b, f, index)
		runtime.GC()
		before := processCPU()
		for b.Loop() {
			dump(b, f, index)
		}
		b.ReportMetric(float64(processCPU()-before)/float64(b.N)/1e6, "cpu-ms/op")
	})
}
