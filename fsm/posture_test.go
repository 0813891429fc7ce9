package fsm

import (
	"encoding/json"
	"testing"
	"time"

	"edgectl/store"

	"github.com/hashicorp/raft"
)

// timedEntry encodes a command made at `at`.
func timedEntry(t *testing.T, index uint64, at time.Time, typ CommandType, payload any) *raft.Log {
	t.Helper()
	raw, _ := json.Marshal(payload)
	data, _ := json.Marshal(Command{Type: typ, Payload: raw, At: at})
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: data}
}

func TestPostureSweep_MFATimeoutEndsSessionsOnEveryNodeAlike(t *testing.T) {
	f := bootstrapped(t)
	mfaAt := t0
	apply := func(i uint64, at time.Time, typ CommandType, p any) {
		t.Helper()
		if err := resultErr(t, f.Apply(timedEntry(t, i, at, typ, p))); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
	}
	apply(2, t0, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")})
	apply(3, t0, CmdAPISessionCreate, &store.APISession{Base: store.Base{ID: "as1", CreatedAt: t0}, IdentityID: "i1", TokenHash: "h",
		IsMfaComplete: true, LastMfaAt: &mfaAt})
	tx := f.Store().Write()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tx.Insert(store.KindService, &store.Service{Base: store.Base{ID: "s1"}, Named: store.Named{Name: "s1"}, RoleAttributes: []string{"s"}}))
	must(tx.Insert(store.KindPostureCheck, &store.PostureCheck{Base: store.Base{ID: "mfa"}, Named: store.Named{Name: "mfa"}, TypeID: "MFA",
		TimeoutSeconds: 600, RoleAttributes: []string{"m"}}))
	must(tx.Insert(store.KindServicePolicy, &store.ServicePolicy{Base: store.Base{ID: "p1"}, Named: store.Named{Name: "p1"}, Type: "Dial",
		Semantic: "AllOf", IdentityRoles: []string{"#a"}, ServiceRoles: []string{"#s"}, PostureCheckRoles: []string{"#m"}}))
	tx.Commit()
	apply(4, t0.Add(time.Minute), CmdSessionCreate, &store.Session{Base: store.Base{ID: "sess1", CreatedAt: t0}, APISessionID: "as1",
		IdentityID: "i1", ServiceID: "s1", Type: "Dial"})

	apply(5, t0.Add(9*time.Minute), CmdPostureSweep, PostureSweep{})
	if !f.Store().Read().Exists(store.KindSession, "sess1") {
		t.Fatal("the sweep removed a session inside the MFA timeout")
	}
	apply(6, t0.Add(11*time.Minute), CmdPostureSweep, PostureSweep{})
	if f.Store().Read().Exists(store.KindSession, "sess1") {
		t.Fatal("the session survived the MFA timeout")
	}
}

func TestPostureData_GoesWithItsAPISession(t *testing.T) {
	f := bootstrapped(t)
	f.Apply(timedEntry(t, 2, t0, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")}))
	f.Apply(timedEntry(t, 3, t0, CmdAPISessionCreate, &store.APISession{Base: store.Base{ID: "as1", CreatedAt: t0}, IdentityID: "i1", TokenHash: "h"}))
	if err := resultErr(t, f.Apply(timedEntry(t, 4, t0, CmdPostureResponses, PostureResponses{APISessionID: "as1",
		Responses: []store.PostureResponse{{TypeID: "DOMAIN", CheckID: "c", Domain: "corp"}, {TypeID: store.PostureEndpointState, Woken: true}}}))); err != nil {
		t.Fatal(err)
	}
	pd := f.Store().Read().PostureDataOf("as1")
	if pd == nil || pd.Domain == nil || pd.Domain.Domain != "corp" || pd.WokenAt == nil || !pd.WokenAt.Equal(t0) {
		t.Fatalf("posture data %+v", pd)
	}
	f.Apply(timedEntry(t, 5, t0, CmdAPISessionsDelete, DeleteMany{IDs: []string{"as1"}}))
	if f.Store().Read().PostureDataOf("as1") != nil {
		t.Fatal("posture data outlived its API session")
	}
}
