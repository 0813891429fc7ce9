package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCLIEvents: `edgectl events` prints the audit trail, filtered and from
// an id; `edgectl events --follow -o json` prints a change made afterwards
// as it happens, one JSON object a line.
func TestCLIEvents(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	c := newCLI(t)
	if _, errOut, code := c.run(n.password+"\n", "login", "https://"+n.host(), "-u", adminUser, "--password-stdin", "--yes"); code != 0 {
		t.Fatalf("login: %s", errOut)
	}
	c.ok("create", "service", "audited-1")
	c.ok("create", "service", "audited-2")

	out := c.ok("events", "--filter", `namespace = "entity" and entityType = "services"`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "entity.created  services audited-1  by Default Admin") || !strings.Contains(lines[1], "audited-2") {
		t.Fatalf("the services' events:\n%s", out)
	}
	first, _, _ := strings.Cut(lines[0], " ")
	if out := c.ok("events", "--filter", `entityType = "services"`, "--from-id", first, "-o", "json"); strings.Count(out, "\n") != 1 || !strings.Contains(out, `"entityName":"audited-2"`) {
		t.Fatalf("the events after %s:\n%s", first, out)
	}
	c.fails(2, "events", "-o", "xml")
	c.fails(1, "events", "--filter", "nosuchfield = 1")

	// Following: a change made after it started.
	cmd := exec.Command(binPath, "events", "--follow", "-o", "json", "--filter", `entityType = "services"`)
	cmd.Env = append(envWithout("EDGECTL_ADMIN_PASSWORD"), "XDG_CONFIG_HOME="+c.cfgDir, "EDGECTL_PROFILE=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var mu sync.Mutex
	var seen []map[string]any
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				mu.Lock()
				seen = append(seen, e)
				mu.Unlock()
			}
		}
	}()
	waitUntil(t, "edgectl events --follow prints a service created after it started", 10*time.Second, func() error {
		c.ok("create", "service", fmt.Sprintf("followed-%d", time.Now().UnixNano()))
		mu.Lock()
		defer mu.Unlock()
		for _, e := range seen {
			if name, _ := e["entityName"].(string); strings.HasPrefix(name, "followed-") {
				return nil
			}
			if name, _ := e["entityName"].(string); strings.HasPrefix(name, "audited-") {
				return fmt.Errorf("it printed an event from before it started: %v", e)
			}
		}
		return fmt.Errorf("%d events printed", len(seen))
	})
}

// TestCLIEnrollments: `edgectl create enrollment ott IDENTITY --duration`
// prints a JWT that OpenZiti's `ziti edge enroll` enrolls with; `edgectl
// reset enrollment IDENTITY` gives an enrolled identity a new one (and an
// identity with one outstanding a new JWT, the old one refused); updb takes
// a username; mistakes are one line and exit 2.
func TestCLIEnrollments(t *testing.T) {
	t.Parallel()
	ziti := zitiBinary(t)
	n := startNode(t, nodeOpts{})
	c := newCLI(t)
	if _, errOut, code := c.run(n.password+"\n", "login", "https://"+n.host(), "-u", adminUser, "--password-stdin", "--yes"); code != 0 {
		t.Fatalf("login: %s", errOut)
	}
	c.ok("create", "identity", "laptop", "--type", "Device")
	jwt := strings.TrimSpace(c.ok("create", "enrollment", "ott", "laptop", "--duration", "2h"))
	if strings.Count(jwt, ".") != 2 {
		t.Fatalf("create enrollment printed %q, want a JWT", jwt)
	}
	dir := t.TempDir()
	jwtFile, idFile := filepath.Join(dir, "laptop.jwt"), filepath.Join(dir, "laptop.json")
	if err := os.WriteFile(jwtFile, []byte(jwt), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(ziti, "edge", "enroll", jwtFile, "-o", idFile).CombinedOutput(); err != nil {
		t.Fatalf("ziti edge enroll with the JWT edgectl printed: %v\n%s", err, out)
	}

	// Enrolled: reset makes a new one; run again, it refreshes that one.
	first := filepath.Join(dir, "first.jwt")
	c.ok("reset", "enrollment", "laptop", "--jwt-file", first, "--duration", "1h")
	again := strings.TrimSpace(c.ok("reset", "enrollment", "laptop"))
	old, _ := os.ReadFile(first)
	if len(old) == 0 || string(old) == again {
		t.Fatalf("reset twice gave the same JWT (%d bytes)", len(old))
	}
	var es []map[string]any
	if err := json.Unmarshal([]byte(c.ok("list", "enrollments", "-o", "json")), &es); err != nil || len(es) != 1 || es[0]["jwt"] != again {
		t.Fatalf("the laptop's enrollments after two resets: %v %v", err, es)
	}
	if out, err := exec.Command(ziti, "edge", "enroll", first, "-o", filepath.Join(dir, "stale.json")).CombinedOutput(); err == nil {
		t.Fatalf("the JWT a reset replaced still enrolls:\n%s", out)
	}

	c.ok("create", "identity", "bob")
	if jwt := c.ok("create", "enrollment", "updb", "bob", "--username", "bob-user"); strings.Count(jwt, ".") != 2 {
		t.Fatalf("updb enrollment: %q", jwt)
	}
	for _, args := range [][]string{
		{"create", "enrollment", "ott"},
		{"create", "enrollment", "magic", "bob"},
		{"create", "enrollment", "ott", "bob", "--duration", "-1h"},
		{"create", "enrollment", "ottca", "bob"},
		{"reset", "enrollment"},
		{"reset", "identity", "bob"},
		{"create", "service", "x", "--duration", "1h"},
	} {
		c.fails(2, args...)
	}
	c.fails(1, "create", "enrollment", "ott", "nobody")
}
