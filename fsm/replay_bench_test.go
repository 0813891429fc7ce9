package fsm

import (
	"crypto/rand"
	"fmt"
	"syscall"
	"testing"
	"time"

	"edgectl/store"

	"github.com/hashicorp/raft"
)

// BenchmarkReplay_TerminatorCreates is what a restarting node does after
// its snapshot: it applies the log written since, in raft's batches
// (cluster's maxAppendEntries, 256), before it serves. The entries are the
// terminators routers make (issue 45's restart replayed 24,876 of them onto
// a model of 100,000); the model holds terminators=N of them already.
//
//	go test -run '^$' -bench 'Replay_TerminatorCreates' -benchtime 20000x ./fsm/
func BenchmarkReplay_TerminatorCreates(b *testing.B) {
	for _, held := range []int{0, 100000} {
		b.Run(fmt.Sprintf("terminators=%d", held), func(b *testing.B) {
			withoutCrossCheck(b)
			t := &testing.T{}
			f := bootstrapped(t)
			terminatorModel(b, f, held)
			index := uint64(10)
			entries := make([]*raft.Log, 0, b.N)
			for i := range b.N {
				index++
				entries = append(entries, &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: terminatorCreateEntry(b, held+i)})
			}
			b.ReportAllocs()
			b.ResetTimer()
			replay(b, t, f, entries)
		})
	}
}

// BenchmarkReplay_IdentityUpdates is the log `make chaos` leaves a
// restarting node: PATCHes of an identity's tags, with events on (each
// keeps the identity before and after), over 1,000 identities.
//
//	go test -run '^$' -bench 'Replay_IdentityUpdates' -benchtime 20000x ./fsm/
func BenchmarkReplay_IdentityUpdates(b *testing.B) {
	withoutCrossCheck(b)
	t := &testing.T{}
	f := eventsOn(t)
	index := uint64(10)
	for i := range 1000 {
		index++
		if err := resultErr(t, f.Apply(entry(t, index, CmdIdentityCreate, IdentityCreate{Identity: identity(fmt.Sprintf("i%04d", i), fmt.Sprintf("name-%04d", i))}))); err != nil {
			b.Fatal(err)
		}
	}
	entries := make([]*raft.Log, 0, b.N)
	for i := range b.N {
		index++
		raw, err := store.MarshalJSON(Update{ID: fmt.Sprintf("i%04d", i%1000), Patch: store.Patch{"tags": []byte(fmt.Sprintf(`{"v":%d}`, i))}, At: t0})
		if err != nil {
			b.Fatal(err)
		}
		entries = append(entries, &raft.Log{Index: index, Term: 1, Type: raft.LogCommand,
			Data: envelope(CmdIdentityUpdate, raw, t0, &store.EventActor{IdentityID: "admin", IdentityName: "Default Admin"}, "rid")})
	}
	b.ReportAllocs()
	b.ResetTimer()
	replay(b, t, f, entries)
}

// replay applies entries in raft's batches (cluster's maxAppendEntries)
// and reports the CPU per entry.
func replay(b *testing.B, t *testing.T, f *FSM, entries []*raft.Log) {
	const perBatch = 256
	n := len(entries)
	cpu := processCPU()
	for len(entries) > 0 {
		batch := entries[:min(perBatch, len(entries))]
		entries = entries[len(batch):]
		for _, r := range f.ApplyBatch(batch) {
			if err := resultErr(t, r); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(n), "cpu-ns/op")
}

// processCPU is the CPU time the process has used (its goroutines and the
// collector's), steadier than wall time on a shared machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// terminatorModel adds to f's model 100 edge routers, 10 services, 1,000
// hosts and n terminators, in one transaction.
func terminatorModel(b *testing.B, f *FSM, n int) {
	tx := f.store.Write()
	tx.SetTime(t0)
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	for i := range 100 {
		must(tx.Insert(store.KindEdgeRouter, &store.EdgeRouter{Base: store.Base{ID: fmt.Sprintf("er-%03d", i), CreatedAt: t0},
			Named: store.Named{Name: fmt.Sprintf("router-%03d", i)}, IsTunnelerEnabled: true}))
	}
	for i := range 10 {
		must(tx.Insert(store.KindService, &store.Service{Base: store.Base{ID: fmt.Sprintf("svc-%02d", i), CreatedAt: t0},
			Named: store.Named{Name: fmt.Sprintf("service-%02d", i)}, EncryptionRequired: true, TerminatorStrategy: "smartrouting"}))
	}
	for i := range 1000 {
		must(tx.Insert(store.KindIdentity, identity(fmt.Sprintf("host-%04d", i), fmt.Sprintf("host-%04d", i))))
	}
	for i := range n {
		must(tx.Insert(store.KindTerminator, fleetTerminator(i)))
	}
	must(tx.Finish())
	tx.Commit()
}

// fleetTerminator is terminator i of the fleet tool's hosts: a host's
// public key in its peer data.
func fleetTerminator(i int) *store.Terminator {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &store.Terminator{Base: store.Base{ID: fmt.Sprintf("t-%07d", i), CreatedAt: t0, UpdatedAt: t0},
		ServiceID: fmt.Sprintf("svc-%02d", i%10), RouterID: fmt.Sprintf("er-%03d", i%100), Binding: "edge",
		Address: fmt.Sprintf("hosted:%07d", i), Precedence: "default", HostID: fmt.Sprintf("host-%04d", i%1000),
		PeerData: map[uint32][]byte{3: key}, IsSystem: true}
}

func terminatorCreateEntry(b testing.TB, i int) []byte {
	at := t0.Add(time.Duration(i) * time.Millisecond)
	raw, err := store.MarshalJSON(RouterTerminator{Terminator: fleetTerminator(i), At: at})
	if err != nil {
		b.Fatal(err)
	}
	return envelope(CmdTerminatorCreateByRouter, raw, at, nil, "")
}
