package api_test

import (
	"net/http"
	"testing"

	"edgectl/api"
)

// TestConsistency_AnyOtherValueIs400: ?consistency= takes local or
// linearizable, once; anything else is 400 naming consistency, on every
// GET of both APIs, and proposes nothing.
func TestConsistency_AnyOtherValueIs400(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	before := ts.local.AppliedIndex()
	for _, p := range []string{
		mgmt("/identities?consistency=strong"),
		mgmt("/identities?consistency="),
		mgmt("/identities?consistency=LOCAL"),
		mgmt("/identities?consistency=local&consistency=linearizable"),
		mgmt("/services/x?consistency=eventual"),
		clientPath("/current-identity?consistency=1"),
		mgmt("/version?consistency=fast"),
	} {
		st, out := ts.do(http.MethodGet, p, nil)
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "consistency")
	}
	for _, p := range []string{mgmt("/identities?consistency=local"), mgmt("/identities?consistency=linearizable"),
		clientPath("/current-identity?consistency=linearizable")} {
		if st, out := ts.do(http.MethodGet, p, nil); st != http.StatusOK {
			t.Fatalf("GET %s: %d %v", p, st, out)
		}
	}
	if after := ts.local.AppliedIndex(); after != before {
		t.Fatalf("reads proposed %d commands", after-before)
	}
}

// TestConsistency_LinearizableReadsOnABehindNode: a node that has not yet
// applied a write made through another node answers a local read from its
// own state (the write is missing) and a linearizable read only after
// catching up (the write is there), for single records, lists and
// relation lists alike.
func TestConsistency_LinearizableReadsOnABehindNode(t *testing.T) {
	t.Parallel()
	leader := newTestServer(t)
	f := newFollowerServer(t, leader, api.Config{})
	id := leader.create("/identities", map[string]any{"name": "fresh", "type": "User", "isAdmin": false, "roleAttributes": []string{"r"}})

	if st, _ := f.do(http.MethodGet, mgmt("/identities/"+id), nil); st != http.StatusNotFound {
		t.Fatalf("local read on the behind node: %d, want 404 (it has not applied the create yet)", st)
	}
	if _, n := f.list(`/identities?filter=name%3D%22fresh%22&consistency=local`); n != 0 {
		t.Fatalf("local list on the behind node found %d", n)
	}
	if _, n := f.list(`/identities?filter=name%3D%22fresh%22&consistency=linearizable`); n != 1 {
		t.Fatalf("linearizable list found %d, want 1", n)
	}
	leader.do(http.MethodPatch, mgmt("/identities/"+id), map[string]any{"name": "renamed"})
	if got := f.get("/identities/" + id + "?consistency=linearizable"); got["name"] != "renamed" {
		t.Fatalf("linearizable get: name %v, want renamed", got["name"])
	}
	ra := leader.create("/service-policies", map[string]any{"name": "sp", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"#r"}, "serviceRoles": []string{}})
	if _, n := f.list("/identities/" + id + "/service-policies?consistency=linearizable"); n != 1 {
		t.Fatalf("linearizable relation list: %d policies, want 1 (%s)", n, ra)
	}
}

// TestConsistency_NodeDefault: --read-consistency linearizable makes
// linearizable the default of reads without the parameter, and
// consistency=local still asks for the local state.
func TestConsistency_NodeDefault(t *testing.T) {
	t.Parallel()
	leader := newTestServer(t)
	f := newFollowerServer(t, leader, api.Config{ReadConsistency: api.ConsistencyLinearizable})
	a := leader.create("/services", map[string]any{"name": "a"})
	if st, _ := f.do(http.MethodGet, mgmt("/services/"+a+"?consistency=local"), nil); st != http.StatusNotFound {
		t.Fatalf("consistency=local on the behind node: %d, want 404", st)
	}
	f.get("/services/" + a) // linearizable by default: 200
}

// TestConsistency_LoginThroughABehindNodeIsJudgedAgain: credentials,
// sessions and enrollments made through one node work at once on a node
// that has not applied them yet, and a refusal that was only due to the lag
// counts nothing toward lockout.
func TestConsistency_LoginThroughABehindNodeIsJudgedAgain(t *testing.T) {
	t.Parallel()
	leader := newTestServer(t)
	f := newFollowerServer(t, leader, api.Config{})

	// One wrong attempt locks the identity out.
	pol := authPolicyBody("one-try")
	pol["primary"].(map[string]any)["updb"].(map[string]any)["maxAttempts"] = 1
	pol["primary"].(map[string]any)["updb"].(map[string]any)["requireMixedCase"] = false
	policy := leader.create("/auth-policies", pol)
	ident := leader.authnIdentity("bob", map[string]any{"authPolicyId": policy})
	authr := leader.create("/authenticators", map[string]any{"identityId": ident, "method": "updb", "username": "bob-user", "password": "first-pass-1"})
	f.login("bob-user", "first-pass-1") // created through the leader a moment ago

	if st, out := leader.do(http.MethodPut, mgmt("/authenticators/"+authr), map[string]any{"username": "bob-user", "password": "second-pass-2"}); st != 200 {
		t.Fatalf("password change: %d %v", st, out)
	}
	f.login("bob-user", "second-pass-2")      // the behind node still has the first password
	leader.login("bob-user", "second-pass-2") // not locked out by the lag

	// A session made through the leader works on the behind node at once.
	tok := leader.login("bob-user", "second-pass-2")
	if st, out := f.doAs(tok, http.MethodGet, clientPath("/current-identity"), nil); st != 200 {
		t.Fatalf("a fresh session on the behind node: %d %v", st, out)
	}

	// An enrollment too.
	enrollee := leader.create("/identities", map[string]any{"name": "carol", "type": "User", "isAdmin": false,
		"enrollment": map[string]any{"updb": "carol"}})
	token := leader.enrollTokenOf(enrollee, "updb")
	if st, out := f.enrollPost("/enroll/updb?token="+token, nil, map[string]any{"password": "Carol-pass-1"}); st != 200 {
		t.Fatalf("enrollment on the behind node: %d %v", st, out)
	}

	// Wrong credentials are still refused, after one round.
	rounds := f.follower.readIndexes.Load()
	st, out := f.doAs("", http.MethodPost, mgmt("/authenticate?method=password"), map[string]any{"username": "bob-user", "password": "wrong-pass-3"})
	wantError(t, st, out, http.StatusUnauthorized, "INVALID_AUTH", "")
	if n := f.follower.readIndexes.Load() - rounds; n != 1 {
		t.Fatalf("a refused login ran %d read-index rounds, want 1", n)
	}
}

// TestConsistency_AWriteAboutARecordMadeElsewhere: a patch or delete
// through a node that has not applied the record's create yet is judged
// again after catching up, instead of answering 404; a 404 that follows a
// proposal is not retried (the request already changed the model).
func TestConsistency_AWriteAboutARecordMadeElsewhere(t *testing.T) {
	t.Parallel()
	leader := newTestServer(t)
	f := newFollowerServer(t, leader, api.Config{})
	id := leader.create("/services", map[string]any{"name": "svc"})
	if st, out := f.do(http.MethodPatch, mgmt("/services/"+id), map[string]any{"name": "svc2"}); st != 200 {
		t.Fatalf("patch through the behind node: %d %v", st, out)
	}
	other := leader.create("/services", map[string]any{"name": "gone"})
	if st, out := f.do(http.MethodDelete, mgmt("/services/"+other), nil); st != 200 {
		t.Fatalf("delete through the behind node: %d %v", st, out)
	}
	st, out := f.do(http.MethodDelete, mgmt("/services/"+other), nil)
	wantError(t, st, out, http.StatusNotFound, "NOT_FOUND", "")
}
