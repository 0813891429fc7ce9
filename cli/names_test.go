package cli

import (
	"bytes"
	"strings"
	"testing"
)

// loggedIn makes c the default login profile of the commands this test
// runs (a config dir of its own), so they run as the command line does.
func loggedIn(t *testing.T, c *client) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("EDGECTL_PROFILE", "")
	if err := saveProfiles(map[string]*profile{"default": c.p}); err != nil {
		t.Fatal(err)
	}
}

// edgectl runs a command line and returns what it printed, failing the
// test when it does not succeed.
func edgectl(t *testing.T, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	code := 0
	out := captureStdout(t, func() { code = execute(rootCmd(), args, &stderr) })
	if code != 0 {
		t.Fatalf("edgectl %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	return out
}

// detailLine is the "field: value" line of a record get printed.
func detailLine(out, field string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, field+":") {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	return ""
}

// get shows a record's references to other records by name, as a list's
// table does (a service's configs, a policy's @roles), and so do the tables
// of its relations; -o json keeps the ids; an id whose record is gone stays.
func TestGetShowsReferencesByName(t *testing.T) {
	c := testClient(t)
	loggedIn(t, c)
	mustCreate(t, c, "config-types", map[string]any{"name": "app.v1"})
	cfg := mustCreate(t, c, "configs", map[string]any{"name": "app-cfg", "configTypeId": "app.v1", "data": map[string]any{"port": 80}})
	mustCreate(t, c, "services", map[string]any{"name": "app", "configs": []any{"app-cfg"}})
	alice := mustCreate(t, c, "identities", map[string]any{"name": "alice", "type": "User", "isAdmin": false})
	mustCreate(t, c, "service-policies", map[string]any{"name": "alice-dials", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []any{"@alice"}, "serviceRoles": []any{"@app"}})

	if got := detailLine(edgectl(t, "get", "service", "app"), "configs"); got != "configs: app-cfg" {
		t.Errorf("get service app shows %q, want the config's name", got)
	}
	if got := detailLine(edgectl(t, "get", "service-policy", "alice-dials"), "identityRoles"); got != "identityRoles: @alice" {
		t.Errorf("get service-policy shows %q, want @alice", got)
	}
	if out := edgectl(t, "get", "identity", "alice", "service-policies"); !strings.Contains(out, "@alice") || strings.Contains(out, alice) {
		t.Errorf("the relation's table shows ids:\n%s", out)
	}
	if out := edgectl(t, "get", "service", "app", "-o", "json"); !strings.Contains(out, cfg) || strings.Contains(out, `"app-cfg"`) {
		t.Errorf("-o json does not keep the ids:\n%s", out)
	}
	rec := map[string]any{"configs": []any{cfg, "gone000000000000id"}}
	c.namesForIDs([]map[string]any{rec})
	if got := cell(rec["configs"]); got != "app-cfg,gone000000000000id" {
		t.Errorf("configs with one gone show as %q", got)
	}
}
