package store

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// The cost of one policy write on a large model, with and without
// go-memdb's watch tracking. A write transaction of the primary MemDB
// tracks a notification channel per modified radix node; past 8,192 of them
// go-immutable-radix falls back to slowNotify, which walks the whole old and
// new tree of every overflowed index at Commit: a policy that writes ~10,000
// link rows then costs time in proportion to ALL link rows of the model. A
// transaction of a MemDB snapshot (MemDB.Snapshot) does not track, and the
// store uses no watches.
//
//	go test -run '^$' -bench PolicyCreateOnLargeModel -benchtime 10x ./store/

const (
	scaleIdentities = 100000
	scaleAttrs      = 20
	scaleBase       = 100 // policies of one attribute already in the model: ~1,000,000 links
)

// scaleStore is a store with scaleIdentities identities (1-3 of scaleAttrs
// attributes each) and scaleBase service policies, written in one
// transaction (one slow commit instead of one per policy).
func scaleStore(b *testing.B) *Store {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	s := New()
	tx := s.Write()
	tx.SetTime(time.Now().UTC())
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	for i := range scaleIdentities {
		var roles []string
		for _, a := range rng.Perm(scaleAttrs)[:1+rng.IntN(3)] {
			roles = append(roles, fmt.Sprintf("attr-%02d", a))
		}
		must(tx.Insert(KindIdentity, &Identity{Base: Base{ID: fmt.Sprintf("id-%06d", i)}, Named: Named{Name: fmt.Sprintf("identity-%06d", i)},
			TypeID: "Device", AuthPolicyID: "default", RoleAttributes: roles}))
	}
	for i := range scaleBase {
		must(tx.CreatePolicy(KindServicePolicy, scalePolicy(fmt.Sprintf("base-%03d", i), i%scaleAttrs)))
	}
	must(tx.Finish())
	tx.Commit()
	return s
}

func scalePolicy(name string, attr int) *ServicePolicy {
	return &ServicePolicy{Base: Base{ID: name}, Named: Named{Name: name}, Type: "Dial", Semantic: "AllOf",
		IdentityRoles: []string{fmt.Sprintf("#attr-%02d", attr)}, ServiceRoles: []string{}, PostureCheckRoles: []string{}}
}

// scaleSeq numbers the policies the benchmark writes: the benchmark
// function runs more than once on the same store.
var scaleSeq int

// createPolicies writes one policy of one attribute (~10,000 links) per iteration, as FSM.Apply does.
func createPolicies(b *testing.B, s *Store, prefix string) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		scaleSeq++
		tx := s.Write()
		tx.SetTime(time.Now().UTC())
		if err := tx.CreatePolicy(KindServicePolicy, scalePolicy(fmt.Sprintf("%s-%05d", prefix, scaleSeq), scaleSeq%scaleAttrs)); err != nil {
			b.Fatal(err)
		}
		if err := tx.Finish(); err != nil {
			b.Fatal(err)
		}
		tx.Commit()
	}
}

func BenchmarkPolicyCreateOnLargeModel(b *testing.B) {
	s := scaleStore(b)
	links := 0
	links = s.Read().tree(treeLinks).Len()
	b.Logf("model: %d identities, %d link rows", scaleIdentities, links)
	// The primary MemDB first (as the store runs today), then a snapshot of
	// it, whose write transactions do not track watch channels.
	b.Run("tracked", func(b *testing.B) { createPolicies(b, s, "tracked") })
	b.Run("untracked", func(b *testing.B) {
		s.db.Store(s.db.Load().Snapshot())
		createPolicies(b, s, "untracked")
	})
}
