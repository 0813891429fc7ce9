package api_test

import (
	"net/http"
	"testing"

	"edgectl/auth"
)

// TestJoin_ForgedTokensCostNothingAndAreThrottled: a join with a token the
// cluster never issued is refused before anything is signed or proposed,
// and a source that keeps trying is throttled like /authenticate.
func TestJoin_ForgedTokensCostNothingAndAreThrottled(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	before := ts.local.AppliedIndex()
	body := func(tok string) map[string]any {
		return map[string]any{"token": tok, "nodeId": "n2", "clusterAddr": "127.0.0.1:7000", "nodeCsr": "x", "serverCsr": "y"}
	}
	throttled := false
	for i := range 30 {
		forged := (&auth.JoinToken{Secret: auth.NewToken(), CAFingerprint: auth.CAFingerprint([]byte("not our CA"))}).Encode()
		st, out := ts.doAs("", http.MethodPost, mgmt("/cluster/join"), body(forged))
		if st == http.StatusTooManyRequests {
			throttled = true
			break
		}
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "token")
		if i > 20 {
			t.Fatalf("attempt %d still not throttled", i)
		}
	}
	if !throttled {
		t.Fatal("30 forged join tokens from one address were never throttled")
	}
	if after := ts.local.AppliedIndex(); after != before {
		t.Fatalf("forged joins proposed %d commands", after-before)
	}
}

// TestJoin_AGoodTokenIsNotSpentOnABadRequest: the token is checked first,
// but used up only once the whole request checked out.
func TestJoin_AGoodTokenIsNotSpentOnABadRequest(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st, out := ts.do(http.MethodPost, mgmt("/cluster/join-tokens"), map[string]any{})
	if st != http.StatusCreated {
		t.Fatalf("join token: %d %v", st, out)
	}
	tok := dig(out, "data", "token").(string)
	before := ts.local.AppliedIndex()
	st, out = ts.doAs("", http.MethodPost, mgmt("/cluster/join"),
		map[string]any{"token": tok, "nodeId": "n2", "clusterAddr": "127.0.0.1:7000", "nodeCsr": "not a csr", "serverCsr": "y"})
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "nodeCsr")
	if after := ts.local.AppliedIndex(); after != before {
		t.Fatalf("a refused join proposed %d commands", after-before)
	}
}

// TestJoin_TokensCanBeListedAndRevoked: the outstanding tokens are listed
// without their secrets, and a revoked token no longer lets a node join.
func TestJoin_TokensCanBeListedAndRevoked(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st, out := ts.do(http.MethodPost, mgmt("/cluster/join-tokens"), map[string]any{"ttlSeconds": 600})
	if st != http.StatusCreated {
		t.Fatalf("join token: %d %v", st, out)
	}
	id, tok := dig(out, "data", "id").(string), dig(out, "data", "token").(string)
	data, n := ts.list("/cluster/join-tokens")
	if n != 1 || dig(data[0], "id") != id || dig(data[0], "expiresAt") == nil {
		t.Fatalf("list: %v", data)
	}
	if _, ok := data[0].(map[string]any)["token"]; ok {
		t.Fatal("the list shows the token")
	}
	ts.mustDelete("/cluster/join-tokens/" + id)
	st, out = ts.do(http.MethodDelete, mgmt("/cluster/join-tokens/"+id), nil)
	wantError(t, st, out, http.StatusNotFound, "NOT_FOUND", "")
	st, out = ts.doAs("", http.MethodPost, mgmt("/cluster/join"),
		map[string]any{"token": tok, "nodeId": "n2", "clusterAddr": "127.0.0.1:7000", "nodeCsr": "x", "serverCsr": "y"})
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "token")
}
