package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

func appendTestEvents(t *testing.T, s *Store, n int, at time.Time) {
	t.Helper()
	tx := s.Write()
	events := make([]*Event, n)
	for i := range events {
		events[i] = &Event{Namespace: "entity", Action: "created", EntityType: "identities"}
	}
	if err := tx.AppendEvents(events, at); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
}

func eventSeqs(tx *Tx) []int64 {
	var seqs []int64
	tx.EventsAfter(0, func(e *Event) bool { seqs = append(seqs, e.Seq); return true })
	return seqs
}

// TestEventsNumberingSurvivesCompactionAndSnapshots: events are counted and
// numbered from the kept events (no per-append write of the state), so the
// cases where none is kept must still go on from the last number: a
// retention age that drops them all, and a snapshot loaded by a member that
// reads the number from the state alone.
func TestEventsNumberingSurvivesCompactionAndSnapshots(t *testing.T) {
	t.Parallel()
	s := New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tx := s.Write()
	if err := tx.SetEvents(EventState{Enabled: true, RetentionCount: 5, RetentionSeconds: 3600}, t0); err != nil {
		t.Fatal(err)
	}
	tx.Commit()

	appendTestEvents(t, s, 3, t0)
	appendTestEvents(t, s, 4, t0.Add(time.Minute))
	r := s.Read()
	if got := eventSeqs(r); len(got) != 5 || got[0] != 3 || got[4] != 7 {
		t.Fatalf("kept events %v, want 3..7 (retention count 5)", got)
	}
	if r.Count(KindEvent) != 5 || r.Events().LastSeq != 7 || r.OldestEventSeq() != 3 {
		t.Fatalf("count %d, last %d, oldest %d; want 5, 7, 3", r.Count(KindEvent), r.Events().LastSeq, r.OldestEventSeq())
	}
	if got := r.EventsClock(); !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("events clock %v, want the newest event's time", got)
	}

	// Two hours on, a smaller retention drops every event: the numbering goes on.
	tx = s.Write()
	st := tx.Events()
	st.RetentionCount = 2
	if err := tx.SetEvents(st, t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := tx.CompactEvents(t0.Add(2 * time.Hour)); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	if r := s.Read(); r.Count(KindEvent) != 0 || r.Events().LastSeq != 7 {
		t.Fatalf("after compacting all: count %d, last %d; want 0, 7", r.Count(KindEvent), r.Events().LastSeq)
	}
	appendTestEvents(t, s, 1, t0.Add(2*time.Hour))
	if got := eventSeqs(s.Read()); len(got) != 1 || got[0] != 8 {
		t.Fatalf("after compacting all, the next event is %v, want [8]", got)
	}

	// Appending past the state's floor, then a snapshot: its state carries the last number.
	appendTestEvents(t, s, 3, t0.Add(2*time.Hour))
	var buf bytes.Buffer
	if err := s.Read().Dump(&buf); err != nil {
		t.Fatal(err)
	}
	s2 := New()
	if err := s2.Load(NewSnapshotDecoder(&buf)); err != nil {
		t.Fatal(err)
	}
	r2 := s2.Read()
	var stored EventState
	if err := json.Unmarshal(r2.Setting(SettingEvents), &stored); err != nil || stored.LastSeq != 11 {
		t.Fatalf("the snapshot's events state has lastSeq %d (%v), want 11", stored.LastSeq, err)
	}
	if got := eventSeqs(r2); len(got) != 2 || got[0] != 10 || got[1] != 11 || r2.Count(KindEvent) != 2 {
		t.Fatalf("loaded events %v (count %d), want 10, 11", got, r2.Count(KindEvent))
	}
	if findings, err := r2.CheckIntegrity(false, 100); err != nil || len(findings) != 0 {
		t.Fatalf("integrity after load: %v, %v", findings, err)
	}
}

func TestEventKey_IsTheZeroPaddedSequence(t *testing.T) {
	t.Parallel()
	for _, seq := range []int64{0, 1, 42, 1234567890, 1<<63 - 1} {
		if got, want := EventKey(seq), fmt.Sprintf("%020d", seq); got != want {
			t.Fatalf("EventKey(%d) = %q, want %q", seq, got, want)
		}
	}
}

// Many appends in one transaction (a batch of commands) compact as the
// same appends one transaction each: by count after each append, and by
// age from the bounds the previous compaction left.
func TestEvents_CompactionInOneTransactionAsInMany(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := func(st EventState, steps []int, oneTx bool) (seqs []int64, oldest int64, count int) {
		s := New()
		tx := s.Write()
		if err := tx.SetEvents(st, t0); err != nil {
			t.Fatal(err)
		}
		tx.Commit()
		if oneTx {
			tx = s.Write()
		}
		for _, sec := range steps { // two events a step, at t0 + sec seconds
			if !oneTx {
				tx = s.Write()
			}
			if err := tx.AppendEvents([]*Event{{Namespace: "entity", Action: "created"}, {Namespace: "entity", Action: "deleted"}}, t0.Add(time.Duration(sec)*time.Second)); err != nil {
				t.Fatal(err)
			}
			if !oneTx {
				tx.Commit()
			}
		}
		if oneTx {
			tx.Commit()
		}
		r := s.Read()
		return eventSeqs(r), r.OldestEventSeq(), r.Count(KindEvent)
	}
	for _, c := range []struct {
		name  string
		st    EventState
		steps []int
		want  string
	}{
		// Five steps a second apart (the count drops some), then four 100 s
		// apart (the age drops the rest).
		{"count then age", EventState{Enabled: true, RetentionCount: 4, RetentionSeconds: 60}, []int{0, 1, 2, 3, 4, 105, 205, 305, 405}, "[17 18]"},
		// Age alone: the third step drops the first; the fourth, 45 s after
		// the second step's events, must find them too old.
		{"age alone", EventState{Enabled: true, RetentionSeconds: 60}, []int{0, 50, 70, 115}, "[5 6 7 8]"},
	} {
		many, oldestMany, countMany := run(c.st, c.steps, false)
		one, oldestOne, countOne := run(c.st, c.steps, true)
		if fmt.Sprint(many) != c.want {
			t.Fatalf("%s: one transaction per append kept %v, want %s", c.name, many, c.want)
		}
		if fmt.Sprint(one) != fmt.Sprint(many) || oldestOne != oldestMany || countOne != countMany {
			t.Fatalf("%s: one transaction kept %v (oldest %d, count %d); one per append %v (oldest %d, count %d)",
				c.name, one, oldestOne, countOne, many, oldestMany, countMany)
		}
	}
}

// A write transaction reads the event log's state once, not once per
// command of its batch (each asks whether the log is on and appends to
// it), and again after a write to the settings.
func TestEventsSetting_ReadOncePerTransaction(t *testing.T) {
	s := New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tx := s.Write()
	if err := tx.SetEvents(EventState{Enabled: true, RetentionCount: 5}, t0); err != nil {
		t.Fatal(err)
	}
	if !tx.EventsOn() {
		t.Fatal("the log is on in the transaction that turned it on")
	}
	if n := testing.AllocsPerRun(20, func() { tx.EventsOn() }); n != 0 {
		t.Fatalf("%v allocations per read of the state, want 0 (no lookup)", n)
	}
	if err := tx.SetEvents(EventState{}, t0); err != nil {
		t.Fatal(err)
	}
	if tx.EventsOn() {
		t.Fatal("the log is off after the transaction turned it off")
	}
	tx.Commit()
}
