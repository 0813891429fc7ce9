package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"edgectl/bench/benchkit"
)

// measureReal runs the real routers, hosts and client on the controller
// a is a session of; it stops them before it returns.
func measureReal(ctrl string, a *benchkit.API, dir string) (counts, error) {
	var c counts
	var p benchkit.Procs
	defer p.Stop()
	defer track(&p)()
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
	routerIDs, err := startRouters(a, dir, &p)
	if err != nil {
		return c, err
	}

	// The hosts: enrolled a few at a time, *perProc identities to a
	// directory, one sdkecho process per directory.
	start := time.Now()
	groups := (*hosts + *perProc - 1) / *perProc
	var enrolled atomic.Int64
	err = parallel(*hosts, *enrollWorkers, func(i int) error {
		g := filepath.Join(dir, fmt.Sprintf("hosts-%03d", i / *perProc))
		if err := os.MkdirAll(g, 0o700); err != nil {
			return err
		}
		if _, err := enrollIdentity(a, dir, g, fmt.Sprintf("real-host-%d", i), "real-host"); err != nil {
			return err
		}
		if n := enrolled.Add(1); n%100 == 0 {
			fmt.Printf("%s: %d hosts enrolled (%s)\n", ctrl, n, time.Since(start).Round(time.Second))
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	fmt.Printf("%s: %d hosts enrolled in %s; starting %d sdkecho processes, each once the one before listens\n", ctrl, *hosts, time.Since(start).Round(time.Second), groups)
	start = time.Now()
	var pids []int
	for g := range groups {
		gdir := filepath.Join(dir, fmt.Sprintf("hosts-%03d", g))
		cmd, err := p.Start(gdir, "sdkecho.log", *sdkecho, "host", "-identities", gdir, "-s", "real-svc",
			"-parallel", fmt.Sprint(*startParallel), "-retry", settleMax.String())
		if err != nil {
			return c, err
		}
		pids = append(pids, cmd.Process.Pid)
		err = benchkit.WaitFor(fmt.Sprintf("sdkecho %d listening", g), *settleMax, func() error {
			b, err := os.ReadFile(filepath.Join(gdir, "sdkecho.log"))
			if err != nil || !strings.Contains(string(b), "listening") {
				return fmt.Errorf("not yet: %v", err)
			}
			return nil
		})
		if err != nil {
			fmt.Printf("%s: %v; going on\n", ctrl, err)
		}
	}
	fmt.Printf("%s: %d sdkecho processes listening after %s\n", ctrl, groups, time.Since(start).Round(time.Second))
	made, took := settle(ctrl, a, start)
	fmt.Printf("%s: real hosts: %d terminators %s after the first host process started (settled: no change for %s, or %d each)\n", ctrl, made, took.Round(time.Second), *quiet, min(*routers, 3))
	listening := 0
	for g := range groups {
		b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("hosts-%03d", g), "sdkecho.log"))
		if strings.Contains(string(b), "listening") {
			listening++
		}
	}
	var rss int64
	for _, pid := range pids {
		rss += rssKiB(pid)
	}
	fmt.Printf("%s: %d of %d sdkecho processes listening; their RSS %d MiB (%d KiB an identity)\n", ctrl, listening, groups, rss>>10, rss/int64(*hosts))
	if c, err = tally(a, "real-svc", routerIDs); err != nil {
		return c, err
	}

	client, err := enrollIdentity(a, dir, dir, "real-client", "real-dial")
	if err != nil {
		return c, err
	}
	c.dials = *dials
	out, err := exec.Command(*sdkecho, "dial", "-i", client, "-s", "real-svc", "-bytes", "100", "-sequential", fmt.Sprint(*dials-1), "-concurrent", "0").CombinedOutput()
	c.circuits = *dials
	if err != nil {
		c.circuits = madeBefore(string(out))
		fmt.Printf("%s: the real client: %v: %s\n", ctrl, err, out)
	}
	fmt.Printf("%s: real: %d terminators %v, hosts %s, %d twice on a router, %d circuits of %d\n", ctrl, c.total, c.perRouter, c.hostShape(), c.twice, c.circuits, c.dials)
	return c, nil
}

// startRouters creates, enrolls and runs *routers `ziti router`
// processes, and waits until the controller has them all online; it
// returns their ids.
func startRouters(a *benchkit.API, dir string, p *benchkit.Procs) ([]string, error) {
	var ids []string
	for i := range *routers {
		name := fmt.Sprintf("real-router-%d", i)
		id, err := a.Create("/edge-routers", map[string]any{"name": name, "roleAttributes": []string{"real-router"}, "isTunnelerEnabled": false})
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
		rdir := filepath.Join(dir, name)
		if err := os.MkdirAll(rdir, 0o700); err != nil {
			return nil, err
		}
		jwt, err := a.Field("/edge-routers/"+id, "enrollmentJwt")
		if err != nil {
			return nil, err
		}
		cfg := filepath.Join(rdir, "router.yml")
		if err := os.WriteFile(filepath.Join(rdir, "router.jwt"), []byte(jwt), 0o600); err != nil {
			return nil, err
		}
		conf := benchkit.ZitiRouterConfig(rdir, strings.TrimPrefix(a.Base, "https://"), benchkit.Loopback(benchkit.MustFreePort()))
		if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
			return nil, err
		}
		if out, err := exec.Command(bins.Ziti, "router", "enroll", cfg, "--jwt", filepath.Join(rdir, "router.jwt")).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("router enroll: %v: %s", err, out)
		}
		if _, err := p.Start(rdir, "router.log", bins.Ziti, "router", "run", cfg); err != nil {
			return nil, err
		}
	}
	return ids, benchkit.WaitFor("the real routers online", 2*time.Minute, func() error {
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
}

// enrollIdentity creates identity name (role attribute attr) with a
// one-time token, enrolls it with `ziti edge enroll` (its key *keyAlg)
// and returns its identity file, out/name.json; the token goes to
// jwtDir.
func enrollIdentity(a *benchkit.API, jwtDir, out, name, attr string) (string, error) {
	id, err := a.Create("/identities", map[string]any{"name": name, "type": "Device", "isAdmin": false,
		"roleAttributes": []string{attr}, "enrollment": map[string]any{"ott": true}})
	if err != nil {
		return "", err
	}
	jwt, err := a.Field("/identities/"+id, "enrollment", "ott", "jwt")
	if err != nil {
		return "", err
	}
	jf, file := filepath.Join(jwtDir, name+".jwt"), filepath.Join(out, name+".json")
	if err := os.WriteFile(jf, []byte(jwt), 0o600); err != nil {
		return "", err
	}
	if b, err := exec.Command(bins.Ziti, "edge", "enroll", jf, "-o", file, "-a", *keyAlg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("enroll %s: %v: %s", name, err, b)
	}
	return file, nil
}

// settle polls the count of the real service's terminators (the hosts
// started at start) each second
// until every host has min(routers, 3) (sdk-golang's default
// MaxTerminators, one per router), or it has not moved for *quiet with
// at least one a host, or *settleMax passes; it returns the count and the
// time it took.
func settle(ctrl string, a *benchkit.API, start time.Time) (int, time.Duration) {
	want := *hosts * min(*routers, 3)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, since, shown := -1, time.Now(), time.Now()
	for range tick.C {
		n, err := count(a, `service.name = "real-svc"`)
		if err != nil {
			fmt.Printf("%s: counting the terminators: %v\n", ctrl, err)
			continue
		}
		if n != last {
			last, since = n, time.Now()
		}
		if time.Since(shown) > 15*time.Second {
			fmt.Printf("%s: %d terminators (%s)\n", ctrl, n, time.Since(start).Round(time.Second))
			shown = time.Now()
		}
		if n >= want || (n >= *hosts && time.Since(since) > *quiet) || time.Since(start) > *settleMax {
			return n, since.Sub(start)
		}
	}
	return last, 0
}

var sequentialFailed = regexp.MustCompile(`sequential connection (\d+):`)

// madeBefore is how many of sdkecho dial's connections succeeded before
// the one its error names (the first connection, then the sequential
// ones).
func madeBefore(out string) int {
	if m := sequentialFailed.FindStringSubmatch(out); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n + 1
	}
	return 0
}

// rssKiB is process pid's resident memory in KiB (0 if unknown).
func rssKiB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// parallel runs fn(0..n-1), workers at a time, and returns the first
// error (the others still run).
func parallel(n, workers int, fn func(i int) error) error {
	jobs := make(chan int, n)
	for i := range n {
		jobs <- i
	}
	close(jobs)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}
