package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"edgectl/bench/benchkit"
	"edgectl/bench/fleet"
)

// The fleet's correctness run (issue 45's short version): ten simulated
// edge routers speaking the real control protocol make 10,000 terminators
// for their SDK clients on one node, which is then killed (SIGKILL) and
// started again on its data dir. Not one terminator may be lost (each router's
// count matches the Fabric API's list before and after), every router must
// reconnect and hold the data model again (a change made after the restart
// reaches all of them), and circuits must succeed again through every
// router. Not timed: each wait is a poll with a generous deadline.

const (
	fleetRouters     = 10
	fleetHosts       = 20
	fleetTerminators = 10000
)

func TestFleet_KilledNodeKeepsEveryTerminatorAndEveryRouterResyncs(t *testing.T) {
	n := startNode(t, nodeOpts{args: []string{"--log-level", "warn"}})
	api, err := benchkit.AdminSession("https://"+n.host(), adminUser, adminPassword, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.New(context.Background(), api, fleet.Config{Routers: fleetRouters, Hosts: fleetHosts, Services: 2, Ctrl: []string{n.host()}})
	if err != nil {
		t.Fatal(err)
	}
	f.Start()
	t.Cleanup(f.Stop)
	if err := f.WaitConnected(1, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Links(false, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	p := f.Terminators(fleetTerminators, 0, 4, 3*time.Minute)
	if p.Count != fleetTerminators || p.Failed != 0 {
		t.Fatalf("%d of %d terminators made, %d failed (first: %v)", p.Count, fleetTerminators, p.Failed, p.FirstErr)
	}
	t.Logf("terminators: %d in %s (%.0f/s, p50 %s, p99 %s, %d retries)", p.Count, p.Elapsed.Round(time.Millisecond), p.Rate, p.P50, p.P99, p.Retries)
	checkFleetTerminators(t, f, "before the restart")
	if err := f.DialUntil(30 * time.Second); err != nil {
		t.Fatalf("before the restart: %v", err)
	}

	n.kill()
	n = n.restart(t, nodeOpts{args: []string{"--log-level", "warn"}})
	again, err := benchkit.AdminSession("https://"+n.host(), adminUser, adminPassword, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	api.Token = again.Token
	if err := f.WaitReconnected(2, 60*time.Second); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	waitUntil(t, "every fleet router online and synced on the restarted node", 60*time.Second, func() error {
		online, synced, err := f.OnlineRouters()
		if err == nil && (online != fleetRouters || synced != fleetRouters) {
			return fmt.Errorf("%d of %d routers online, %d synced", online, fleetRouters, synced)
		}
		return err
	})
	if _, err := api.Create("/services", map[string]any{"name": "fleet-after-restart"}); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitService("fleet-after-restart", 60*time.Second); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if err := f.DialUntil(60 * time.Second); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	c := f.Circuits(100, 4, 2*time.Minute)
	if c.Count != 100 {
		t.Fatalf("after the restart: %d of 100 circuits made (first failure: %v)", c.Count, c.FirstErr)
	}
	checkFleetTerminators(t, f, "after the restart")
}

// checkFleetTerminators checks that the node lists, router by router,
// exactly the terminators the fleet made, fleetTerminators in all.
func checkFleetTerminators(t *testing.T, f *fleet.Fleet, when string) {
	t.Helper()
	diff, err := f.CheckTerminators()
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if diff != "" {
		t.Fatalf("%s: terminators lost or extra: %s", when, diff)
	}
	total, err := f.Count(benchkit.FabricAPI+"/terminators", `router.name contains "fleet-"`)
	if err != nil || total != fleetTerminators {
		t.Fatalf("%s: the node lists %d fleet terminators (%v), want %d", when, total, err, fleetTerminators)
	}
}
