package store

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRestore is what a restarting node does first: read its newest
// snapshot into a fresh model (Load), and beside it the decode of the same
// stream alone. Two models: issue 45's data plane (terminatorStore) and a
// full event log, the bulk of `make chaos`'s snapshots (events kept up to
// 100,000; docs/operations.md, "Chaos campaigns").
//
//	go test -run '^$' -bench 'Restore$' -benchtime 3x ./store/

const (
	fleetRouters     = 100
	fleetServices    = 10
	fleetHosts       = 1000
	fleetTerminators = 100000
)

// terminatorStore is a data-plane model at issue 45's size: 100 edge
// routers, 10 services, 1,000 hosting identities and terminators, each with
// its host's 32-byte public key in its peer data (as SDKs bind services
// that require encryption), written in one transaction.
func terminatorStore(tb testing.TB, terminators int) *Store {
	tb.Helper()
	s := New()
	tx := s.Write()
	at := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	tx.SetTime(at)
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	base := func(id string) Base { return Base{ID: id, CreatedAt: at, UpdatedAt: at} }
	for i := range fleetRouters {
		must(tx.Insert(KindEdgeRouter, &EdgeRouter{Base: base(fmt.Sprintf("er-%03d", i)), Named: Named{Name: fmt.Sprintf("router-%03d", i)},
			RoleAttributes: []string{"public"}, IsTunnelerEnabled: true, Hostname: "127.0.0.1",
			SupportedProtocols: map[string]string{"tls": "tls:127.0.0.1:3022"}}))
	}
	for i := range fleetServices {
		must(tx.Insert(KindService, &Service{Base: base(fmt.Sprintf("svc-%02d", i)), Named: Named{Name: fmt.Sprintf("service-%02d", i)},
			RoleAttributes: []string{"fleet"}, Configs: []string{}, EncryptionRequired: true, TerminatorStrategy: "smartrouting"}))
	}
	for i := range fleetHosts {
		must(tx.Insert(KindIdentity, &Identity{Base: base(fmt.Sprintf("host-%04d", i)), Named: Named{Name: fmt.Sprintf("host-%04d", i)},
			TypeID: "Device", AuthPolicyID: "default", RoleAttributes: []string{"hosts"}}))
	}
	for i := range terminators {
		must(tx.Insert(KindTerminator, fleetTerminator(i)))
	}
	must(tx.Finish())
	tx.Commit()
	return s
}

// fleetTerminator is terminator i of the model, the kind a router makes
// for a hosting SDK: its host's public key in its peer data.
func fleetTerminator(i int) *Terminator {
	at := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &Terminator{Base: Base{ID: fmt.Sprintf("t-%07d", i), CreatedAt: at, UpdatedAt: at},
		ServiceID: fmt.Sprintf("svc-%02d", i%fleetServices), RouterID: fmt.Sprintf("er-%03d", i%fleetRouters),
		Binding: "edge", Address: fmt.Sprintf("hosted:%07d", i), Precedence: "default",
		HostID: fmt.Sprintf("host-%04d", i%fleetHosts), PeerData: map[uint32][]byte{3: key}, IsSystem: true}
}

func BenchmarkRestore(b *testing.B) {
	CrossCheckDecoding(false) // measure what nodes run
	b.Cleanup(func() { CrossCheckDecoding(true) })
	for _, m := range []struct {
		name  string
		model func(*testing.B) *Store
	}{
		{"terminators=100000", func(b *testing.B) *Store { return terminatorStore(b, fleetTerminators) }},
		{"events=100000", func(b *testing.B) *Store { return eventStore(b, 100_000) }},
	} {
		b.Run(m.name, func(b *testing.B) {
			var buf bytes.Buffer
			if err := m.model(b).Read().Dump(&buf); err != nil {
				b.Fatal(err)
			}
			b.Logf("snapshot stream: %d bytes", buf.Len())
			b.Run("load", func(b *testing.B) {
				b.ReportAllocs()
				cpu := processCPU()
				for b.Loop() {
					if err := New().Load(NewSnapshotDecoder(bytes.NewReader(buf.Bytes()))); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
			b.Run("decode-only", func(b *testing.B) {
				b.ReportAllocs()
				cpu := processCPU()
				for b.Loop() {
					decodeSnapshot(b, buf.Bytes())
				}
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
		})
	}
}

// decodeSnapshot decodes every record of the snapshot stream raw, as Load
// does, without inserting them (the decode alone, for a benchmark).
func decodeSnapshot(b *testing.B, raw []byte) {
	b.Helper()
	dec := NewSnapshotDecoder(bytes.NewReader(raw))
	for {
		var sec section
		if err := dec.Decode(&sec); err != nil {
			b.Fatal(err)
		}
		if sec.Table == "" {
			return
		}
		k, _ := KindByTable(sec.Table)
		for range sec.Count {
			if err := dec.Decode(k.New()); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// processCPU is the CPU time the process has used (its goroutines and the
// collector's), steadier than wall time on a shared machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
