package fsm

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"edgectl/store"
)

// TestWriteSnapshot_GivesWayToOtherGoroutines: on one processor, a
// goroutine that is always ready to run gets it at least once per 128 KiB
// of snapshot written (once per 64 KiB buffer, with room), not only at the
// scheduler's preemption every 10 ms. Not parallel: it sets GOMAXPROCS.
func TestWriteSnapshot_GivesWayToOtherGoroutines(t *testing.T) {
	s := store.New()
	tx := s.Write()
	for i := range 20000 {
		id := fmt.Sprintf("id%06d", i)
		if err := tx.Insert(store.KindIdentity, identity(id, "name-"+id)); err != nil {
			t.Fatal(err)
		}
	}
	tx.Commit()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var ran atomic.Int64
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			ran.Add(1)
			runtime.Gosched()
		}
	}()
	runtime.Gosched() // let it start
	var n countingWriter
	err := WriteSnapshot(&n, s.Read(), 1)
	during := ran.Load()
	stop.Store(true)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(n) / (128 << 10); during < want {
		t.Fatalf("the other goroutine ran %d times during a snapshot of %d bytes, want at least %d", during, n, want)
	}
}

type countingWriter int

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}
