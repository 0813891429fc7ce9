package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"edgectl/auth"
)

// createPostureChecks makes one OS, MAC and DOMAIN check and two PROCESS
// checks, all with the posture attribute, and the responses that pass them.
func (b *bench) createPostureChecks(ctx context.Context, m *model) error {
	start := time.Now()
	proc := func(path string) map[string]any {
		return map[string]any{"osType": "WINDOWS", "path": path, "hashes": []string{processHash}}
	}
	defs := []struct {
		body     map[string]any
		response map[string]any
	}{
		{map[string]any{"name": "scale-os", "typeId": "OS", "operatingSystems": []any{map[string]any{"type": "WINDOWS", "versions": []string{">=10.0.19041"}}}},
			map[string]any{"typeId": "OS", "type": "Windows", "version": "10.0.19045"}},
		{map[string]any{"name": "scale-mac", "typeId": "MAC", "macAddresses": []string{"aa:bb:cc:dd:ee:01", "aa:bb:cc:dd:ee:02"}},
			map[string]any{"typeId": "MAC", "macAddresses": []string{"aa:bb:cc:dd:ee:02"}}},
		{map[string]any{"name": "scale-domain", "typeId": "DOMAIN", "domains": []string{"corp.example"}},
			map[string]any{"typeId": "DOMAIN", "domain": "corp.example"}},
		{map[string]any{"name": "scale-agent", "typeId": "PROCESS", "process": proc(`C:\bench\agent.exe`)},
			map[string]any{"typeId": "PROCESS", "path": `C:\bench\agent.exe`, "isRunning": true, "hash": processHash}},
		{map[string]any{"name": "scale-guard", "typeId": "PROCESS", "process": proc(`C:\bench\guard.exe`)},
			map[string]any{"typeId": "PROCESS", "path": `C:\bench\guard.exe`, "isRunning": true, "hash": processHash}},
	}
	for _, d := range defs {
		d.body["roleAttributes"] = []string{postureAttr}
		id, err := b.createdID(ctx, "/posture-checks", d.body)
		if err != nil {
			return err
		}
		d.response["id"] = id
		m.checks = append(m.checks, postureCheck{id: id, response: d.response})
	}
	m.steps = append(m.steps, step{what: "posture checks (HTTPS)", n: len(defs), took: time.Since(start)})
	return nil
}

// makeClientIdentity makes the identity of the Client API figures: only the
// client attribute, so that just the #all policies and two policies of its
// own select it; the own Dial policy tops its services up to about 50, and a
// second Dial policy on ten of them requires the five posture checks. It
// gets a password authenticator.
func (b *bench) makeClientIdentity(ctx context.Context, m *model, rng *rand.Rand) error {
	var err error
	m.clientID, err = b.createdID(ctx, "/identities", map[string]any{"name": "scale-client", "type": "User", "isAdmin": false,
		"roleAttributes": []string{clientAttr}})
	if err != nil {
		return err
	}
	have, err := b.identityServices(ctx, m.clientID)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, id := range have {
		seen[id] = true
	}
	var extra []string
	for _, i := range rng.Perm(len(m.services)) {
		if len(have)+len(extra) >= clientWantSvc {
			break
		}
		if id := m.services[i]; !seen[id] {
			extra = append(extra, "@"+id)
		}
	}
	if len(extra) > 0 {
		if _, err := b.createdID(ctx, "/service-policies", map[string]any{"name": "scale-client-dial", "type": "Dial", "semantic": "AnyOf",
			"identityRoles": []string{"#" + clientAttr}, "serviceRoles": extra, "postureCheckRoles": []string{}}); err != nil {
			return err
		}
	}
	if m.clientServices, err = b.identityServices(ctx, m.clientID); err != nil {
		return err
	}
	var guarded []string
	for _, id := range m.clientServices[:min(10, len(m.clientServices))] {
		guarded = append(guarded, "@"+id)
	}
	if _, err := b.createdID(ctx, "/service-policies", map[string]any{"name": "scale-client-posture", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"#" + clientAttr}, "serviceRoles": guarded, "postureCheckRoles": []string{"#" + postureAttr}}); err != nil {
		return err
	}
	m.clientPass = "scale-client-" + auth.NewID()
	if _, err := b.createdID(ctx, "/authenticators", map[string]any{"identityId": m.clientID, "method": "updb",
		"username": "scale-client", "password": m.clientPass}); err != nil {
		return err
	}
	fmt.Printf("  client identity %s sees %d services (%d through #all policies, %d through its own Dial policy; 10 also through a Dial policy with 5 posture checks)\n",
		m.clientID, len(m.clientServices), len(have), len(extra))
	return nil
}

// identityServices lists the ids of the services an identity reaches (Management relation list).
func (b *bench) identityServices(ctx context.Context, id string) ([]string, error) {
	data, err := b.call(ctx, http.MethodGet, mgmt+"/identities/"+id+"/services?limit=500", b.admin, nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(out.Data))
	for _, d := range out.Data {
		ids = append(ids, d.ID)
	}
	return ids, nil
}
