package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// cli runs the admin CLI with its own config dir (so profiles of parallel
// tests never meet) and returns stdout, stderr and the exit status.
type cli struct {
	t      *testing.T
	cfgDir string
}

func newCLI(t *testing.T) *cli { return &cli{t: t, cfgDir: t.TempDir()} }

func (c *cli) run(stdin string, args ...string) (string, string, int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = append(envWithout("EDGECTL_ADMIN_PASSWORD"), "XDG_CONFIG_HOME="+c.cfgDir, "EDGECTL_PROFILE=")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("edgectl %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// ok runs a command that must succeed and returns its stdout.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	out, errOut, code := c.run("", args...)
	if code != 0 {
		c.t.Fatalf("edgectl %s: exit %d: %s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// fails runs a command that must fail with one line on stderr and the exit
// status want.
func (c *cli) fails(want int, args ...string) string {
	c.t.Helper()
	out, errOut, code := c.run("", args...)
	if code != want {
		c.t.Fatalf("edgectl %s: exit %d, want %d: %s%s", strings.Join(args, " "), code, want, out, errOut)
	}
	if strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.HasPrefix(errOut, "edgectl: ") || strings.Contains(errOut, "goroutine") {
		c.t.Fatalf("edgectl %s: stderr should be one line starting with \"edgectl: \":\n%s", strings.Join(args, " "), errOut)
	}
	return errOut
}

// The admin CLI end to end against a real node: login, the resource
// commands with names, why, backup, cluster status, reset-password, and the
// errors a user makes.
func TestCLIAgainstARealNode(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	c := newCLI(t)
	url := "https://" + n.host()

	for _, args := range [][]string{{"--help"}, {"cluster", "--help"}, {"list", "--help"}, {"admin", "reset-password", "--help"}, {"help", "get"}} {
		c.ok(args...)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(c.ok("version", "-o", "json")), &v); err != nil || v["version"] == "" {
		t.Fatalf("version -o json: %v %v", err, v)
	}
	c.fails(1, "list", "identities") // not logged in yet
	if _, errOut, code := c.run(n.password+"\n", "login", url, "-u", adminUser, "--password-stdin", "--yes"); code != 0 {
		t.Fatalf("login --yes: %d %s", code, errOut)
	}
	prof, err := os.Stat(filepath.Join(c.cfgDir, "edgectl", "profiles.json"))
	if err != nil || prof.Mode().Perm() != 0o600 {
		t.Fatalf("profiles file: %v %v", err, prof)
	}

	jwt := filepath.Join(t.TempDir(), "alice.jwt")
	alice := strings.TrimSpace(c.ok("create", "identity", "alice", "--type", "Device", "--role-attributes", "web,ops", "--jwt-file", jwt))
	if raw, err := os.ReadFile(jwt); err != nil || strings.Count(string(raw), ".") != 2 {
		t.Fatalf("the enrollment JWT file: %v %q", err, raw)
	}
	c.ok("create", "service", "web", "--set", "roleAttributes=web")
	c.ok("create", "service-policy", "web-dial", "--set", "type=Dial", "--set", "semantic=AnyOf", "--set", "identityRoles=@alice", "--set", "serviceRoles=#web")
	c.ok("create", "edge-router", "er1", "--set", "isTunnelerEnabled=true")
	c.ok("create", "posture-check", "unused-mac", "--set", "typeId=MAC", "--set", `macAddresses=["aabbccddeeff"]`)
	// Tables a person reads: names where the API has ids, times relative.
	if out := c.ok("list", "service-policies"); !strings.Contains(out, "@alice") || !strings.Contains(out, "#web") || !strings.Contains(out, "Dial") {
		t.Fatalf("the policy table names its identity:\n%s", out)
	}
	if out := c.ok("list", "api-sessions"); !strings.Contains(out, "LASTACTIVITYAT") || !strings.Contains(out, " ago") && !strings.Contains(out, "now") {
		t.Fatalf("the API session table:\n%s", out)
	}
	if out := c.ok("get", "service", "web"); !strings.Contains(out, "createdAt:") || !strings.Contains(out, " ago)") && !strings.Contains(out, "(now)") {
		t.Fatalf("a record's times:\n%s", out)
	}
	// Dial granted, but no edge router both may use: an error, exit 1.
	out, _, code := c.run("", "verify", "-o", "json")
	var findings []map[string]any
	if err := json.Unmarshal([]byte(out), &findings); err != nil || code != 1 {
		t.Fatalf("verify before the router policies: exit %d, %v: %s", code, err, out)
	}
	severity := map[string]string{}
	for _, f := range findings {
		if k := f["kind"].(string) + "/" + f["subject"].(string); severity[k] != "error" {
			severity[k] = f["severity"].(string)
		}
	}
	if severity["identity/alice"] != "error" || severity["posture-check/unused-mac"] != "warning" {
		t.Fatalf("verify findings: %v", findings)
	}
	c.ok("create", "edge-router-policy", "erp", "--set", "semantic=AnyOf", "--set", "identityRoles=#all", "--set", "edgeRouterRoles=#all")
	c.ok("create", "service-edge-router-policy", "serp", "--set", "semantic=AnyOf", "--set", "serviceRoles=#all", "--set", "edgeRouterRoles=#all")
	// A YAML body file, with --set on top of it.
	policyFile := filepath.Join(t.TempDir(), "policy.yaml")
	_ = os.WriteFile(policyFile, []byte(`primary:
  cert: {allowed: true, allowExpiredCerts: false}
  extJwt: {allowed: false, allowedSigners: []}
  updb: {allowed: true, lockoutDurationMinutes: 5, maxAttempts: 3, minPasswordLength: 8,
         requireMixedCase: false, requireNumberChar: true, requireSpecialChar: false}
secondary: {requireTotp: false}
`), 0o600)
	c.ok("create", "auth-policy", "strict", "-f", policyFile, "--set", "primary.updb.maxAttempts=5")
	if out := c.ok("get", "auth-policy", "strict", "-o", "json"); !strings.Contains(out, `"maxAttempts": 5`) {
		t.Fatalf("auth policy from YAML and --set:\n%s", out)
	}
	var ids []map[string]any
	if err := json.Unmarshal([]byte(c.ok("list", "identities", `name = "alice"`, "-o", "json")), &ids); err != nil || len(ids) != 1 || ids[0]["id"] != alice {
		t.Fatalf("list -o json: %v %v", err, ids)
	}
	if roles, _ := ids[0]["roleAttributes"].([]any); len(roles) != 2 || ids[0]["typeId"] != "Device" {
		t.Fatalf("alice as the API gives her: %v", ids[0])
	}
	// A usable edge router now, but never enrolled: still an error, which names it.
	out, _, code = c.run("", "verify")
	if code != 1 || !strings.Contains(out, "none of the edge routers usable by both is online: er1 (never enrolled)") ||
		!strings.Contains(out, "has never been enrolled") {
		t.Fatalf("verify with an unenrolled router: exit %d:\n%s", code, out)
	}
	if out := c.ok("get", "identity", "alice", "services"); !strings.Contains(out, "web") {
		t.Fatalf("get identity alice services:\n%s", out)
	}
	c.ok("update", "identity", "alice", "--set", "roleAttributes=web")
	if out := c.ok("get", "identity", alice, "-o", "json"); !strings.Contains(out, `"web"`) || strings.Contains(out, `"ops"`) {
		t.Fatalf("after update:\n%s", out)
	}
	// update takes create's shorthands.
	c.ok("update", "identity", "alice", "--role-attributes", "web,ops", "--type", "Device")
	if out := c.ok("get", "identity", alice, "-o", "json"); !strings.Contains(out, `"ops"`) || !strings.Contains(out, `"typeId": "Device"`) {
		t.Fatalf("after update with shorthands:\n%s", out)
	}
	c.ok("update", "identity", "alice", "--role-attributes", "web", "--type", "User")
	// The filter's skip and limit hold, as in the API.
	var page []map[string]any
	if err := json.Unmarshal([]byte(c.ok("list", "identities", "true sort by name skip 1 limit 1", "-o", "json")), &page); err != nil ||
		len(page) != 1 || page[0]["name"] != "alice" {
		t.Fatalf("list with skip 1 limit 1 in the filter: %v %v", err, page)
	}
	// The shell completes resource kinds and record names.
	if out := c.ok("__complete", "get", "ident"); !strings.Contains(out, "identities\n") {
		t.Fatalf("completion of a resource kind:\n%s", out)
	}
	if out := c.ok("__complete", "get", "identity", "al"); !strings.Contains(out, "alice\n") || strings.Contains(out, "bob") {
		t.Fatalf("completion of a record name:\n%s", out)
	}
	// Missing arguments are named.
	for _, m := range []struct {
		args []string
		want string
	}{
		{[]string{"update", "identity"}, "edgectl: update: missing the record (its name or id): edgectl update RESOURCE NAME|ID"},
		{[]string{"get"}, "get: missing the resource kind (identity, service, ...) and the record (its name or id)"},
		{[]string{"list"}, "list: missing the resource kind"},
		{[]string{"delete", "identity"}, "delete: missing the record"},
		{[]string{"create"}, "create: missing the resource kind"},
		{[]string{"why", "alice"}, "edgectl: why: missing the service: edgectl why IDENTITY SERVICE"},
		{[]string{"get", "identity", "alice", "services", "extra"}, `get: extra argument "extra"`},
		{[]string{"update", "identity", "alice"}, "nothing to change"},
	} {
		if errOut := c.fails(2, m.args...); !strings.Contains(errOut, m.want) {
			t.Fatalf("edgectl %s: %s, want it to say %s", strings.Join(m.args, " "), errOut, m.want)
		}
	}
	var why struct {
		Identity, Service map[string]any
		Dial, Bind        struct {
			Allowed     bool
			Policies    []map[string]any
			EdgeRouters []map[string]any
			Reasons     []string
		}
	}
	if err := json.Unmarshal([]byte(c.ok("why", "alice", "web", "-o", "json")), &why); err != nil {
		t.Fatal(err)
	}
	// Granted, through er1, which has never been enrolled: not usable, and why.
	if why.Dial.Allowed || len(why.Dial.Policies) != 1 || why.Dial.Policies[0]["name"] != "web-dial" || len(why.Dial.EdgeRouters) != 1 ||
		why.Dial.EdgeRouters[0]["isVerified"] != false || len(why.Dial.Reasons) != 1 || !strings.Contains(why.Dial.Reasons[0], "er1 (never enrolled)") ||
		why.Bind.Allowed || len(why.Bind.Reasons) == 0 || why.Identity["name"] != "alice" {
		t.Fatalf("why alice web: %+v", why)
	}

	// Mistakes: one line, exit 2 for the command line, 1 for the rest.
	c.fails(2, "list", "nonsense")
	c.fails(2, "frobnicate")
	c.fails(2, "list", "identities", "-o", "xml")
	c.fails(2, "update", "identity", "alice")
	c.fails(2, "create", "service", "x", "--set", "=1")
	// A misspelt field or kind is named, with what it looks like, and nothing is stored.
	for _, m := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "identity", "typo", "--set", "roleAtributes=x"}, `--set roleAtributes: no field "roleAtributes" here; did you mean "roleAttributes"?`},
		{[]string{"update", "identity", "alice", "--set", "tpye=Device"}, `did you mean "type"?`},
		{[]string{"update", "identity", "alice", "--set", "colour=red"}, `no field "colour" here; the fields are appData, `},
		{[]string{"list", "identites"}, `unknown resource "identites"; did you mean "identities"?`},
	} {
		if errOut := c.fails(2, m.args...); !strings.Contains(errOut, m.want) {
			c.t.Fatalf("edgectl %s: %s, want it to say %s", strings.Join(m.args, " "), errOut, m.want)
		}
	}
	typoFile := filepath.Join(t.TempDir(), "typo.yaml")
	if err := os.WriteFile(typoFile, []byte("name: typo\ntype: Dial\nsemantic: AnyOf\nservcieRoles: ['#web']\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if errOut := c.fails(2, "create", "service-policy", "-f", typoFile); !strings.Contains(errOut, `did you mean "serviceRoles"?`) {
		t.Fatalf("a misspelt field in -f: %s", errOut)
	}
	if out := c.ok("list", "identities", "-o", "json"); strings.Contains(out, `"typo"`) {
		t.Fatalf("a refused create stored a record:\n%s", out)
	}
	c.fails(1, "get", "identity", "nobody")
	c.fails(1, "create", "service-policy", "bad", "--set", "type=Sometimes")
	c.ok("delete", "service", "web")
	c.fails(1, "get", "service", "web")

	// Backup, cluster status, through the profile and the admin socket.
	snap := filepath.Join(t.TempDir(), "backup.snap")
	c.ok("backup", snap)
	if st, err := os.Stat(snap); err != nil || st.Size() == 0 {
		t.Fatalf("backup file: %v", err)
	}
	// Through the admin socket, with no login (what a backup timer runs).
	local := filepath.Join(t.TempDir(), "local.snap")
	if out, errOut, code := newCLI(t).run("", "backup", "--data-dir", n.dataDir, local); code != 0 || !strings.Contains(out, "snapshot") {
		t.Fatalf("backup through the admin socket: exit %d: %s%s", code, out, errOut)
	}
	if st, err := os.Stat(local); err != nil || st.Size() == 0 {
		t.Fatalf("backup file through the admin socket: %v", err)
	}
	var members []map[string]any
	for _, args := range [][]string{{"cluster", "status", "-o", "json"}, {"cluster", "status", "-o", "json", "--data-dir", n.dataDir}} {
		if err := json.Unmarshal([]byte(c.ok(args...)), &members); err != nil || len(members) != 1 || members[0]["isLeader"] != true || members[0]["version"] == nil {
			t.Fatalf("%v: %v %v", args, err, members)
		}
	}

	// A lost admin password: reset through the admin socket, log in with it.
	if _, errOut, code := c.run("Fresh-pass-99\n", "admin", "reset-password", "--data-dir", n.dataDir, "--password-stdin"); code != 0 {
		t.Fatalf("reset-password: %s", errOut)
	}
	c.ok("logout")
	c.fails(1, "list", "identities")
	if _, errOut, code := c.run("Fresh-pass-99\n", "login", url, "-u", adminUser, "--password-stdin", "--ca", filepath.Join(n.dataDir, "pki", "ca-bundle.pem")); code != 0 {
		t.Fatalf("login with the reset password: %s", errOut)
	}
	// An expired token says to log in again.
	ps := filepath.Join(c.cfgDir, "edgectl", "profiles.json")
	raw, _ := os.ReadFile(ps)
	var profiles map[string]map[string]any
	_ = json.Unmarshal(raw, &profiles)
	profiles["default"]["token"] = "expired-token"
	raw, _ = json.Marshal(profiles)
	_ = os.WriteFile(ps, raw, 0o600)
	if msg := c.fails(1, "list", "identities"); !strings.Contains(msg, "log in again") {
		t.Fatalf("an expired token: %s", msg)
	}
	// The server down.
	n.stop()
	if msg := c.fails(1, "list", "identities"); !strings.Contains(msg, "cannot reach") {
		t.Fatalf("server down: %s", msg)
	}
}

// export → apply on a fresh controller → export gives the same file; apply
// twice changes nothing; --dry-run changes nothing; --prune deletes what the
// file no longer lists.
func TestCLIExportApplyRoundTrip(t *testing.T) {
	t.Parallel()
	a, b := startNode(t, nodeOpts{}), startNode(t, nodeOpts{})
	ca, cb := newCLI(t), newCLI(t)
	for _, x := range []struct {
		c *cli
		n *node
	}{{ca, a}, {cb, b}} {
		if _, errOut, code := x.c.run(x.n.password+"\n", "login", "https://"+x.n.host(), "-u", adminUser, "--password-stdin", "--yes"); code != 0 {
			t.Fatalf("login: %s", errOut)
		}
	}
	ca.ok("create", "identity", "laptop", "--type", "Device", "--role-attributes", "staff")
	ca.ok("create", "identity", "server", "--role-attributes", "hosts")
	ca.ok("create", "config", "web-intercept", "--set", "configTypeId=intercept.v1", "--set",
		`data={"protocols":["tcp"],"addresses":["web.ziti"],"portRanges":[{"low":80,"high":80}]}`)
	ca.ok("create", "service", "web", "--set", "configs=web-intercept", "--set", "roleAttributes=web")
	ca.ok("create", "posture-check", "corp-mac", "--set", "typeId=MAC", "--set", `macAddresses=["aabbccddeeff"]`)
	ca.ok("create", "service-policy", "web-dial", "--set", "type=Dial", "--set", "semantic=AnyOf", "--set", "identityRoles=@laptop,#staff",
		"--set", "serviceRoles=#web", "--set", "postureCheckRoles=@corp-mac")
	ca.ok("create", "service-policy", "web-bind", "--set", "type=Bind", "--set", "semantic=AnyOf", "--set", "identityRoles=#hosts", "--set", "serviceRoles=@web")
	ca.ok("create", "edge-router", "er1", "--set", "roleAttributes=public")
	// A router's tunneler identity, made by its router, with the user's attributes (web-bind selects it).
	ca.ok("create", "edge-router", "tun1", "--set", "isTunnelerEnabled=true")
	ca.ok("update", "identity", "tun1", "--set", "roleAttributes=hosts")
	ca.ok("create", "edge-router-policy", "everyone", "--set", "semantic=AnyOf", "--set", "identityRoles=#all", "--set", "edgeRouterRoles=#public")
	ca.ok("create", "service-edge-router-policy", "web-routers", "--set", "semantic=AnyOf", "--set", "serviceRoles=#web", "--set", "edgeRouterRoles=@er1")

	exported := ca.ok("export")
	if strings.Contains(exported, `"id"`) || strings.Contains(exported, "Default Admin") || !strings.Contains(exported, "'@laptop'") && !strings.Contains(exported, "@laptop") {
		t.Fatalf("the export should hold names, no ids, no controller-made records:\n%s", exported)
	}
	if strings.Count(exported, "name: tun1") != 2 || strings.Contains(exported, "-system") {
		t.Fatalf("the export should hold the router and its identity, not its system policy:\n%s", exported)
	}
	file := filepath.Join(t.TempDir(), "network.yaml")
	_ = os.WriteFile(file, []byte(exported), 0o600)

	if out := cb.ok("apply", "-f", file, "--dry-run"); !strings.Contains(out, "(dry run) + identity laptop") {
		t.Fatalf("dry run:\n%s", out)
	}
	if out := cb.ok("list", "identities", `name = "laptop"`, "-o", "json"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("--dry-run created something:\n%s", out)
	}
	cb.ok("apply", "-f", file)
	if again := cb.ok("export"); again != exported {
		t.Fatalf("export of the applied controller differs:\n--- first\n%s\n--- second\n%s", exported, again)
	}
	if out := cb.ok("apply", "-f", file); strings.TrimSpace(out) != "no changes" {
		t.Fatalf("a second apply changed something:\n%s", out)
	}

	// Edit the file: a changed attribute, a policy gone; prune.
	var doc map[string][]map[string]any
	if err := yaml.Unmarshal([]byte(exported), &doc); err != nil {
		t.Fatal(err)
	}
	for _, ident := range doc["identities"] {
		if ident["name"] == "laptop" {
			ident["roleAttributes"] = []any{"staff", "travel"}
		}
	}
	var kept []map[string]any
	for _, p := range doc["service-policies"] {
		if p["name"] != "web-bind" {
			kept = append(kept, p)
		}
	}
	doc["service-policies"] = kept
	raw, _ := yaml.Marshal(doc)
	edited := string(raw)
	_ = os.WriteFile(file, raw, 0o600)
	out := cb.ok("apply", "-f", file, "--prune")
	if !strings.Contains(out, "~ identity laptop: roleAttributes") || !strings.Contains(out, "- service-policy web-bind") {
		t.Fatalf("apply --prune of the edited file:\n%s", out)
	}
	if got := cb.ok("export"); got != edited {
		t.Fatalf("after --prune the export is not the edited file:\n--- edited\n%s\n--- export\n%s", edited, got)
	}
}

// cluster status and backup through the login profile on a three-node
// cluster, logged in to a follower.
func TestCLIClusterStatusAndBackupOnThreeNodes(t *testing.T) {
	t.Parallel()
	cl := startCluster(t, clusterOpts{size: 3})
	l := cl.leader(10 * time.Second)
	f := cl.nodes[(l+1)%3]
	c := newCLI(t)
	if _, errOut, code := c.run(f.password+"\n", "login", "https://"+f.host(), "-u", adminUser, "--password-stdin", "--yes"); code != 0 {
		t.Fatalf("login: %s", errOut)
	}
	down, downID := cl.nodes[(l+2)%3], cl.ids[(l+2)%3] // the member stopped below
	var downApplied float64                            // its applied index while it answers
	waitUntil(t, "cluster status shows three online members", 5*time.Second, func() error {
		var members []map[string]any
		out, errOut, code := c.run("", "cluster", "status", "-o", "json")
		if code != 0 {
			return fmt.Errorf("exit %d: %s", code, errOut)
		}
		if err := json.Unmarshal([]byte(out), &members); err != nil {
			return err
		}
		leaders := 0
		for _, m := range members {
			if m["isOnline"] != true || m["lastAppliedIndex"] == nil || m["lag"] == nil || m["version"] == nil {
				return fmt.Errorf("member %v", m)
			}
			if m["isLeader"] == true {
				leaders++
			}
			if m["id"] == downID {
				downApplied, _ = m["lastAppliedIndex"].(float64)
			}
		}
		if len(members) != 3 || leaders != 1 {
			return fmt.Errorf("%d members, %d leaders", len(members), leaders)
		}
		return nil
	})
	// cluster list through the login profile, as status.
	if out := c.ok("cluster", "list"); strings.Count(out, "\n") != 4 || !strings.Contains(out, cl.ids[l]) {
		t.Fatalf("cluster list through the profile:\n%s", out)
	}
	snap := filepath.Join(t.TempDir(), "cluster.snap")
	if out := c.ok("backup", snap); !strings.Contains(out, "snapshot") {
		t.Fatalf("backup: %s", out)
	}
	if st, err := os.Stat(snap); err != nil || st.Size() == 0 {
		t.Fatalf("backup file: %v", err)
	}
	// The file restores.
	if out := c.ok("restore", "--data-dir", filepath.Join(t.TempDir(), "restored"), "--cluster-addr", fmt.Sprintf("127.0.0.1:%d", freePort(t)), snap); !strings.Contains(out, "Restored") {
		t.Fatalf("restore of the backup: %s", out)
	}

	// A member down: status still answers (through the node logged in to),
	// shows what it cannot know as unknown, and exits 1 naming the member.
	down.kill()
	waitUntil(t, "cluster status names the member that is down", 10*time.Second, func() error {
		out, errOut, code := c.run("", "cluster", "status")
		if code != 1 || !strings.Contains(errOut, "does not answer") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			return fmt.Errorf("exit %d: %s", code, errOut)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, down.host()) || strings.Contains(line, cl.ids[(l+2)%3]) {
				if !strings.Contains(line, "unknown") {
					return fmt.Errorf("the member that is down: %s", line)
				}
				return nil
			}
		}
		return fmt.Errorf("no line for the member that is down:\n%s", out)
	})
	// In JSON, and in the API's member lists, its applied index is the last
	// one it reported, not a made-up 0.
	out, _, _ := c.run("", "cluster", "status", "-o", "json")
	var members []map[string]any
	if err := json.Unmarshal([]byte(out), &members); err != nil {
		t.Fatalf("cluster status -o json with a member down: %v\n%s", err, out)
	}
	_, listed, err := doErr(http.MethodGet, f.mgmt("/cluster/members"), cl.token, nil)
	if err != nil {
		t.Fatal(err)
	}
	apiMembers, _ := listed["data"].([]any)
	found := 0
	for _, m := range append(members, asMaps(apiMembers)...) {
		if m["id"] != downID {
			continue
		}
		found++
		if applied, ok := m["lastAppliedIndex"].(float64); m["isOnline"] != false || !ok || applied < downApplied || applied == 0 {
			t.Errorf("the member that is down, last seen at applied index %v: %v", downApplied, m)
		}
	}
	if found != 2 {
		t.Fatalf("the member that is down is in %d of cluster status and GET /cluster/members", found)
	}
}

// asMaps are the JSON objects of a list.
func asMaps(l []any) []map[string]any {
	out := make([]map[string]any, 0, len(l))
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
