package fsm

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"edgectl/store"
)

// withPostureTypes is a bootstrapped FSM whose bootstrap also made the
// posture check types (bootstrapped leaves them out).
func withPostureTypes(t *testing.T) *FSM {
	t.Helper()
	return bootstrappedWith(t, func(b *store.Bootstrap) {
		b.IdentityTypes = []*store.IdentityType{{Base: store.Base{ID: "User", CreatedAt: t0}, Named: store.Named{Name: "User"}}}
		for _, n := range []string{"OS", "MFA", "DOMAIN"} {
			b.PostureCheckTypes = append(b.PostureCheckTypes, &store.PostureCheckType{Base: store.Base{ID: n, CreatedAt: t0}, Named: store.Named{Name: n}, Version: "1"})
		}
	})
}

func routerStr(s string) *string { return &s }

func testEdgeRouter(id, name string, roles ...string) *store.EdgeRouter {
	exp := t0.Add(time.Hour)
	return &store.EdgeRouter{Base: store.Base{ID: id, CreatedAt: t0, UpdatedAt: t0}, Named: store.Named{Name: name}, RoleAttributes: roles,
		RouterEnrollment: store.RouterEnrollment{EnrollmentToken: routerStr("tok-" + id), EnrollmentJwt: routerStr("jwt"), EnrollmentCreatedAt: &t0, EnrollmentExpiresAt: &exp}}
}

// applyRouterCmds applies commands in order from index 2 and fails on the first error.
func applyRouterCmds(t *testing.T, f *FSM, cmds ...any) {
	t.Helper()
	for i := 0; i+1 < len(cmds); i += 2 {
		if err := resultErr(t, f.Apply(entry(t, f.AppliedIndex()+1, cmds[i].(CommandType), cmds[i+1]))); err != nil {
			t.Fatalf("%s: %v", cmds[i], err)
		}
	}
}

func TestApply_ReEnrollDropsTheCertificateAndKeepsTheRest(t *testing.T) {
	f := withPostureTypes(t)
	er := testEdgeRouter("e1", "one", "a")
	er.IsVerified, er.Fingerprint, er.CertPem, er.EnrollmentToken, er.EnrollmentJwt = true, routerStr("fp"), routerStr("pem"), nil, nil
	er.Cost, er.Hostname = 5, "host"
	applyRouterCmds(t, f, CmdEdgeRouterCreate, er)
	at := t0.Add(time.Minute)
	exp := at.Add(time.Hour)
	applyRouterCmds(t, f, CmdEdgeRouterReEnroll, ReEnroll{ID: "e1", At: at, Enrollment: store.RouterEnrollment{
		EnrollmentToken: routerStr("new"), EnrollmentJwt: routerStr("jwt2"), EnrollmentCreatedAt: &at, EnrollmentExpiresAt: &exp,
		IsVerified: true, Fingerprint: routerStr("smuggled")}})
	tx := f.Store().Read()
	got, _ := store.GetAs[*store.EdgeRouter](tx, store.KindEdgeRouter, "e1")
	if got.IsVerified || got.Fingerprint != nil || got.CertPem != nil || *got.EnrollmentToken != "new" || !got.UpdatedAt.Equal(at) {
		t.Fatalf("after re-enroll: %+v", got.RouterEnrollment)
	}
	if got.Cost != 5 || got.Hostname != "host" || got.Name != "one" || got.RoleAttributes[0] != "a" {
		t.Fatalf("re-enroll changed other fields: %+v", got)
	}
	if r := tx.RouterByEnrollmentToken("new"); r == nil || r.GetID() != "e1" || tx.RouterByEnrollmentToken("tok-e1") != nil {
		t.Fatal("the enrollment token index does not follow re-enroll")
	}
	err := resultErr(t, f.Apply(entry(t, 10, CmdEdgeRouterReEnroll, ReEnroll{ID: "nope", At: at})))
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("re-enroll of a missing router: %v", err)
	}
}

func TestApply_UpdateEdgeRouterKeepsEnrollmentState(t *testing.T) {
	f := withPostureTypes(t)
	applyRouterCmds(t, f, CmdEdgeRouterCreate, testEdgeRouter("e1", "one"),
		CmdEdgeRouterUpdate, Update{ID: "e1", At: t0, Patch: store.Patch{"cost": json.RawMessage(`3`), "enrollmentToken": json.RawMessage(`"forged"`)}})
	got, _ := store.GetAs[*store.EdgeRouter](f.Store().Read(), store.KindEdgeRouter, "e1")
	if got.Cost != 3 || *got.EnrollmentToken != "tok-e1" {
		t.Fatalf("after update: cost %d token %s", got.Cost, *got.EnrollmentToken)
	}
}

func TestApply_PostureCheckVersionRisesAndTypeIsFixed(t *testing.T) {
	f := withPostureTypes(t)
	c := &store.PostureCheck{Base: store.Base{ID: "p1", CreatedAt: t0}, Named: store.Named{Name: "mfa"}, TypeID: "MFA", Version: 7}
	applyRouterCmds(t, f, CmdPostureCheckCreate, c,
		CmdPostureCheckUpdate, Update{ID: "p1", At: t0, Patch: store.Patch{"timeoutSeconds": json.RawMessage(`30`)}},
		CmdPostureCheckUpdate, Update{ID: "p1", At: t0, Patch: store.Patch{"promptOnWake": json.RawMessage(`true`)}})
	got, _ := store.GetAs[*store.PostureCheck](f.Store().Read(), store.KindPostureCheck, "p1")
	if got.Version != 3 || got.TimeoutSeconds != 30 || !got.PromptOnWake {
		t.Fatalf("after two updates: %+v", got)
	}
	err := resultErr(t, f.Apply(entry(t, 10, CmdPostureCheckUpdate, Update{ID: "p1", At: t0, Patch: store.Patch{"typeId": json.RawMessage(`"OS"`)}})))
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("type change: %v", err)
	}
	bad := &store.PostureCheck{Base: store.Base{ID: "p2", CreatedAt: t0}, Named: store.Named{Name: "x"}, TypeID: "FACE"}
	if err := resultErr(t, f.Apply(entry(t, 11, CmdPostureCheckCreate, bad))); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("unknown type: %v", err)
	}
}

func TestApply_RouterDeleteIsRefusedWhileATerminatorUsesIt(t *testing.T) {
	f := withPostureTypes(t)
	applyRouterCmds(t, f, CmdEdgeRouterCreate, testEdgeRouter("e1", "one"),
		CmdRouterCreate, &store.Router{Base: store.Base{ID: "r1", CreatedAt: t0}, Named: store.Named{Name: "tr"}})
	tx := f.Store().Write()
	if err := tx.Insert(store.KindService, &store.Service{Base: store.Base{ID: "s1", CreatedAt: t0}, Named: store.Named{Name: "s"}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"e1", "r1"} {
		if err := tx.CreateTerminator(&store.Terminator{Base: store.Base{ID: "t-" + r, CreatedAt: t0}, ServiceID: "s1", RouterID: r}); err != nil {
			t.Fatal(err)
		}
	}
	tx.Commit()
	for _, c := range []struct {
		cmd CommandType
		id  string
	}{{CmdEdgeRouterDelete, "e1"}, {CmdRouterDelete, "r1"}} {
		if err := resultErr(t, f.Apply(entry(t, f.AppliedIndex()+1, c.cmd, Delete{ID: c.id}))); !errors.Is(err, store.ErrReferenced) {
			t.Fatalf("%s: want referenced, got %v", c.cmd, err)
		}
	}
	if tx := f.Store().Read(); !tx.Exists(store.KindEdgeRouter, "e1") || !tx.Exists(store.KindRouter, "r1") {
		t.Fatal("a refused delete removed the router")
	}
}

func TestSnapshot_RoundTripKeepsRoutersAndPostureChecks(t *testing.T) {
	f := withPostureTypes(t)
	applyRouterCmds(t, f,
		CmdEdgeRouterCreate, testEdgeRouter("e1", "one", "east", "big"),
		CmdEdgeRouterCreate, testEdgeRouter("e2", "two", "east"),
		CmdRouterCreate, &store.Router{Base: store.Base{ID: "r1", CreatedAt: t0}, Named: store.Named{Name: "tr"}, Cost: 9,
			RouterEnrollment: store.RouterEnrollment{EnrollmentToken: routerStr("rtok")}},
		CmdPostureCheckCreate, &store.PostureCheck{Base: store.Base{ID: "p1", CreatedAt: t0}, Named: store.Named{Name: "os"}, TypeID: "OS",
			RoleAttributes: []string{"strict"}, OperatingSystems: []store.OperatingSystem{{Type: "LINUX", Versions: []string{">=5"}}}},
		CmdPostureCheckUpdate, Update{ID: "p1", At: t0, Patch: store.Patch{"name": json.RawMessage(`"os2"`)}},
	)
	g := snapshotRoundTrip(t, f)
	if !bytes.Equal(dump(t, f.Store().Read()), dump(t, g.Store().Read())) {
		t.Fatal("the restored model differs from the snapshotted one")
	}
	tx := g.Store().Read()
	if tx.Count(store.KindEdgeRouter) != 2 || tx.Count(store.KindRouter) != 1 || tx.Count(store.KindPostureCheck) != 1 {
		t.Fatalf("counts after restore: %d %d %d", tx.Count(store.KindEdgeRouter), tx.Count(store.KindRouter), tx.Count(store.KindPostureCheck))
	}
	pc, _ := store.GetAs[*store.PostureCheck](tx, store.KindPostureCheck, "p1")
	if pc.Version != 2 || pc.Name != "os2" || pc.OperatingSystems[0].Versions[0] != ">=5" {
		t.Fatalf("posture check after restore: %+v", pc)
	}
	if r := tx.RouterByEnrollmentToken("rtok"); r == nil || r.GetID() != "r1" {
		t.Fatal("the enrollment token index was not rebuilt")
	}
	var attrs []string
	tx.RoleAttributes(store.KindEdgeRouter, func(a string) bool { attrs = append(attrs, a); return true })
	if len(attrs) != 2 || attrs[0] != "big" || attrs[1] != "east" {
		t.Fatalf("role attributes after restore: %v", attrs)
	}
}
