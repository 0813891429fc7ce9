package api

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"edgectl/auth"
	"edgectl/store"
)

// csFixture is a store-backed Server with one Client API identity that sees
// services through several policies, some guarded by posture checks, and
// API sessions of that identity (token → session), for the client service
// list tests and benchmarks. The clock is fixed so posture timeouts are too.
type csFixture struct {
	s        *Server
	now      time.Time
	identity string
	tokens   []string // one per API session, in creation order
	services []string // the ids of every service in the model
}

// csOptions shapes the fixture.
type csOptions struct {
	services    int      // services in the model; the identity sees all but every seventh
	guarded     int      // how many of them a Dial policy with posture checks also grants
	sessions    int      // API sessions of the identity
	configTypes []string // configTypes of every session (nil: none)
	hidden      int      // services nobody sees, on top (many of them make the list look services up one by one)
	rich        bool     // configs, overrides, tags with characters JSON escapes, MFA and PROCESS_MULTI checks, a Bind policy
}

// newCSFixture builds the model in one write transaction.
func newCSFixture(tb testing.TB, o csOptions) *csFixture {
	tb.Helper()
	f := &csFixture{now: time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC), identity: "client-identity"}
	st := store.New()
	tx := st.Write()
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	created := f.now.Add(-48 * time.Hour)
	base := func(id string, i int) store.Base {
		return store.Base{ID: id, CreatedAt: created.Add(time.Duration(i) * time.Second), UpdatedAt: created.Add(time.Duration(i)*time.Minute + 7)}
	}
	must(tx.Insert(store.KindIdentityType, &store.IdentityType{Base: store.Base{ID: "User"}, Named: store.Named{Name: "User"}}))
	must(tx.Insert(store.KindAuthPolicy, &store.AuthPolicy{Base: store.Base{ID: "default"}, Named: store.Named{Name: "Default"}}))
	must(tx.Insert(store.KindIdentity, &store.Identity{Base: base(f.identity, 0), Named: store.Named{Name: "client"}, TypeID: "User",
		AuthPolicyID: "default", RoleAttributes: []string{"client"}}))

	// Posture checks: the scalebench five, plus MFA (with a timeout and a
	// wake prompt) and PROCESS_MULTI when rich.
	proc := func(path string) store.Process {
		return store.Process{OSType: "WINDOWS", Path: path, Hashes: []string{"abc123"}}
	}
	checks := []*store.PostureCheck{
		{TypeID: "OS", OperatingSystems: []store.OperatingSystem{{Type: "WINDOWS", Versions: []string{">=10.0.19041"}}}},
		{TypeID: "MAC", MacAddresses: []string{"aa:bb:cc:dd:ee:01", "aa:bb:cc:dd:ee:02"}},
		{TypeID: "DOMAIN", Domains: []string{"corp.example"}},
		{TypeID: "PROCESS", Process: &store.Process{OSType: "WINDOWS", Path: `C:\bench\agent.exe`, Hashes: []string{"abc123"}}},
		{TypeID: "PROCESS", Process: &store.Process{OSType: "WINDOWS", Path: `C:\bench\guard.exe`, Hashes: []string{"abc123"}}},
	}
	if o.rich {
		checks = append(checks,
			&store.PostureCheck{TypeID: "MFA", TimeoutSeconds: 3600, PromptOnWake: true},
			&store.PostureCheck{TypeID: "PROCESS_MULTI", Semantic: "OneOf", Processes: []store.Process{proc(`C:\x\<one>.exe`), proc(`C:\missing.exe`)}},
			&store.PostureCheck{TypeID: "MFA", TimeoutSeconds: 60})
	}
	for i, pc := range checks {
		pc.Base = base(fmt.Sprintf("pc-%02d", i), i)
		pc.Name = fmt.Sprintf("check-%02d", i)
		pc.RoleAttributes = []string{"posture"}
		if o.rich && i%2 == 0 {
			pc.Tags = map[string]any{"owner": "sec&ops <team>", "n": float64(i), "nested": map[string]any{"z": true, "a": []any{"x", nil}}}
		}
		must(tx.Insert(store.KindPostureCheck, pc))
	}

	// Config types and configs; every service of the rich model has 0-2 of them.
	typeNames := []string{"host.v1", "intercept.v1", "B<&>\u2028é"}
	if o.rich {
		for i, name := range typeNames {
			must(tx.Insert(store.KindConfigType, &store.ConfigType{Base: base(fmt.Sprintf("ct-%d", i), i), Named: store.Named{Name: name}}))
		}
		datas := []string{`{"address":"10.0.0.1","port":443}`, `{ "addresses" : ["a<b>&c"], "x": 1.50e3 }`, `{"s":"line\u2028sep é"}`, `null`}
		for i := 0; i < 12; i++ {
			must(tx.Insert(store.KindConfig, &store.Config{Base: base(fmt.Sprintf("cfg-%02d", i), i), Named: store.Named{Name: fmt.Sprintf("config-%02d", i)},
				ConfigTypeID: fmt.Sprintf("ct-%d", i%3), Data: json.RawMessage(datas[i%len(datas)])}))
		}
	}

	for i := 0; i < o.services; i++ {
		attrs := []string{"visible"}
		if i%7 == 3 {
			attrs = []string{"hidden"}
		}
		svc := &store.Service{Base: base(fmt.Sprintf("svc-%03d", i), i), Named: store.Named{Name: fmt.Sprintf("service-%03d", (i*37)%o.services)},
			RoleAttributes: attrs, EncryptionRequired: i%2 == 0, TerminatorStrategy: "smartrouting", MaxIdleTimeMillis: int64(i * 1000)}
		if o.rich {
			switch i % 4 {
			case 1:
				svc.Configs = []string{fmt.Sprintf("cfg-%02d", i%12)}
			case 2:
				svc.Configs = []string{fmt.Sprintf("cfg-%02d", i%12), fmt.Sprintf("cfg-%02d", (i+1)%12)}
			}
			if i%5 == 0 {
				svc.Tags = map[string]any{"team": "a&b", "emoji": "\U0001F600", "list": []any{1.0, "<x>"}}
			}
			if i%6 == 0 {
				svc.RoleAttributes = nil
				if i%7 != 3 {
					svc.RoleAttributes = []string{"visible", "q\"uote"}
				}
			}
			if i == 4 {
				svc.Name = "svc with \"quotes\" & <html>"
			}
		}
		must(tx.Insert(store.KindService, svc))
		f.services = append(f.services, svc.ID)
	}
	for i := 0; i < o.hidden; i++ {
		must(tx.Insert(store.KindService, &store.Service{Base: base(fmt.Sprintf("hidden-%04d", i), i), Named: store.Named{Name: fmt.Sprintf("hidden-%04d", i)},
			RoleAttributes: []string{"hidden"}}))
	}
	var guarded []string
	for i := 0; i < o.services && len(guarded) < o.guarded; i++ {
		if i%7 != 3 {
			guarded = append(guarded, "@"+f.services[i])
		}
	}
	policies := []*store.ServicePolicy{
		{Type: "Dial", Semantic: "AnyOf", IdentityRoles: []string{"#client"}, ServiceRoles: []string{"#visible"}, PostureCheckRoles: []string{}},
		{Type: "Dial", Semantic: "AnyOf", IdentityRoles: []string{"#client"}, ServiceRoles: guarded, PostureCheckRoles: []string{"#posture"}},
	}
	if o.rich {
		policies = append(policies,
			&store.ServicePolicy{Type: "Bind", Semantic: "AllOf", IdentityRoles: []string{"#client"}, ServiceRoles: []string{"@svc-001", "@svc-002", "@svc-005"}},
			&store.ServicePolicy{Type: "Bind", Semantic: "AnyOf", IdentityRoles: []string{"@" + f.identity}, ServiceRoles: []string{"@svc-002"}, PostureCheckRoles: []string{"@pc-05"}})
		for i := 0; i < 6; i++ {
			must(tx.Insert(store.KindIdentityServiceConfig, &store.IdentityServiceConfig{Base: base(fmt.Sprintf("isc-%d", i), i), IdentityID: f.identity,
				ServiceID: fmt.Sprintf("svc-%03d", i*4+1), ConfigID: fmt.Sprintf("cfg-%02d", (i*5)%12), ConfigTypeID: fmt.Sprintf("ct-%d", ((i*5)%12)%3)}))
		}
	}
	for i, p := range policies {
		p.Base = base(fmt.Sprintf("sp-%d", i), i)
		p.Name = fmt.Sprintf("policy-%d", i)
		must(tx.Insert(store.KindServicePolicy, p))
	}

	// API sessions, each with posture data that passes the scalebench five.
	mfaAt, wokeAt := f.now.Add(-10*time.Minute), f.now.Add(-2*time.Minute)
	for i := 0; i < o.sessions; i++ {
		tok := fmt.Sprintf("token-%03d", i)
		sess := &store.APISession{Base: base(fmt.Sprintf("as-%03d", i), i), TokenHash: auth.HashToken(tok), IdentityID: f.identity,
			ConfigTypes: o.configTypes, IsMfaComplete: true, LastMfaAt: &mfaAt, CachedLastActivityAt: f.now}
		must(tx.Insert(store.KindAPISession, sess))
		pd := &store.PostureData{Base: store.Base{ID: sess.ID}, IdentityID: f.identity,
			OS:     &store.PostureOS{Type: "Windows", Version: "10.0.19045"},
			MAC:    &store.PostureMAC{Addresses: []string{"AA-BB-CC-DD-EE-02"}},
			Domain: &store.PostureDomain{Domain: "corp.example"},
			Processes: map[string]store.PostureProcess{
				`C:\bench\agent.exe`: {Path: `C:\bench\agent.exe`, IsRunning: true, Hash: "abc123"},
				`C:\bench\guard.exe`: {Path: `C:\bench\guard.exe`, IsRunning: i%3 != 2, Hash: "abc123"},
			}}
		if o.rich {
			pd.WokenAt = &wokeAt
		}
		must(tx.Insert(store.KindPostureData, pd))
		f.tokens = append(f.tokens, tok)
	}
	tx.Commit()
	f.s = New(Deps{Store: st, Activity: auth.NewActivity(), Now: func() time.Time { return f.now }}, Config{})
	return f
}
