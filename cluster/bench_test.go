package cluster

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// BenchmarkApplySingleNode measures committed writes per second on a
// one-node cluster with 16*GOMAXPROCS concurrent writers (32 on 2 cores).
func BenchmarkApplySingleNode(b *testing.B) {
	n := mustBootstrapped(b)
	benchApply(b, n)
}

// BenchmarkApplyForwarded writes through a follower of a 3-node cluster:
// forwarding, replication and read-your-writes waiting included.
func BenchmarkApplyForwarded(b *testing.B) {
	c := mustNewCluster(b, 3)
	benchApply(b, c.Followers()[0])
}

func benchApply(b *testing.B, n *testNode) {
	ctx := context.Background()
	var seq atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := seq.Add(1)
			if _, _, err := n.Apply(ctx, setCmd("k"+strconv.FormatInt(i%1000, 10), "v")); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}

// BenchmarkReadIndex: one linearizable read barrier, on the leader (a
// heartbeat round to a quorum) and on a follower (plus the RPC to the leader).
func BenchmarkReadIndex(b *testing.B) {
	c := mustNewCluster(b, 3)
	ctx := ctxTimeout(b, time.Minute)
	mustApply(b, ctx, c.Leader(), setCmd("k", "v"))
	for _, tc := range []struct {
		name string
		n    *testNode
	}{{"Leader", c.Leader()}, {"Follower", c.Followers()[0]}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := tc.n.ReadIndex(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLogStore measures the Raft log store (the WAL) on what a
// leader's group commit writes: one call per batch of 16 entries of 700
// bytes (an identity create's command is about that size), each call
// durable on return. Run with -cpu 1 and read the process's CPU time beside
// ns/op (docs/performance-history.md, issue 16, part 4, which also measured
// raft-boltdb, the store of builds before v0.1.0).
func BenchmarkLogStore(b *testing.B) {
	const perBatch = 16
	data := make([]byte, 700)
	run := func(b *testing.B, s raft.LogStore) {
		b.ReportAllocs()
		next := uint64(1)
		logs := make([]*raft.Log, perBatch)
		for b.Loop() {
			for i := range logs {
				logs[i] = &raft.Log{Index: next, Term: 1, Type: raft.LogCommand, Data: data}
				next++
			}
			if err := s.StoreLogs(logs); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("wal", func(b *testing.B) {
		s, err := openLogStore(b.TempDir(), hclog.NewNullLogger(), 0)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		run(b, s)
	})
}
