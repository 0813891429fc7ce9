package api_test

import (
	"net/http"
	"net/url"
	"slices"
	"sort"
	"testing"
	"time"
)

// TestLists_AClientsOwnSessionsComeInCreationOrder: a client's own session list is in the
// default order of a kind without a name, creation time then id
// (conventions §4), not in id order.
func TestLists_AClientsOwnSessionsComeInCreationOrder(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	svc := ts.create("/services", map[string]any{"name": "order-svc"})
	ts.create("/service-policies", map[string]any{"name": "order-sp", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"#all"}, "serviceRoles": []string{"@" + svc}})
	var created []string
	// Make sessions until their ids are not in creation order.
	for i := 0; i < 30 && (len(created) < 3 || sort.StringsAreSorted(created)); i++ {
		st, out := ts.do(http.MethodPost, "/edge/client/v1/sessions", map[string]any{"serviceId": svc, "type": "Dial"})
		if st != http.StatusCreated {
			t.Fatalf("create session: %d %v", st, out)
		}
		created = append(created, out["data"].(map[string]any)["id"].(string))
	}
	if sort.StringsAreSorted(created) {
		t.Skip("ids happened to come in creation order")
	}
	for _, api := range []string{"/edge/client/v1/sessions?limit=100", mgmt("/sessions?limit=100")} {
		st, out := ts.do(http.MethodGet, api, nil)
		if st != http.StatusOK {
			t.Fatalf("%s: %d %v", api, st, out)
		}
		var got []string
		var prev time.Time
		for _, d := range out["data"].([]any) {
			m := d.(map[string]any)
			got = append(got, m["id"].(string))
			at, err := time.Parse(time.RFC3339Nano, m["createdAt"].(string))
			if err != nil {
				t.Fatal(err)
			}
			if at.Before(prev) {
				t.Errorf("%s: not in createdAt order: %v", api, got)
			}
			prev = at
		}
		if !slices.Equal(got, created) {
			t.Errorf("%s: order %v, want creation order %v", api, got, created)
		}
	}
}

// TestLists_ABadRoleSemanticNamesRoleSemantic: a bad roleSemantic is 400 INVALID_FILTER
// naming roleSemantic (not roleFilter with "entry -1").
func TestLists_ABadRoleSemanticNamesRoleSemantic(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	for _, p := range []string{"/identities", "/services", "/edge-routers", "/posture-checks"} {
		q := url.Values{"roleFilter": {"#a"}, "roleSemantic": {"anyof"}}
		st, out := ts.do(http.MethodGet, mgmt(p+"?"+q.Encode()), nil)
		wantError(t, st, out, http.StatusBadRequest, "INVALID_FILTER", "roleSemantic")
		q.Set("roleSemantic", "AnyOf")
		if st, out := ts.do(http.MethodGet, mgmt(p+"?"+q.Encode()), nil); st != http.StatusOK {
			t.Fatalf("%s AnyOf: %d %v", p, st, out)
		}
	}
	st, out := ts.do(http.MethodGet, "/edge/client/v1/services?roleSemantic=Bogus&roleFilter=%23x", nil)
	wantError(t, st, out, http.StatusBadRequest, "INVALID_FILTER", "roleSemantic")
}

// TestLists_QueryLimitAndOffsetWinOverTheFilters: the query parameters limit and offset win
// over limit and skip in the filter (conventions §5), so a filter limit the
// parameter replaces is not an error.
func TestLists_QueryLimitAndOffsetWinOverTheFilters(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	for i := 0; i < 4; i++ {
		ts.create("/services", map[string]any{"name": "qp" + string(rune('a'+i))})
	}
	q := url.Values{"filter": {`name contains "qp" limit 600`}, "limit": {"2"}}
	st, out := ts.do(http.MethodGet, mgmt("/services?"+q.Encode()), nil)
	if st != http.StatusOK {
		t.Fatalf("%d %v", st, out)
	}
	if n := len(out["data"].([]any)); n != 2 {
		t.Errorf("%d services, want 2", n)
	}
	q = url.Values{"filter": {`name contains "qp" limit 600`}}
	st, out = ts.do(http.MethodGet, mgmt("/services?"+q.Encode()), nil)
	wantError(t, st, out, http.StatusBadRequest, "INVALID_FILTER", "filter")
	q = url.Values{"filter": {`name contains "qp" sort by name skip 2 limit 1`}, "offset": {"1"}, "limit": {"5"}}
	st, out = ts.do(http.MethodGet, mgmt("/services?"+q.Encode()), nil)
	pg := out["meta"].(map[string]any)["pagination"].(map[string]any)
	if st != http.StatusOK || pg["limit"] != float64(5) || pg["offset"] != float64(1) || len(out["data"].([]any)) != 3 {
		t.Errorf("%d %v", st, out)
	}
}
