package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// busyRefusals is the node's count of terminator creates answered busy.
const busyRefusals = `edgectl_router_requests_refused_total{reason="busy",request="create_terminator"}`

// TestRouter_ATerminatorStormIsAnsweredBusyAndTheRealRouterRetriesNoneLost:
// a node run with --max-terminator-creates 1 meets a storm of creates from
// OpenZiti's real router v1.7.2: four sdk-golang hosts binding ten
// services each, all at once. The node answers
// creates over its bound busy, the router logs that it retries them
// (router/xgress_edge/hosted.go: FailedBusy backs its rate limiter off and
// queues the create again), and in the end every service has exactly one
// terminator, in the node's model and established in the router's own
// sdk-terminators; a dial of each service echoes.
func TestRouter_ATerminatorStormIsAnsweredBusyAndTheRealRouterRetriesNoneLost(t *testing.T) {
	t.Parallel()
	bin := sdkEchoBinary(t)
	metrics := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	n := startNode(t, nodeOpts{args: []string{"--max-terminator-creates", "1", "--metrics-addr", metrics}})
	token := login(t, n, adminUser, adminPassword)
	dir := t.TempDir()
	r := startZitiRouter(t, n, token, "er-storm")
	mk := creator(t, n, token)
	mk("/service-policies", map[string]any{"name": "storm-dial", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"#clients"}, "serviceRoles": []string{"#storm"}})
	mk("/service-policies", map[string]any{"name": "storm-bind", "type": "Bind", "semantic": "AnyOf",
		"identityRoles": []string{"#hosts"}, "serviceRoles": []string{"#storm"}})
	mk("/edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "identityRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	mk("/service-edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "serviceRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})

	const hosts, perHost = 4, 10
	var all []string
	hosted := make([][]string, hosts)
	for h := range hosts {
		for s := range perHost {
			name := fmt.Sprintf("storm-%d-%d", h, s)
			mk("/services", map[string]any{"name": name, "roleAttributes": []string{"storm"}})
			hosted[h] = append(hosted[h], name)
			all = append(all, name)
		}
	}
	files := make([]string, hosts)
	for h := range hosts {
		_, files[h] = enrolledIdentity(t, n, token, dir, fmt.Sprintf("storm-host-%d", h), "hosts")
	}
	_, clientFile := enrolledIdentity(t, n, token, dir, "storm-client", "clients")
	before, err := scrapeMetrics(metrics, busyRefusals)
	if err != nil {
		t.Fatal(err)
	}

	// Every service ends with exactly one terminator, on the router. The
	// router retries a busy create at once, paced by its adaptive rate
	// limiter; on a loaded machine the forty one-at-a-time creates take
	// seconds, the deadline is generous.
	noneLost := func(what string) {
		t.Helper()
		var ids []string
		modelIDs := func() error {
			items, err := listAll(t, n, token, "/terminators")
			if err != nil {
				return err
			}
			got := map[string]int{}
			ids = nil
			for _, it := range items {
				if router := jget(it, "router", "id"); router != r.id {
					return fmt.Errorf("a terminator on router %v", router)
				}
				got[fmt.Sprint(jget(it, "service", "name"))]++
				ids = append(ids, fmt.Sprint(jget(it, "id")))
			}
			for _, s := range all {
				if got[s] != 1 {
					return fmt.Errorf("%d terminators of %s (%d in all)", got[s], s, len(items))
				}
			}
			if len(items) != len(all) {
				return fmt.Errorf("%d terminators, want %d", len(items), len(all))
			}
			slices.Sort(ids)
			return nil
		}
		waitUntil(t, what+": one terminator of each of the 40 services in the model", 3*time.Minute, modelIDs)
		// The router holds exactly the model's terminators (read again
		// each time: after a restart the model first lists the old ones),
		// each established (none waiting for a retry).
		waitUntil(t, what+": the router's sdk-terminators are the model's, established", 3*time.Minute, func() error {
			if err := modelIDs(); err != nil {
				return err
			}
			st, m, err := doErr(http.MethodPost, "https://"+n.host()+"/fabric/v1/inspections", token,
				map[string]any{"appRegex": "^" + r.id + "$", "requestedValues": []string{"sdk-terminators"}})
			if err != nil || st != 200 {
				return fmt.Errorf("inspect sdk-terminators: %d %v %v", st, err, m)
			}
			values, _ := m["values"].([]any)
			if len(values) != 1 {
				return fmt.Errorf("%d answers to the inspection: %v", len(values), m)
			}
			var held []string
			entries, _ := jget(values[0], "value", "entries").([]any)
			for _, e := range entries {
				if state := jget(e, "state"); state != "established" {
					return fmt.Errorf("terminator %v is %v on the router", jget(e, "id"), state)
				}
				held = append(held, fmt.Sprint(jget(e, "id")))
			}
			slices.Sort(held)
			if !slices.Equal(held, ids) {
				return fmt.Errorf("the router's sdk-terminators %v, the model's %v", held, ids)
			}
			return nil
		})
	}
	busySince := func(before map[string]int) int {
		t.Helper()
		after, err := scrapeMetrics(metrics, busyRefusals)
		if err != nil {
			t.Fatal(err)
		}
		return after[busyRefusals] - before[busyRefusals]
	}
	// The storm: every host binds its ten services at once. How many of
	// the creates overlap at the node is this machine's timing (each host's
	// SDK fetches a session and the service's routers before each bind), so
	// a storm that happened to send them one after another is repeated,
	// the hosts stopped and their terminators gone first, up to 4 times.
	busy := 0
	for round := 1; busy == 0; round++ {
		if round > 4 {
			t.Fatalf("no terminator create was answered busy in 4 storms: the bound of 1 was not hit")
		}
		var procs []*zitiProc
		for h := range hosts {
			procs = append(procs, startProgram(t, dir, fmt.Sprintf("sdkecho host %d (storm %d)", h, round), bin, "host", "-i", files[h], "-s", strings.Join(hosted[h], ",")))
		}
		noneLost(fmt.Sprintf("storm %d", round))
		busy = busySince(before)
		t.Logf("storm %d: %d creates answered busy so far", round, busy)
		if busy > 0 {
			break
		}
		for _, p := range procs {
			p.stop()
		}
		waitUntil(t, "the hosts gone, their terminators removed", 2*time.Minute, func() error {
			items, err := listAll(t, n, token, "/terminators")
			if err != nil {
				return err
			}
			if len(items) != 0 {
				return fmt.Errorf("%d terminators", len(items))
			}
			return nil
		})
	}

	// The real router took the answer as "retry later".
	if !r.logged("controller too busy to handle create terminator, retrying later") {
		t.Fatalf("the router never logged that it retries a busy create")
	}
	t.Logf("%d creates answered busy; each of the %d terminators made once", busy, len(all))

	// A dial of each service echoes.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "dial", "-i", clientFile, "-s", strings.Join(all, ","),
		"-bytes", "1024", "-sequential", "0", "-concurrent", "0")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("a dial of each service: %v\n%s", errors.Join(err, ctx.Err()), tail(string(out), 20))
	}

	// The router restarted (within the node's grace) while its hosts stay
	// up: it forgets their terminators, the node removes those it no
	// longer has, the hosts bind again, and the model and the router agree
	// again (openziti/ziti-tunnel-sdk-c#918, openziti/ziti#3769).
	r.stop()
	r.start()
	noneLost("after the router's restart")
}
