package api_test

import (
	"fmt"
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

// TestLists_RoleAttributeFiltersAnswerAsAScanWould: a filter that implies
// role attributes (read from the role index, not by matching every record)
// answers the same records, order, pages and totalCount as the full scan of
// an equivalent filter the index cannot serve.
func TestLists_RoleAttributeFiltersAnswerAsAScanWould(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	attrs := [][]string{{"ops"}, {"dev", "ops"}, {"dev"}, {}, {"ops", "db"}, {"db"}, {"ops"}, {"dev", "db"}}
	for i := 0; i < 40; i++ {
		// Names out of creation and id order, so list order is tested.
		ts.create("/identities", map[string]any{"name": fmt.Sprintf("ra-%02d", (i*17)%40), "type": "Device",
			"isAdmin": false, "roleAttributes": attrs[i%len(attrs)]})
		ts.create("/services", map[string]any{"name": fmt.Sprintf("ra-svc-%02d", (i*13)%40), "roleAttributes": attrs[i%len(attrs)]})
	}
	list := func(path, filter string) ([]string, float64) {
		t.Helper()
		st, out := ts.do(http.MethodGet, mgmt(path+"?"+url.Values{"filter": {filter}}.Encode()), nil)
		if st != http.StatusOK {
			t.Fatalf("%s %s: %d %v", path, filter, st, out)
		}
		var names []string
		for _, d := range out["data"].([]any) {
			names = append(names, d.(map[string]any)["name"].(string))
		}
		return names, out["meta"].(map[string]any)["pagination"].(map[string]any)["totalCount"].(float64)
	}
	for _, path := range []string{"/identities", "/services"} {
		for _, c := range []struct{ indexed, scan string }{
			{`anyOf(roleAttributes) = "ops" limit 5`, `(anyOf(roleAttributes) = "ops" or false) limit 5`},
			{`anyOf(roleAttributes) = "ops" skip 5 limit 5`, `(anyOf(roleAttributes) = "ops" or false) skip 5 limit 5`},
			{`anyOf(roleAttributes) in ["db", "dev"] limit 100`, `(anyOf(roleAttributes) in ["db", "dev"] or false) limit 100`},
			{`anyOf(roleAttributes) = "dev" and name contains "1" limit 100`, `(anyOf(roleAttributes) = "dev" or false) and name contains "1" limit 100`},
			{`anyOf(roleAttributes) = "ops" sort by name desc limit 100`, `(anyOf(roleAttributes) = "ops" or false) sort by name desc limit 100`},
			{`anyOf(roleAttributes) = "nobody" limit 100`, `(anyOf(roleAttributes) = "nobody" or false) limit 100`},
			{`anyOf(roleAttributes) in ["ops"] limit 3`, `(anyOf(roleAttributes) = "ops" or false) limit 3`},
			{`anyOf(roleAttributes) = "ops" limit 0`, `(anyOf(roleAttributes) = "ops" or false) limit 0`},
			{`anyOf(roleAttributes) = "ops" skip 18 limit 5`, `(anyOf(roleAttributes) = "ops" or false) skip 18 limit 5`},
			{`anyOf(roleAttributes) = "ops" skip 100 limit 5`, `(anyOf(roleAttributes) = "ops" or false) skip 100 limit 5`},
			{`anyOf(roleAttributes) = "ops" limit none`, `(anyOf(roleAttributes) = "ops" or false) limit none`},
		} {
			got, gotTotal := list(path, c.indexed)
			want, wantTotal := list(path, c.scan)
			if !slices.Equal(got, want) || gotTotal != wantTotal {
				t.Errorf("%s %s: %v (total %v), the scan gives %v (total %v)", path, c.indexed, got, gotTotal, want, wantTotal)
			}
		}
		if got, total := list(path, `anyOf(roleAttributes) = "ops" limit 100`); total != 20 || len(got) != 20 || !sort.StringsAreSorted(got) {
			t.Errorf("%s: ops: %d in %v (total %v), want 20 in name order", path, len(got), got, total)
		}
	}

	// The count of a role comes from the model the request reads: a write
	// that adds or removes the role changes it at once.
	total := func() float64 {
		_, n := list("/identities", `anyOf(roleAttributes) = "ops" limit 2`)
		return n
	}
	if n := total(); n != 20 {
		t.Fatalf("ops before the writes: total %v, want 20", n)
	}
	id := ts.create("/identities", map[string]any{"name": "ra-new", "type": "Device", "isAdmin": false, "roleAttributes": []string{"ops"}})
	if n := total(); n != 21 {
		t.Fatalf("ops after a create with it: total %v, want 21", n)
	}
	if st, out := ts.do(http.MethodPatch, mgmt("/identities/"+id), map[string]any{"roleAttributes": []string{"dev"}}); st != http.StatusOK {
		t.Fatalf("patch: %d %v", st, out)
	}
	if n := total(); n != 20 {
		t.Fatalf("ops after the patch that drops it: total %v, want 20", n)
	}
}
