package cluster

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
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
