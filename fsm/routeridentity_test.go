package fsm

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"edgectl/store"
)

// withRouterType is a bootstrapped FSM with the identity types a real
// bootstrap makes, Router among them.
func withRouterType(t *testing.T) *FSM {
	t.Helper()
	return bootstrappedWith(t, func(b *store.Bootstrap) {
		for _, n := range []string{"User", "Device", "Router"} {
			b.IdentityTypes = append(b.IdentityTypes, &store.IdentityType{Base: store.Base{ID: n, CreatedAt: t0}, Named: store.Named{Name: n}})
		}
	})
}

func applyErr(t *testing.T, f *FSM, typ CommandType, payload any) error {
	t.Helper()
	return resultErr(t, f.Apply(entry(t, f.AppliedIndex()+1, typ, payload)))
}

func tunnelerRouter(id, name string) *store.EdgeRouter {
	r := testEdgeRouter(id, name)
	r.IsTunnelerEnabled = true
	return r
}

func patchOf(t *testing.T, kv map[string]any) store.Patch {
	t.Helper()
	p := store.Patch{}
	for k, v := range kv {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p[k] = raw
	}
	return p
}

// checkRouterIdentity fails unless edge router id has its identity (named
// name) and its system policy, or has neither (name == "").
func checkRouterIdentity(t *testing.T, f *FSM, id, name string) {
	t.Helper()
	tx := f.Store().Read()
	i, ierr := store.GetAs[*store.Identity](tx, store.KindIdentity, id)
	p, perr := store.GetAs[*store.EdgeRouterPolicy](tx, store.KindEdgeRouterPolicy, id)
	if name == "" {
		if ierr == nil || perr == nil {
			t.Fatalf("router %s: identity %v (%v) and policy %v (%v) should be gone", id, i, ierr, p, perr)
		}
		return
	}
	if ierr != nil || perr != nil {
		t.Fatalf("router %s: identity %v, policy %v", id, ierr, perr)
	}
	if i.Name != name || i.TypeID != "Router" || i.AuthPolicyID != "default" || i.IsAdmin {
		t.Fatalf("router identity: %+v", i)
	}
	if !p.IsSystem || p.Name != "edge-router-"+id+"-system" || p.Semantic != "AnyOf" ||
		!slices.Equal(p.IdentityRoles, []string{"@" + id}) || !slices.Equal(p.EdgeRouterRoles, []string{"@" + id}) {
		t.Fatalf("system policy: %+v", p)
	}
}

func TestRouterIdentity_MadeWithATunnelerRouterOnly(t *testing.T) {
	f := withRouterType(t)
	applyRouterCmds(t, f, CmdEdgeRouterCreateWithIdentity, tunnelerRouter("e1", "one"),
		CmdEdgeRouterCreateWithIdentity, testEdgeRouter("e2", "two"))
	checkRouterIdentity(t, f, "e1", "one")
	checkRouterIdentity(t, f, "e2", "")
}

func TestRouterIdentity_ANameTakenFailsTheRouterToo(t *testing.T) {
	f := withRouterType(t)
	applyRouterCmds(t, f, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")})
	err := applyErr(t, f, CmdEdgeRouterCreateWithIdentity, tunnelerRouter("e1", "one"))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("want a conflict on the identity's name, got %v", err)
	}
	if f.Store().Read().Exists(store.KindEdgeRouter, "e1") {
		t.Fatal("the router was made without its identity")
	}
}

func TestRouterIdentity_FollowsTheFlagAndTheName(t *testing.T) {
	f := withRouterType(t)
	applyRouterCmds(t, f, CmdEdgeRouterCreateWithIdentity, testEdgeRouter("e1", "one"))
	at := t0.Add(time.Minute)
	applyRouterCmds(t, f, CmdEdgeRouterUpdateWithIdentity, Update{ID: "e1", At: at, Patch: patchOf(t, map[string]any{"isTunnelerEnabled": true})})
	checkRouterIdentity(t, f, "e1", "one")

	// A user's policy names the identity; turning the flag off drops the entry.
	sp, _ := json.Marshal(&store.ServicePolicy{Base: store.Base{ID: "sp1", CreatedAt: t0}, Named: store.Named{Name: "sp1"},
		Type: "Bind", Semantic: "AnyOf", IdentityRoles: []string{"@e1", "#x"}})
	applyRouterCmds(t, f, CmdPolicyCreate, PolicyCreate{Table: store.KindServicePolicy.Table, Policy: sp},
		CmdEdgeRouterUpdateWithIdentity, Update{ID: "e1", At: at, Patch: patchOf(t, map[string]any{"name": "uno"})})
	checkRouterIdentity(t, f, "e1", "uno")

	applyRouterCmds(t, f, CmdEdgeRouterUpdateWithIdentity, Update{ID: "e1", At: at, Patch: patchOf(t, map[string]any{"isTunnelerEnabled": false})})
	checkRouterIdentity(t, f, "e1", "")
	p, _ := store.GetAs[*store.ServicePolicy](f.Store().Read(), store.KindServicePolicy, "sp1")
	if !slices.Equal(p.IdentityRoles, []string{"#x"}) {
		t.Fatalf("the policy still names the identity: %v", p.IdentityRoles)
	}

	// On again: the same id, and no policy but its own names it.
	applyRouterCmds(t, f, CmdEdgeRouterUpdateWithIdentity, Update{ID: "e1", At: at, Patch: patchOf(t, map[string]any{"isTunnelerEnabled": true})})
	checkRouterIdentity(t, f, "e1", "uno")
	p, _ = store.GetAs[*store.ServicePolicy](f.Store().Read(), store.KindServicePolicy, "sp1")
	if !slices.Equal(p.IdentityRoles, []string{"#x"}) {
		t.Fatalf("the policy names the identity again: %v", p.IdentityRoles)
	}
}

func TestRouterIdentity_CannotBeDeletedRenamedOrRetypedDirectly(t *testing.T) {
	f := withRouterType(t)
	applyRouterCmds(t, f, CmdEdgeRouterCreateWithIdentity, tunnelerRouter("e1", "one"))
	if err := applyErr(t, f, CmdIdentityDelete, Delete{ID: "e1"}); !errors.Is(err, store.ErrCannotDelete) {
		t.Fatalf("delete: want cannot-delete, got %v", err)
	}
	for field, v := range map[string]any{"name": "other", "typeId": "Device"} {
		err := applyErr(t, f, CmdIdentityUpdate, Update{ID: "e1", At: t0, Patch: patchOf(t, map[string]any{field: v})})
		var de *store.Error
		if !errors.As(err, &de) || !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("%s: want invalid, got %v", field, err)
		}
	}
	// Its other fields are the user's.
	applyRouterCmds(t, f, CmdIdentityUpdate, Update{ID: "e1", At: t0, Patch: patchOf(t, map[string]any{"roleAttributes": []string{"hosts"}})})
	if err := applyErr(t, f, CmdPolicyDelete, PolicyDelete{Table: store.KindEdgeRouterPolicy.Table, ID: "e1"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("system policy delete: %v", err)
	}
	checkRouterIdentity(t, f, "e1", "one")
}

func TestRouterIdentity_GoesWithTheRouter(t *testing.T) {
	f := withRouterType(t)
	applyRouterCmds(t, f, CmdEdgeRouterCreateWithIdentity, tunnelerRouter("e1", "one"))
	erp, _ := json.Marshal(&store.EdgeRouterPolicy{Base: store.Base{ID: "p1", CreatedAt: t0}, Named: store.Named{Name: "p1"},
		Semantic: "AnyOf", IdentityRoles: []string{"@e1", "@admin"}, EdgeRouterRoles: []string{"#all"}})
	applyRouterCmds(t, f, CmdPolicyCreate, PolicyCreate{Table: store.KindEdgeRouterPolicy.Table, Policy: erp},
		CmdEdgeRouterDeleteWithIdentity, Delete{ID: "e1"})
	checkRouterIdentity(t, f, "e1", "")
	tx := f.Store().Read()
	if tx.Exists(store.KindEdgeRouter, "e1") {
		t.Fatal("router still there")
	}
	p, _ := store.GetAs[*store.EdgeRouterPolicy](tx, store.KindEdgeRouterPolicy, "p1")
	if !slices.Equal(p.IdentityRoles, []string{"@admin"}) {
		t.Fatalf("the policy still names the identity: %v", p.IdentityRoles)
	}
}

func TestRouterIdentity_AnotherTypesIdentityOfTheIDStays(t *testing.T) {
	// A router enabled before command version 9 has no identity; an
	// identity that happens to have its id is not the router's.
	f := withRouterType(t)
	applyRouterCmds(t, f, CmdEdgeRouterCreate, tunnelerRouter("e1", "one"),
		CmdIdentityCreate, IdentityCreate{Identity: identity("e1", "someone")},
		CmdEdgeRouterUpdateWithIdentity, Update{ID: "e1", At: t0, Patch: patchOf(t, map[string]any{"name": "uno"})},
		CmdEdgeRouterDeleteWithIdentity, Delete{ID: "e1"})
	if i, err := store.GetAs[*store.Identity](f.Store().Read(), store.KindIdentity, "e1"); err != nil || i.Name != "someone" {
		t.Fatalf("the user's identity: %v %v", i, err)
	}
}

func TestRouterIdentity_TheUpgradeStepGivesEarlierRoutersTheirs(t *testing.T) {
	f := withRouterType(t)
	// Routers enabled by the commands of earlier releases; the second's
	// name is an identity's already.
	applyRouterCmds(t, f, CmdEdgeRouterCreate, tunnelerRouter("e1", "one"),
		CmdEdgeRouterCreate, tunnelerRouter("e2", "two"),
		CmdEdgeRouterCreate, testEdgeRouter("e3", "three"),
		CmdIdentityCreate, IdentityCreate{Identity: identity("i2", "two")})
	if got := f.Store().Read().RouterIdentitiesMissing(); !slices.Equal(got, []string{"e1"}) {
		t.Fatalf("missing: %v", got)
	}
	raw := f.Apply(entry(t, f.AppliedIndex()+1, CmdRouterIdentitiesEnsure, At{At: t0}))
	var r struct {
		Data []string `json:"data"`
	}
	if err := json.Unmarshal(raw.([]byte), &r); err != nil || !slices.Equal(r.Data, []string{"e1"}) {
		t.Fatalf("result %s: %v", raw, err)
	}
	checkRouterIdentity(t, f, "e1", "one")
	checkRouterIdentity(t, f, "e3", "")
	if got := f.Store().Read().RouterIdentitiesMissing(); len(got) != 0 {
		t.Fatalf("still missing after the step: %v", got)
	}
}
