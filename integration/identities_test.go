package integration

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"testing"
)

// listNames lists identities with the query q and returns the names and meta.pagination.totalCount.
func listNames(t *testing.T, n *node, token string, q url.Values) ([]string, int) {
	t.Helper()
	status, m := do(t, http.MethodGet, n.mgmt("/identities?"+q.Encode()), token, nil)
	mustStatus(t, "list identities "+q.Encode(), status, m, http.StatusOK)
	items, ok := m["data"].([]any)
	if !ok {
		t.Fatalf("list identities: data is not an array: %s", js(m))
	}
	var names []string
	for _, it := range items {
		name, _ := jget(it, "name").(string)
		names = append(names, name)
	}
	return names, jint(t, m, "meta", "pagination", "totalCount")
}

func TestIdentityCreateListFilterPagePatchPutDelete(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	tok := login(t, n, adminUser, n.password)

	// Seven identities whose names contain "web", three that do not.
	var webNames []string
	ids := map[string]string{}
	for i := range 7 {
		name := fmt.Sprintf("crud-web-%02d", 6-i) // created out of name order
		ids[name] = createIdentity(t, n, tok, map[string]any{"name": name, "type": "Device", "isAdmin": false})
		webNames = append(webNames, name)
	}
	for i := range 3 {
		name := fmt.Sprintf("crud-db-%d", i)
		ids[name] = createIdentity(t, n, tok, map[string]any{"name": name, "type": "Service", "isAdmin": false})
	}
	slices.Sort(webNames)

	// The whole list: 10 plus the default admin.
	if got := countIdentities(t, n, tok); got != 11 {
		t.Errorf("totalCount of all identities = %d, want 11", got)
	}

	// Filter plus paging: pages of 3 walk the 7 matches in name order.
	filter := `name contains "web"`
	var paged []string
	for offset := 0; offset < 9; offset += 3 {
		names, total := listNames(t, n, tok, url.Values{"filter": {filter}, "limit": {"3"}, "offset": {fmt.Sprint(offset)}})
		if total != 7 {
			t.Errorf("filter %q offset %d: totalCount %d, want 7", filter, offset, total)
		}
		want := min(3, 7-offset)
		if len(names) != want {
			t.Errorf("filter %q limit 3 offset %d: %d items %v, want %d", filter, offset, len(names), names, want)
		}
		paged = append(paged, names...)
	}
	if !reflect.DeepEqual(paged, webNames) {
		t.Errorf("paging through %q gave %v, want %v (name order)", filter, paged, webNames)
	}
	// An offset past the end is an empty page with the right total.
	if names, total := listNames(t, n, tok, url.Values{"filter": {filter}, "offset": {"50"}}); len(names) != 0 || total != 7 {
		t.Errorf("offset 50: %v, totalCount %d; want none and 7", names, total)
	}
	// Default limit is 10.
	if names, total := listNames(t, n, tok, url.Values{}); len(names) != 10 || total != 11 {
		t.Errorf("no paging: %d items, totalCount %d; want 10 and 11", len(names), total)
	}

	// A full identity to PATCH and PUT.
	id := createIdentity(t, n, tok, map[string]any{
		"name": "crud-full", "type": "User", "isAdmin": false,
		"roleAttributes": []string{"ops", "eu"}, "tags": map[string]any{"team": "blue", "n": 3},
		"defaultHostingCost": 12, "defaultHostingPrecedence": "required", "externalId": "ext-1",
	})
	before := getIdentity(t, n, tok, id)
	if jget(before, "name") != "crud-full" || jget(before, "typeId") != "User" || jget(before, "isAdmin") != false {
		t.Errorf("created identity reads back wrong: %s", js(before))
	}
	if !reflect.DeepEqual(jget(before, "roleAttributes"), []any{"ops", "eu"}) {
		t.Errorf("roleAttributes = %v, want [ops eu]", jget(before, "roleAttributes"))
	}

	// PATCH changes only the fields given.
	status, m := do(t, http.MethodPatch, n.mgmt("/identities/"+id), tok, map[string]any{"defaultHostingCost": 99})
	mustStatus(t, "patch", status, m, http.StatusOK)
	after := getIdentity(t, n, tok, id)
	if got := jget(after, "defaultHostingCost"); got != float64(99) {
		t.Errorf("after PATCH defaultHostingCost = %v, want 99", got)
	}
	for _, f := range []string{"name", "typeId", "isAdmin", "roleAttributes", "tags", "defaultHostingPrecedence", "externalId", "createdAt", "authPolicyId"} {
		if !reflect.DeepEqual(jget(before, f), jget(after, f)) {
			t.Errorf("PATCH of defaultHostingCost changed %s: %v -> %v", f, jget(before, f), jget(after, f))
		}
	}

	// PUT replaces every writable field: what is missing goes to its default.
	status, m = do(t, http.MethodPut, n.mgmt("/identities/"+id), tok,
		map[string]any{"name": "crud-full-renamed", "type": "Device", "isAdmin": false})
	mustStatus(t, "put", status, m, http.StatusOK)
	put := getIdentity(t, n, tok, id)
	if jget(put, "name") != "crud-full-renamed" || jget(put, "typeId") != "Device" {
		t.Errorf("after PUT name/typeId = %v/%v, want crud-full-renamed/Device", jget(put, "name"), jget(put, "typeId"))
	}
	if ra, _ := jget(put, "roleAttributes").([]any); len(ra) != 0 {
		t.Errorf("after PUT without roleAttributes: %v, want none", jget(put, "roleAttributes"))
	}
	if tags, _ := jget(put, "tags").(map[string]any); len(tags) != 0 {
		t.Errorf("after PUT without tags: %v, want none", jget(put, "tags"))
	}
	if got := jget(put, "defaultHostingCost"); got != float64(0) {
		t.Errorf("after PUT defaultHostingCost = %v, want 0", got)
	}
	if got := jget(put, "defaultHostingPrecedence"); got != "default" {
		t.Errorf("after PUT defaultHostingPrecedence = %v, want default", got)
	}
	if got := jget(put, "externalId"); got != nil {
		t.Errorf("after PUT externalId = %v, want null", got)
	}
	if got := jget(put, "createdAt"); got != jget(before, "createdAt") {
		t.Errorf("PUT changed createdAt: %v -> %v", jget(before, "createdAt"), got)
	}
	if jget(put, "id") != id {
		t.Errorf("PUT changed the id: %v", jget(put, "id"))
	}

	// DELETE, then the identity is gone.
	status, m = do(t, http.MethodDelete, n.mgmt("/identities/"+id), tok, nil)
	mustStatus(t, "delete", status, m, http.StatusOK)
	status, m = do(t, http.MethodGet, n.mgmt("/identities/"+id), tok, nil)
	wantError(t, "GET after DELETE", status, m, http.StatusNotFound, "NOT_FOUND", "")
	status, m = do(t, http.MethodDelete, n.mgmt("/identities/"+id), tok, nil)
	wantError(t, "DELETE twice", status, m, http.StatusNotFound, "NOT_FOUND", "")
	status, m = do(t, http.MethodPatch, n.mgmt("/identities/"+id), tok, map[string]any{"name": "x"})
	wantError(t, "PATCH after DELETE", status, m, http.StatusNotFound, "NOT_FOUND", "")
	if got := countIdentities(t, n, tok); got != 11 {
		t.Errorf("after create and delete totalCount = %d, want 11", got)
	}
}

func TestIdentityDisableEnable(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	tok := login(t, n, adminUser, n.password)
	id := createIdentity(t, n, tok, map[string]any{"name": "to-disable", "type": "User", "isAdmin": false})

	if got := getIdentity(t, n, tok, id); jget(got, "disabled") != false {
		t.Fatalf("new identity disabled = %v, want false", jget(got, "disabled"))
	}
	status, m := do(t, http.MethodPost, n.mgmt("/identities/"+id+"/disable"), tok, map[string]any{"durationMinutes": 10})
	mustStatus(t, "disable", status, m, http.StatusOK)
	got := getIdentity(t, n, tok, id)
	if jget(got, "disabled") != true {
		t.Errorf("after disable: disabled = %v, want true", jget(got, "disabled"))
	}
	if jget(got, "disabledAt") == nil || jget(got, "disabledUntil") == nil {
		t.Errorf("after disable for 10 minutes: disabledAt %v, disabledUntil %v; want both set", jget(got, "disabledAt"), jget(got, "disabledUntil"))
	}

	status, m = do(t, http.MethodPost, n.mgmt("/identities/"+id+"/enable"), tok, nil)
	mustStatus(t, "enable", status, m, http.StatusOK)
	got = getIdentity(t, n, tok, id)
	if jget(got, "disabled") != false {
		t.Errorf("after enable: disabled = %v, want false", jget(got, "disabled"))
	}
	if jget(got, "disabledAt") != nil || jget(got, "disabledUntil") != nil {
		t.Errorf("after enable: disabledAt %v, disabledUntil %v; want both null", jget(got, "disabledAt"), jget(got, "disabledUntil"))
	}

	// The request is validated, and an unknown id is 404.
	status, m = do(t, http.MethodPost, n.mgmt("/identities/"+id+"/disable"), tok, map[string]any{})
	wantError(t, "disable without durationMinutes", status, m, http.StatusBadRequest, "COULD_NOT_VALIDATE", "durationMinutes")
	status, m = do(t, http.MethodPost, n.mgmt("/identities/no-such-id/disable"), tok, map[string]any{"durationMinutes": 1})
	wantError(t, "disable unknown id", status, m, http.StatusNotFound, "NOT_FOUND", "")
}
