package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// The cost of one policy write on a large model: 100,000 identities, and
// policies that select ~10,000 of them each. A policy write must cost the
// policy, not the identities it selects.
//
//	go test -run '^$' -bench 'OnLargeModel' -benchtime 10x ./store/

const (
	scaleIdentities = 100000
	scaleAttrs      = 20
	scaleBase       = 100 // policies of one attribute already in the model, each selecting ~10,000
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
	selected := 0
	s.Read().PolicyEntities(RelServicePolicyIdentity, "base-000", func(string) bool { selected++; return true })
	b.Logf("model: %d identities, %d policies; one policy of one attribute selects %d", scaleIdentities, scaleBase, selected)
	createPolicies(b, s, "p")
}

// The policies that select an identity, and the identities a policy selects,
// on the same model: both are resolved from the indexes on each read.
func BenchmarkResolveOnLargeModel(b *testing.B) {
	s := scaleStore(b)
	tx := s.Read()
	b.Run("EntityPolicies", func(b *testing.B) {
		n := 0
		for i := 0; i < b.N; i++ {
			tx.EntityPolicies(RelServicePolicyIdentity, fmt.Sprintf("id-%06d", i%scaleIdentities), func(string) bool { n++; return true })
		}
		b.ReportMetric(float64(n)/float64(b.N), "policies/op")
	})
	b.Run("PolicyEntities", func(b *testing.B) {
		n := 0
		for i := 0; i < b.N; i++ {
			tx.PolicyEntities(RelServicePolicyIdentity, fmt.Sprintf("base-%03d", i%scaleBase), func(string) bool { n++; return true })
		}
		b.ReportMetric(float64(n)/float64(b.N), "identities/op")
	})
}

// BenchmarkSnapshotOfLargeModel is a snapshot of the large model (dump), its
// restore (what a restart or a follower's catch-up does), and beside it the
// decode of the same stream alone: Load decodes beside its inserts, so the slower of the
// two sets its time.
func BenchmarkSnapshotOfLargeModel(b *testing.B) {
	CrossCheckDecoding(false) // measure what nodes run
	b.Cleanup(func() { CrossCheckDecoding(true) })
	s := scaleStore(b)
	var buf bytes.Buffer
	if err := s.Read().Dump(&buf); err != nil {
		b.Fatal(err)
	}
	b.Logf("snapshot stream of %d records: %d bytes", scaleIdentities+scaleBase, buf.Len())
	b.Run("dump", func(b *testing.B) {
		var out bytes.Buffer
		for b.Loop() {
			out.Reset()
			if err := s.Read().Dump(&out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if err := New().Load(NewSnapshotDecoder(bytes.NewReader(buf.Bytes()))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode-only", func(b *testing.B) {
		for b.Loop() {
			decodeSnapshot(b, buf.Bytes())
		}
	})
}
