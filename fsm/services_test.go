package fsm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"edgectl/store"
)

// svcApplier applies commands at increasing indexes and fails the test on a
// domain error unless the caller asks for the error.
type svcApplier struct {
	t *testing.T
	f *FSM
	i uint64
}

func newSvcApplier(t *testing.T) *svcApplier { return &svcApplier{t: t, f: bootstrapped(t), i: 1} }

func (a *svcApplier) try(typ CommandType, payload any) error {
	a.t.Helper()
	a.i++
	return resultErr(a.t, a.f.Apply(entry(a.t, a.i, typ, payload)))
}

func (a *svcApplier) must(typ CommandType, payload any) {
	a.t.Helper()
	if err := a.try(typ, payload); err != nil {
		a.t.Fatalf("%s: %v", typ, err)
	}
}

func svcBase(id string, at time.Time) store.Base {
	return store.Base{ID: id, CreatedAt: at, UpdatedAt: at}
}

// serviceFamily fills the model with one of each record of the services family:
// type T (schema), configs c1 (T) and c2 (U), service s1 using c1, router r1,
// terminator t1, identity i1 overriding c2 for s1.
func serviceFamily(a *svcApplier) {
	a.must(CmdConfigTypeCreate, &store.ConfigType{Base: svcBase("T", t0), Named: store.Named{Name: "t"}, Schema: json.RawMessage(`{"type":"object"}`)})
	a.must(CmdConfigTypeCreate, &store.ConfigType{Base: svcBase("U", t0), Named: store.Named{Name: "u"}})
	a.must(CmdConfigCreate, ConfigCreate{Config: &store.Config{Base: svcBase("c1", t0), Named: store.Named{Name: "c1"}, ConfigTypeID: "T",
		Data: json.RawMessage(`{"n":9007199254740993}`)}, TypeVersion: t0})
	a.must(CmdConfigCreate, ConfigCreate{Config: &store.Config{Base: svcBase("c2", t0), Named: store.Named{Name: "c2"}, ConfigTypeID: "U",
		Data: json.RawMessage(`{}`)}, TypeVersion: t0})
	a.must(CmdServiceCreate, &store.Service{Base: svcBase("s1", t0), Named: store.Named{Name: "s1"}, Configs: []string{"c1"}, TerminatorStrategy: "smartrouting"})
	a.must(CmdRouterCreate, &store.Router{Base: svcBase("r1", t0), Named: store.Named{Name: "r1"}})
	a.must(CmdTerminatorCreate, &store.Terminator{Base: svcBase("t1", t0), ServiceID: "s1", RouterID: "r1", Binding: "transport", Address: "a"})
	a.must(CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")})
	a.must(CmdIdentityServiceConfigsAdd, ServiceConfigs{IdentityID: "i1", Items: []store.ServiceConfigRef{{ServiceID: "s1", ConfigID: "c2"}}, At: t0})
}

func TestApply_ConfigValidatedAgainstAnOlderTypeIsStale(t *testing.T) {
	a := newSvcApplier(t)
	serviceFamily(a)
	t1 := t0.Add(time.Minute)
	a.must(CmdConfigTypeUpdate, ConfigTypeUpdate{Update: Update{ID: "T", Patch: store.Patch{"name": json.RawMessage(`"t2"`)}, At: t1}})
	err := a.try(CmdConfigCreate, ConfigCreate{Config: &store.Config{Base: svcBase("c3", t1), Named: store.Named{Name: "c3"}, ConfigTypeID: "T",
		Data: json.RawMessage(`{}`)}, TypeVersion: t0})
	if !store.IsStale(err) || a.f.Store().Read().Exists(store.KindConfig, "c3") {
		t.Fatalf("create against an old type version: %v", err)
	}
	patch := store.Patch{"data": json.RawMessage(`{"x":1}`)}
	if err := a.try(CmdConfigUpdate, ConfigUpdate{Update: Update{ID: "c1", Patch: patch, At: t1}, TypeVersion: &t0}); !store.IsStale(err) {
		t.Fatalf("data update against an old type version: %v", err)
	}
	if err := a.try(CmdConfigUpdate, ConfigUpdate{Update: Update{ID: "c1", Patch: patch, At: t1}}); !store.IsStale(err) {
		t.Fatalf("data update without a type version: %v", err)
	}
	a.must(CmdConfigUpdate, ConfigUpdate{Update: Update{ID: "c1", Patch: patch, At: t1}, TypeVersion: &t1})
	// The type of a config never changes, whatever the patch says.
	a.must(CmdConfigUpdate, ConfigUpdate{Update: Update{ID: "c1", Patch: store.Patch{"configTypeId": json.RawMessage(`"U"`)}, At: t1}})
	c, _ := store.GetAs[*store.Config](a.f.Store().Read(), store.KindConfig, "c1")
	if string(c.Data) != `{"x":1}` || c.ConfigTypeID != "T" {
		t.Fatalf("config after updates: %+v", c)
	}
}

func TestApply_SchemaChangeIsStaleUnlessEveryConfigWasChecked(t *testing.T) {
	a := newSvcApplier(t)
	serviceFamily(a)
	t1 := t0.Add(time.Minute)
	newSchema := store.Patch{"schema": json.RawMessage(`{"type":"object","required":["n"]}`)}
	for name, checked := range map[string]map[string]time.Time{
		"config missing":      nil,
		"config moved since":  {"c1": t1},
		"unknown extra entry": {"c1": t0, "c9": t0},
	} {
		err := a.try(CmdConfigTypeUpdate, ConfigTypeUpdate{Update: Update{ID: "T", Patch: newSchema, At: t1}, Checked: checked})
		if !store.IsStale(err) {
			t.Fatalf("%s: want stale, got %v", name, err)
		}
	}
	a.must(CmdConfigTypeUpdate, ConfigTypeUpdate{Update: Update{ID: "T", Patch: newSchema, At: t1}, Checked: map[string]time.Time{"c1": t0}})
	// The same schema written again (other key order) is no schema change: nothing to check.
	same := store.Patch{"schema": json.RawMessage(`{"required":["n"],"type":"object"}`), "name": json.RawMessage(`"t9"`)}
	a.must(CmdConfigTypeUpdate, ConfigTypeUpdate{Update: Update{ID: "T", Patch: same, At: t1.Add(time.Minute)}})
}

func TestApply_DeletesCheckReferencesAndCascade(t *testing.T) {
	a := newSvcApplier(t)
	serviceFamily(a)
	for _, c := range []struct {
		typ CommandType
		id  string
	}{{CmdConfigTypeDelete, "T"}, {CmdConfigDelete, "c1"}, {CmdConfigDelete, "c2"}} {
		if err := a.try(c.typ, Delete{ID: c.id}); !errors.Is(err, store.ErrReferenced) {
			t.Fatalf("%s %s: want referenced, got %v", c.typ, c.id, err)
		}
	}
	a.must(CmdServiceDelete, Delete{ID: "s1"})
	tx := a.f.Store().Read()
	if tx.Exists(store.KindTerminator, "t1") || tx.Count(store.KindIdentityServiceConfig) != 0 || tx.Count(store.KindTerminator) != 0 {
		t.Fatal("the service's terminators or overrides survived it")
	}
	a.must(CmdConfigDelete, Delete{ID: "c1"})
	a.must(CmdConfigDelete, Delete{ID: "c2"})
	a.must(CmdConfigTypeDelete, Delete{ID: "T"})
	if err := a.try(CmdServiceDelete, Delete{ID: "s1"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestApply_ServiceRulesAndTerminatorRefs(t *testing.T) {
	a := newSvcApplier(t)
	serviceFamily(a)
	a.must(CmdConfigCreate, ConfigCreate{Config: &store.Config{Base: svcBase("c3", t0), Named: store.Named{Name: "c3"}, ConfigTypeID: "T", Data: json.RawMessage(`{}`)}, TypeVersion: t0})
	err := a.try(CmdServiceCreate, &store.Service{Base: svcBase("s2", t0), Named: store.Named{Name: "s2"}, Configs: []string{"c1", "c3"}})
	if de := (*store.Error)(nil); !errors.As(err, &de) || de.Field != "configs[1]" {
		t.Fatalf("two configs of one type: %v", err)
	}
	a.must(CmdServiceCreate, &store.Service{Base: svcBase("s2", t0), Named: store.Named{Name: "s2"}, EncryptionRequired: true})
	if err := a.try(CmdServiceUpdate, Update{ID: "s2", Patch: store.Patch{"encryptionRequired": json.RawMessage(`false`)}, At: t0}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("encryptionRequired change: %v", err)
	}
	a.must(CmdEdgeRouterCreate, &store.EdgeRouter{Base: svcBase("e1", t0), Named: store.Named{Name: "e1"}})
	a.must(CmdTerminatorCreate, &store.Terminator{Base: svcBase("t2", t0), ServiceID: "s2", RouterID: "e1", Binding: "edge", Address: "x"})
	if err := a.try(CmdTerminatorUpdate, Update{ID: "t2", Patch: store.Patch{"serviceId": json.RawMessage(`"gone"`)}, At: t0}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("terminator to a missing service: %v", err)
	}
	// The config index answers which services use a config.
	if s := a.f.Store().Read().First(store.KindService, "configs", "c1"); s == nil || s.GetID() != "s1" {
		t.Fatalf("configs index: %v", s)
	}
}

func TestApply_OverridesReplacePerTypeAndGoWithTheIdentity(t *testing.T) {
	a := newSvcApplier(t)
	serviceFamily(a)
	a.must(CmdConfigCreate, ConfigCreate{Config: &store.Config{Base: svcBase("c4", t0), Named: store.Named{Name: "c4"}, ConfigTypeID: "U", Data: json.RawMessage(`{}`)}, TypeVersion: t0})
	t1 := t0.Add(time.Hour)
	a.must(CmdIdentityServiceConfigsAdd, ServiceConfigs{IdentityID: "i1", Items: []store.ServiceConfigRef{{ServiceID: "s1", ConfigID: "c4"}}, At: t1})
	tx := a.f.Store().Read()
	o, err := store.GetAs[*store.IdentityServiceConfig](tx, store.KindIdentityServiceConfig, store.IdentityServiceConfigID("i1", "s1", "U"))
	if err != nil || o.ConfigID != "c4" || !o.CreatedAt.Equal(t0) || !o.UpdatedAt.Equal(t1) || tx.Count(store.KindIdentityServiceConfig) != 1 {
		t.Fatalf("override after replace: %+v %v", o, err)
	}
	err = a.try(CmdIdentityServiceConfigsAdd, ServiceConfigs{IdentityID: "i1", Items: []store.ServiceConfigRef{{ServiceID: "s1", ConfigID: "nope"}}, At: t1})
	if de := (*store.Error)(nil); !errors.As(err, &de) || de.Field != "[0].configId" {
		t.Fatalf("unknown config: %v", err)
	}
	a.must(CmdIdentityDelete, Delete{ID: "i1"})
	if n := a.f.Store().Read().Count(store.KindIdentityServiceConfig); n != 0 {
		t.Fatalf("%d overrides survived their identity", n)
	}
}

func TestSnapshot_ServicesFamilyRoundTrip(t *testing.T) {
	a := newSvcApplier(t)
	serviceFamily(a)
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, a.f.Store().Read(), a.i); err != nil {
		t.Fatal(err)
	}
	g := New(store.New())
	if err := g.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dump(t, a.f.Store().Read()), dump(t, g.Store().Read())) {
		t.Fatal("restored model differs from the snapshotted one")
	}
	tx := g.Store().Read()
	// The counts and role counts a load sums up and writes at the end are those the records give.
	if findings, err := tx.CheckIntegrity(false, 100); err != nil || len(findings) != 0 {
		t.Fatalf("integrity after restore: %v %v", findings, err)
	}
	var attrs, want []string
	for _, k := range []*store.Kind{store.KindIdentity, store.KindService, store.KindEdgeRouter, store.KindPostureCheck} {
		tx.RoleAttributes(k, func(r string) bool { attrs = append(attrs, k.Table+":"+r); return true })
		a.f.Store().Read().RoleAttributes(k, func(r string) bool { want = append(want, k.Table+":"+r); return true })
	}
	if len(want) == 0 || strings.Join(attrs, ",") != strings.Join(want, ",") {
		t.Fatalf("role attributes after restore %v, before %v", attrs, want)
	}
	for _, k := range store.AllKinds {
		if tx.Count(k) != a.f.Store().Read().Count(k) {
			t.Fatalf("count of %s after restore %d, before %d", k.Table, tx.Count(k), a.f.Store().Read().Count(k))
		}
	}
	c, err := store.GetAs[*store.Config](tx, store.KindConfig, "c1")
	if err != nil || string(c.Data) != `{"n":9007199254740993}` {
		t.Fatalf("config data after restore: %v %v", c, err)
	}
	if tx.First(store.KindService, "configs", "c1") == nil || tx.First(store.KindConfig, "configType", "T") == nil ||
		tx.First(store.KindTerminator, "service", "s1") == nil || tx.First(store.KindIdentityServiceConfig, "identity", "i1") == nil {
		t.Fatal("secondary indexes of the services family not rebuilt on restore")
	}
	for _, k := range []*store.Kind{store.KindConfigType, store.KindConfig, store.KindService, store.KindTerminator, store.KindIdentityServiceConfig} {
		if tx.Count(k) != a.f.Store().Read().Count(k) {
			t.Fatalf("%s: %d after restore, want %d", k.Table, tx.Count(k), a.f.Store().Read().Count(k))
		}
	}
}
