package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
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
