package main

import (
	"bufio"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"

	"edgectl/store"
)

// memory is the size of the model in memory, for the report.
type memory struct {
	links    int    // policy → entity pairs the policies select
	heapLive uint64 // bytes of heap live after a full collection
	rss      uint64 // resident bytes of the process (node + load generator)
}

// measureMemory counts the policy → entity pairs of node n's store and the live heap
// after a forced collection.
func (b *bench) measureMemory() memory {
	tx := b.nodes[0].Store.Read()
	var m memory
	rels := []struct {
		kind *store.Kind
		rels []string
	}{
		{store.KindServicePolicy, []string{store.RelServicePolicyIdentity, store.RelServicePolicyService, store.RelServicePolicyPostureCheck}},
		{store.KindEdgeRouterPolicy, []string{store.RelEdgeRouterPolicyIdentity, store.RelEdgeRouterPolicyEdgeRouter}},
		{store.KindServiceEdgeRouterPolicy, []string{store.RelSERPService, store.RelSERPEdgeRouter}},
	}
	for _, r := range rels {
		tx.Each(r.kind, "id", func(p store.Record) bool {
			for _, rel := range r.rels {
				tx.PolicyEntities(rel, p.GetID(), func(string) bool { m.links++; return true })
			}
			return true
		})
	}
	runtime.GC()
	if b.cfg.memprofile != "" {
		if f, err := os.Create(b.cfg.memprofile); err == nil {
			_ = pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.heapLive = ms.HeapAlloc
	m.rss = procKB("/proc/self/status", "VmRSS:") * 1024
	return m
}

// procKB reads a "Name:   123 kB" line of a /proc file; 0 when absent.
func procKB(file, key string) uint64 {
	f, err := os.Open(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				n, _ := strconv.ParseUint(fields[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

func gib(n uint64) float64 { return float64(n) / (1 << 30) }
