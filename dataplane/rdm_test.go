package dataplane

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"edgectl/store"

	"google.golang.org/protobuf/encoding/protowire"
)

// summary reads an event back as "action model id" (or, for a policy
// change, "add|remove policy related:ids"), enough to check order and kind.
func summary(t *testing.T, ev []byte) string {
	t.Helper()
	var action uint64
	var out string
	for len(ev) > 0 {
		num, typ, n := protowire.ConsumeTag(ev)
		ev = ev[n:]
		switch typ {
		case protowire.VarintType:
			v, m := protowire.ConsumeVarint(ev)
			ev = ev[m:]
			if num == 1 {
				action = v
			}
		case protowire.BytesType:
			raw, m := protowire.ConsumeBytes(ev)
			ev = ev[m:]
			fields := map[protowire.Number][]string{}
			var ints = map[protowire.Number]uint64{}
			for len(raw) > 0 {
				fn, ft, k := protowire.ConsumeTag(raw)
				raw = raw[k:]
				if ft == protowire.VarintType {
					v, k := protowire.ConsumeVarint(raw)
					raw, ints[fn] = raw[k:], v
					continue
				}
				b, k := protowire.ConsumeBytes(raw)
				raw = raw[k:]
				fields[fn] = append(fields[fn], string(b))
			}
			names := map[protowire.Number]string{10: "identity", 11: "service", 12: "policy", 13: "postureCheck", 17: "configType", 18: "config"}
			if num == 16 {
				verb := "remove"
				if ints[4] == 1 {
					verb = "add"
				}
				out = fmt.Sprintf("%s %s %d:%s", verb, fields[1][0], ints[3], strings.Join(fields[2], ","))
			} else {
				id := ""
				if len(fields[1]) > 0 {
					id = fields[1][0]
				}
				out = fmt.Sprintf("%s %s %s", []string{"create", "update", "delete"}[action], names[num], id)
			}
		}
	}
	return out
}

// write applies fn in one transaction that collects its changes, as the
// FSM does, and returns the events the data model makes of them.
func write(t *testing.T, s *store.Store, fn func(tx *store.Tx) error) []string {
	t.Helper()
	tx := s.Write()
	tx.SetTime(time.Unix(1700000000, 0))
	tx.TrackChanges(true)
	if err := fn(tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Finish(); err != nil {
		t.Fatal(err)
	}
	changes := tx.Changes()
	tx.Commit()
	var out []string
	for _, ev := range changeEvents(s.Read(), changes) {
		out = append(out, summary(t, ev))
	}
	return out
}

func equal(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestChangeEvents_EntitiesComeBeforeThePoliciesTakeThemAndLeaveThemFirst(t *testing.T) {
	s := store.New()
	base := func(id string) store.Base {
		return store.Base{ID: id, CreatedAt: time.Unix(1, 0), UpdatedAt: time.Unix(1, 0)}
	}
	equal(t, "a policy", write(t, s, func(tx *store.Tx) error {
		if err := tx.Insert(store.KindPostureCheckType, &store.PostureCheckType{Base: base("MAC"), Named: store.Named{Name: "MAC"}}); err != nil {
			return err
		}
		if err := tx.Insert(store.KindIdentityType, &store.IdentityType{Base: base("Device"), Named: store.Named{Name: "Device"}}); err != nil {
			return err
		}
		if err := tx.Insert(store.KindAuthPolicy, &store.AuthPolicy{Base: base("ap"), Named: store.Named{Name: "ap"}}); err != nil {
			return err
		}
		return tx.CreatePolicy(store.KindServicePolicy, &store.ServicePolicy{Base: base("sp"), Named: store.Named{Name: "sp"},
			Type: "Dial", Semantic: "AnyOf", IdentityRoles: []string{"#staff"}, ServiceRoles: []string{"#web"}, PostureCheckRoles: []string{"#pc"}})
	}), "delete policy sp", "create policy sp")
	equal(t, "a service the policy selects", write(t, s, func(tx *store.Tx) error {
		return tx.CreateService(&store.Service{Base: base("svc"), Named: store.Named{Name: "web"}, RoleAttributes: []string{"web"}})
	}), "create service svc", "add sp 1:svc")
	// Policies do not name their posture checks to routers (policyEvents).
	equal(t, "a posture check the policy requires", write(t, s, func(tx *store.Tx) error {
		return tx.CreatePostureCheck(&store.PostureCheck{Base: base("pc"), Named: store.Named{Name: "mac"}, TypeID: "MAC",
			MacAddresses: []string{"AA-BB-CC-DD-EE-FF"}, RoleAttributes: []string{"pc"}, Version: 1})
	}), "create postureCheck pc")
	equal(t, "an identity", write(t, s, func(tx *store.Tx) error {
		return tx.CreateIdentity(&store.Identity{Base: base("id"), Named: store.Named{Name: "laptop"}, TypeID: "Device", AuthPolicyID: "ap",
			RoleAttributes: []string{"staff"}}, nil, nil)
	}), "create identity id", "add sp 2:id")
	equal(t, "the identity's attributes changed", write(t, s, func(tx *store.Tx) error {
		return tx.UpdateIdentity("id", store.Patch{"roleAttributes": []byte(`["other"]`)}, time.Unix(2, 0))
	}), "remove sp 2:id", "update identity id")
	equal(t, "the posture check deleted", write(t, s, func(tx *store.Tx) error {
		return tx.DeletePostureCheck("pc")
	}), "delete postureCheck pc")
}

// TestChangeEvents_APolicyLeavesTheIdentitiesItNoLongerSelects: routers
// keep an identity's policies on the identity, so a policy whose identity
// roles change (or that goes) first takes out the identities it no longer
// selects; without that a router's own tunneler kept a Bind it had lost.
func TestChangeEvents_APolicyLeavesTheIdentitiesItNoLongerSelects(t *testing.T) {
	s := store.New()
	base := func(id string) store.Base {
		return store.Base{ID: id, CreatedAt: time.Unix(1, 0), UpdatedAt: time.Unix(1, 0)}
	}
	write(t, s, func(tx *store.Tx) error {
		if err := tx.Insert(store.KindIdentityType, &store.IdentityType{Base: base("Device"), Named: store.Named{Name: "Device"}}); err != nil {
			return err
		}
		if err := tx.Insert(store.KindAuthPolicy, &store.AuthPolicy{Base: base("ap"), Named: store.Named{Name: "ap"}}); err != nil {
			return err
		}
		for _, id := range []string{"a", "b", "c"} {
			if err := tx.CreateIdentity(&store.Identity{Base: base(id), Named: store.Named{Name: id}, TypeID: "Device", AuthPolicyID: "ap",
				RoleAttributes: []string{"staff"}}, nil, nil); err != nil {
				return err
			}
		}
		return tx.CreatePolicy(store.KindServicePolicy, &store.ServicePolicy{Base: base("sp"), Named: store.Named{Name: "sp"},
			Type: "Bind", Semantic: "AnyOf", IdentityRoles: []string{"@a", "@b", "@c"}})
	})
	equal(t, "two identities out of the policy", write(t, s, func(tx *store.Tx) error {
		return tx.UpdatePolicy(store.KindServicePolicy, "sp", store.Patch{"identityRoles": []byte(`["@b"]`)}, time.Unix(2, 0))
	}), "remove sp 2:a,c", "delete policy sp", "create policy sp", "add sp 2:b")
	equal(t, "the same identities by attribute", write(t, s, func(tx *store.Tx) error {
		return tx.UpdatePolicy(store.KindServicePolicy, "sp", store.Patch{"identityRoles": []byte(`["#staff"]`)}, time.Unix(3, 0))
	}), "delete policy sp", "create policy sp", "add sp 2:a,b,c")
	equal(t, "the policy gone", write(t, s, func(tx *store.Tx) error {
		return tx.DeletePolicy(store.KindServicePolicy, "sp")
	}), "remove sp 2:a,b,c", "delete policy sp")
}

func TestRDMLog_CoversTheIndexesItKeeps(t *testing.T) {
	var l rdmLog
	l.reset(10)
	for _, i := range []uint64{12, 15, 20} {
		l.add(rdmSet{index: i})
	}
	for _, c := range []struct {
		after uint64
		want  []uint64
		ok    bool
	}{{8, nil, false}, {9, []uint64{12, 15, 20}, true}, {12, []uint64{15, 20}, true}, {20, nil, true}, {30, nil, true}} {
		sets, ok := l.since(c.after)
		var got []uint64
		for _, s := range sets {
			got = append(got, s.index)
		}
		if ok != c.ok || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("since %d: %v %v, want %v %v", c.after, got, ok, c.want, c.ok)
		}
	}
	for i := uint64(21); i < 21+maxLoggedSets; i++ {
		l.add(rdmSet{index: i})
	}
	if _, ok := l.since(19); ok {
		t.Fatal("the log still claims entries it dropped")
	}
	if sets, ok := l.since(20); !ok || len(sets) != maxLoggedSets {
		t.Fatalf("after the trim: %d sets, %v", len(sets), ok)
	}
}

func TestSyncIDs_GrowAsStrings(t *testing.T) {
	var s routerSync
	now := time.Unix(1700000000, 0)
	a := s.nextSyncID(now)
	b := s.nextSyncID(now) // the same instant
	c := s.nextSyncID(now.Add(-time.Hour))
	if !(a < b && b < c) {
		t.Fatalf("sync ids %q %q %q do not grow", a, b, c)
	}
}

// BenchmarkChangeEvents_IdentityCreate: the data model work a node does
// per identity created while routers are connected (the FSM's apply of the
// same create is about 51 µs, docs/performance.md).
func BenchmarkChangeEvents_IdentityCreate(b *testing.B) {
	s := benchModel(b, 0, 0)
	base, must := benchHelpers(b)
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		tx := s.Write()
		tx.SetTime(time.Unix(1700000000, 0))
		tx.TrackChanges(true)
		must(tx.CreateIdentity(&store.Identity{Base: base(fmt.Sprintf("id%09d", i)), Named: store.Named{Name: fmt.Sprintf("id%09d", i)},
			TypeID: "Device", AuthPolicyID: "ap", RoleAttributes: []string{fmt.Sprintf("r%d", i%5)}}, nil, nil))
		must(tx.Finish())
		changes := tx.Changes()
		tx.Commit()
		b.StartTimer()
		_ = changeEvents(s.Read(), changes)
		b.StopTimer()
	}
}

// BenchmarkFullState_10kIdentities: the full state a node sends a router
// that subscribes without a usable index, for 10,000 identities, 100
// services and 20 policies.
func BenchmarkFullState_10kIdentities(b *testing.B) {
	s := benchModel(b, 10000, 100)
	m := New(Config{Store: s})
	b.ResetTimer()
	var size int
	for range b.N {
		events := m.fullState(s.Read())
		size = 0
		for _, e := range events {
			size += len(e)
		}
	}
	b.ReportMetric(float64(size), "bytes")
}

func benchHelpers(b *testing.B) (func(string) store.Base, func(error)) {
	base := func(id string) store.Base {
		return store.Base{ID: id, CreatedAt: time.Unix(1, 0), UpdatedAt: time.Unix(1, 0)}
	}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	return base, must
}

// benchModel is a model of 20 Dial policies (each selecting one of five
// identity attributes, and the services with "web"), services "web" and
// identities spread over the five attributes.
func benchModel(b *testing.B, identities, services int) *store.Store {
	base, must := benchHelpers(b)
	s := store.New()
	tx := s.Write()
	tx.SetTime(time.Unix(1700000000, 0))
	must(tx.Insert(store.KindIdentityType, &store.IdentityType{Base: base("Device"), Named: store.Named{Name: "Device"}}))
	must(tx.Insert(store.KindAuthPolicy, &store.AuthPolicy{Base: base("ap"), Named: store.Named{Name: "ap"}}))
	for i := range services {
		must(tx.CreateService(&store.Service{Base: base(fmt.Sprintf("svc%03d", i)), Named: store.Named{Name: fmt.Sprintf("svc%03d", i)}, RoleAttributes: []string{"web"}}))
	}
	for i := range 20 {
		must(tx.CreatePolicy(store.KindServicePolicy, &store.ServicePolicy{Base: base(fmt.Sprintf("sp%d", i)), Named: store.Named{Name: fmt.Sprintf("sp%d", i)},
			Type: "Dial", Semantic: "AnyOf", IdentityRoles: []string{fmt.Sprintf("#r%d", i%5)}, ServiceRoles: []string{"#web"}}))
	}
	for i := range identities {
		must(tx.CreateIdentity(&store.Identity{Base: base(fmt.Sprintf("id%09d", i)), Named: store.Named{Name: fmt.Sprintf("id%09d", i)},
			TypeID: "Device", AuthPolicyID: "ap", RoleAttributes: []string{fmt.Sprintf("r%d", i%5)}}, nil, nil))
	}
	must(tx.Finish())
	tx.Commit()
	return s
}
