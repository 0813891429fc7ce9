// Command fidelity shows that the fleet tool's simulated routers give the
// controller what real ones give: at a small size, on each controller
// (edgectl, OpenZiti's), real `ziti router` v1.7.2 processes with real
// sdk-golang hosting endpoints (integration/sdk's sdkecho, one process per
// identity, each binding the service through the routers it reaches) and a
// real dialing client, then the fleet tool with the same routers, hosts and
// dials; it prints the terminators each makes per router and the circuits
// that succeed, side by side.
//
//	(cd integration/sdk && go build -o /tmp/sdkecho .)
//	go run ./bench/fleet/cmd/fidelity -edgectl bin/edgectl -ziti $(sh scripts/ziti.sh) -sdkecho /tmp/sdkecho
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"edgectl/bench/benchkit"
	"edgectl/bench/fleet"
)

var (
	bins    benchkit.Comparison
	sdkecho = flag.String("sdkecho", "", "integration/sdk built (go build -o PATH . in integration/sdk)")
	routers = flag.Int("routers", 3, "edge routers (real, then simulated)")
	hosts   = flag.Int("hosts", 10, "hosting identities (real sdk-golang processes, then simulated)")
	dials   = flag.Int("dials", 50, "sequential dials of the real client (then as many simulated circuits)")
)

const password = "fleet-admin-1"

// counts is what one side gave a controller.
type counts struct {
	perRouter []int // terminators per router, sorted
	total     int
	circuits  int
}

func main() {
	bins.Register(flag.CommandLine)
	flag.Parse()
	if err := bins.Check(); err != nil {
		benchkit.Fail(err)
	}
	if *sdkecho == "" {
		benchkit.Fail(errors.New("-sdkecho is required"))
	}
	type row struct {
		ctrl      string
		real, sim counts
	}
	var rows []row
	for _, ctrl := range bins.Controllers() {
		real, sim, err := measure(ctrl)
		if err != nil {
			benchkit.Fail(fmt.Errorf("%s: %w", ctrl, err))
		}
		rows = append(rows, row{ctrl, real, sim})
	}
	fmt.Printf("\n%d routers, %d hosting identities, %d dials\n\n", *routers, *hosts, *dials)
	fmt.Println("| controller | side | terminators | per router | circuits made |")
	fmt.Println("|---|---|---|---|---|")
	for _, r := range rows {
		for _, s := range []struct {
			name string
			c    counts
		}{{"ziti router + sdk-golang", r.real}, {"fleet tool", r.sim}} {
			fmt.Printf("| %s | %s | %d | %v | %d |\n", r.ctrl, s.name, s.c.total, s.c.perRouter, s.c.circuits)
		}
	}
}

func measure(ctrl string) (real, sim counts, err error) {
	dir, err := os.MkdirTemp("", "fidelity-"+ctrl+"-")
	if err != nil {
		return real, sim, err
	}
	defer os.RemoveAll(dir)
	var p benchkit.Procs
	defer p.Stop()
	port := benchkit.MustFreePort()
	if _, err := bins.StartController(&p, ctrl, dir, port, password, "--log-level", "warn"); err != nil {
		return real, sim, err
	}
	a, err := benchkit.AdminSession("https://"+benchkit.Loopback(port), "admin", password, 120*time.Second)
	if err != nil {
		return real, sim, err
	}
	fmt.Printf("%s: controller up\n", ctrl)
	if real, err = measureReal(ctrl, a, dir, &p); err != nil {
		return real, sim, err
	}
	sim, err = measureSim(ctrl, a, benchkit.Loopback(port))
	return real, sim, err
}

// measureReal runs the real routers, hosts and client.
func measureReal(ctrl string, a *benchkit.API, dir string, p *benchkit.Procs) (counts, error) {
	var c counts
	svc, err := a.Create("/services", map[string]any{"name": "real-svc", "encryptionRequired": true})
	if err != nil {
		return c, err
	}
	for _, s := range []struct {
		path string
		body map[string]any
	}{
		{"/service-policies", map[string]any{"name": "real-bind", "type": "Bind", "semantic": "AnyOf", "identityRoles": []string{"#real-host"}, "serviceRoles": []string{"@" + svc}}},
		{"/service-policies", map[string]any{"name": "real-dial", "type": "Dial", "semantic": "AnyOf", "identityRoles": []string{"#real-dial"}, "serviceRoles": []string{"@" + svc}}},
		{"/edge-router-policies", map[string]any{"name": "real-erp", "semantic": "AnyOf", "identityRoles": []string{"#real-host", "#real-dial"}, "edgeRouterRoles": []string{"#real-router"}}},
		{"/service-edge-router-policies", map[string]any{"name": "real-serp", "semantic": "AnyOf", "serviceRoles": []string{"@" + svc}, "edgeRouterRoles": []string{"#real-router"}}},
	} {
		if _, err := a.Create(s.path, s.body); err != nil {
			return c, err
		}
	}
	var ids []string
	for i := range *routers {
		name := fmt.Sprintf("real-router-%d", i)
		id, err := a.Create("/edge-routers", map[string]any{"name": name, "roleAttributes": []string{"real-router"}, "isTunnelerEnabled": false})
		if err != nil {
			return c, err
		}
		ids = append(ids, id)
		rdir := filepath.Join(dir, name)
		if err := os.MkdirAll(rdir, 0o700); err != nil {
			return c, err
		}
		jwt, err := a.Field("/edge-routers/"+id, "enrollmentJwt")
		if err != nil {
			return c, err
		}
		cfg := filepath.Join(rdir, "router.yml")
		if err := os.WriteFile(filepath.Join(rdir, "router.jwt"), []byte(jwt), 0o600); err != nil {
			return c, err
		}
		conf := benchkit.ZitiRouterConfig(rdir, strings.TrimPrefix(a.Base, "https://"), benchkit.Loopback(benchkit.MustFreePort()))
		if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
			return c, err
		}
		if out, err := exec.Command(bins.Ziti, "router", "enroll", cfg, "--jwt", filepath.Join(rdir, "router.jwt")).CombinedOutput(); err != nil {
			return c, fmt.Errorf("router enroll: %v: %s", err, out)
		}
		if _, err := p.Start(rdir, "router.log", bins.Ziti, "router", "run", cfg); err != nil {
			return c, err
		}
	}
	identity := func(name, attr string) (string, error) {
		id, err := a.Create("/identities", map[string]any{"name": name, "type": "Device", "isAdmin": false,
			"roleAttributes": []string{attr}, "enrollment": map[string]any{"ott": true}})
		if err != nil {
			return "", err
		}
		jwt, err := a.Field("/identities/"+id, "enrollment", "ott", "jwt")
		if err != nil {
			return "", err
		}
		jf, out := filepath.Join(dir, name+".jwt"), filepath.Join(dir, name+".json")
		if err := os.WriteFile(jf, []byte(jwt), 0o600); err != nil {
			return "", err
		}
		if b, err := exec.Command(bins.Ziti, "edge", "enroll", jf, "-o", out).CombinedOutput(); err != nil {
			return "", fmt.Errorf("enroll %s: %v: %s", name, err, b)
		}
		return out, nil
	}
	err = benchkit.WaitFor("the real routers online", 2*time.Minute, func() error {
		list, err := a.List("/edge-routers?" + benchkit.Filter(`name contains "real-router-"`))
		if err != nil {
			return err
		}
		on := 0
		for _, e := range list {
			if b, _ := benchkit.JGet(e, "isOnline").(bool); b {
				on++
			}
		}
		if on != *routers {
			return fmt.Errorf("%d of %d online", on, *routers)
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	for i := range *hosts {
		f, err := identity(fmt.Sprintf("real-host-%d", i), "real-host")
		if err != nil {
			return c, err
		}
		if _, err := p.Start(dir, fmt.Sprintf("host-%d.log", i), *sdkecho, "host", "-i", f, "-s", "real-svc"); err != nil {
			return c, err
		}
	}
	// The hosts' terminators: wait until the count stops moving for 5 s.
	last, since := -1, time.Now()
	err = benchkit.WaitFor("the hosts' terminators settled", 3*time.Minute, func() error {
		n, err := count(a, `service.name = "real-svc"`)
		if err != nil {
			return err
		}
		if n != last {
			last, since = n, time.Now()
		}
		if n < *hosts || time.Since(since) < 5*time.Second {
			return fmt.Errorf("%d terminators", n)
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	for _, id := range ids {
		n, err := count(a, fmt.Sprintf(`router = "%s"`, id))
		if err != nil {
			return c, err
		}
		c.perRouter = append(c.perRouter, n)
		c.total += n
	}
	slices.Sort(c.perRouter)
	client, err := identity("real-client", "real-dial")
	if err != nil {
		return c, err
	}
	out, err := exec.Command(*sdkecho, "dial", "-i", client, "-s", "real-svc", "-bytes", "100", "-sequential", fmt.Sprint(*dials-1), "-concurrent", "0").CombinedOutput()
	if err != nil {
		fmt.Printf("%s: the real client: %v: %s\n", ctrl, err, out)
	} else {
		c.circuits = *dials
	}
	fmt.Printf("%s: real: %d terminators %v, %d circuits\n", ctrl, c.total, c.perRouter, c.circuits)
	return c, nil
}

// measureSim runs the fleet with as many routers and hosts, each host
// binding through every router as an SDK host with 3 terminators at most
// does (min(routers, 3) terminators per host).
func measureSim(ctrl string, a *benchkit.API, addr string) (counts, error) {
	var c counts
	f, err := fleet.New(context.Background(), a, fleet.Config{Prefix: "sim-", Routers: *routers, Hosts: *hosts, Ctrl: []string{addr}})
	if err != nil {
		return c, err
	}
	f.Start()
	defer f.Stop()
	if err := f.WaitConnected(1, 2*time.Minute); err != nil {
		return c, err
	}
	per := min(*routers, 3)
	ph := f.Terminators(*hosts*per, 0, 4, 2*time.Minute)
	if ph.Failed > 0 {
		return c, fmt.Errorf("%d terminators failed: %v", ph.Failed, ph.FirstErr)
	}
	counts, err := f.TerminatorCounts()
	if err != nil {
		return c, err
	}
	for _, n := range counts {
		c.perRouter = append(c.perRouter, n)
		c.total += n
	}
	slices.Sort(c.perRouter)
	cp := f.Circuits(*dials, 1, 2*time.Minute)
	c.circuits = cp.Count
	fmt.Printf("%s: fleet: %d terminators %v, %d circuits\n", ctrl, c.total, c.perRouter, c.circuits)
	return c, nil
}

// count is the count of terminators matching filter.
func count(a *benchkit.API, filter string) (int, error) {
	out, err := a.Do(http.MethodGet, benchkit.FabricAPI+"/terminators?limit=1&"+benchkit.Filter(filter), nil)
	if err != nil {
		return 0, err
	}
	n, ok := benchkit.JGet(out, "meta", "pagination", "totalCount").(float64)
	if !ok {
		return 0, errors.New("no totalCount")
	}
	return int(n), nil
}
