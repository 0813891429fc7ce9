package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"edgectl/bench/benchkit"
)

// mesh is the three routers of one measurement and the A–C link's proxy.
type mesh struct {
	routers []*router // A, B, C
	acProxy *benchkit.TCPProxy
}

// router is an enrolled `ziti router` directory, not yet running.
type router struct{ name, id, dir, config string }

func measure(ctrl string) (*result, error) {
	r := &result{name: ctrl}
	dir, err := os.MkdirTemp("", "meshbench-"+ctrl+"-")
	if err != nil {
		return nil, err
	}
	if *keep {
		fmt.Printf("%s: logs in %s\n", ctrl, dir)
	} else {
		defer os.RemoveAll(dir)
	}
	var p benchkit.Procs
	defer p.Stop()
	stat0 := benchkit.ReadCPU()
	apiPort := benchkit.MustFreePort()
	if _, err := bins.StartController(&p, ctrl, dir, apiPort, password); err != nil {
		return nil, err
	}
	a, err := benchkit.AdminSession("https://"+benchkit.Loopback(apiPort), "admin", password, 120*time.Second)
	if err != nil {
		return nil, err
	}
	fmt.Printf("%s: controller up\n", ctrl)
	echo, err := benchkit.EchoServer()
	if err != nil {
		return nil, err
	}
	defer echo.Close()
	m, err := setup(a, dir, echo.Addr().(*net.TCPAddr).Port)
	if err != nil {
		return nil, err
	}
	defer m.acProxy.Close()
	fmt.Printf("%s: three routers enrolled; starting them\n", ctrl)

	// (a) The routers start; the tunnelers as soon as the controller has the
	// three online; then a dial every 50 ms until one echoes.
	start := time.Now()
	for _, rt := range m.routers {
		if _, err := p.Start(rt.dir, "router.log", bins.Ziti, "router", "run", rt.config); err != nil {
			return nil, err
		}
	}
	if err := benchkit.WaitFor("the three routers online", 60*time.Second, func() error {
		for _, rt := range m.routers {
			out, err := a.Do(http.MethodGet, "/edge-routers/"+rt.id, nil)
			if err != nil {
				return err
			}
			if on, _ := benchkit.JGet(out, "data", "isOnline").(bool); !on {
				return fmt.Errorf("router %s offline", rt.name)
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	r.online = time.Since(start)
	if _, err := p.Start(dir, "host.log", bins.Ziti, "tunnel", "host", "-i", filepath.Join(dir, "host.json")); err != nil {
		return nil, err
	}
	proxy := benchkit.Loopback(benchkit.MustFreePort())
	if _, err := p.Start(dir, "proxy.log", bins.Ziti, "tunnel", "proxy", "echo:"+strings.TrimPrefix(proxy, "127.0.0.1:"), "-i", filepath.Join(dir, "client.json")); err != nil {
		return nil, err
	}
	if err := benchkit.WaitFor("a first echo", 120*time.Second, func() error {
		c, path, echoed, err := openStream(a, proxy)
		if err != nil {
			return err
		}
		r.usable, r.firstPath = echoed.Sub(start), path
		c.Close()
		return nil
	}); err != nil {
		return nil, err
	}
	fmt.Printf("%s: routers online after %s, first echo after %s over %s\n", ctrl, r.online.Round(time.Millisecond), r.usable.Round(time.Millisecond), r.firstPath)

	// (b) With the three links up and a stream open on A→C, cut A–C.
	if err := waitLinks(a, 60*time.Second, "a-b", "a-c", "b-c"); err != nil {
		return nil, err
	}
	var stream net.Conn
	var before map[string]string
	if err := benchkit.WaitFor("a stream on A→C", 60*time.Second, func() error {
		if before, err = circuits(a); err != nil {
			return err
		}
		c, path, _, err := openStream(a, proxy)
		if err != nil {
			return err
		}
		if path != "a>c" {
			c.Close()
			return fmt.Errorf("the stream's path is %s", path)
		}
		stream = c
		return nil
	}); err != nil {
		return nil, err
	}
	// The cut at the same offset from the routers' start for both
	// controllers (-cut-at): the routers report it on their 5-second tick.
	if wait := time.Until(start.Add(*cutAt)); wait > 0 {
		time.Sleep(wait)
	} else {
		fmt.Printf("%s: the stream opened %s after the routers started, after -cut-at: the cut is late\n", ctrl, time.Since(start).Round(time.Millisecond))
	}
	r.reroute, r.rerouted, r.reroutePath, err = cutAndProbe(a, m.acProxy, stream, before)
	stream.Close()
	if err != nil {
		return nil, fmt.Errorf("reroute: %w", err)
	}
	fmt.Printf("%s: A–C cut; the open stream echoed again after %s, over %s\n", ctrl, r.reroute.Round(time.Millisecond), r.reroutePath)

	// (c) Two hops only: new connections through the client tunneler.
	if err := waitLinks(a, 60*time.Second, "a-b", "b-c"); err != nil {
		return nil, err
	}
	if err := benchkit.WaitFor("a two-hop stream", 30*time.Second, func() error {
		c, path, _, err := openStream(a, proxy)
		if err != nil {
			return err
		}
		c.Close()
		r.dialPath = path
		return nil
	}); err != nil {
		return nil, err
	}
	for range 10 { // warm-up
		_, _ = benchkit.DialOnce(proxy, 10*time.Second)
	}
	var lat []time.Duration
	for range *dials {
		d, err := benchkit.DialOnce(proxy, 10*time.Second)
		if err != nil {
			return nil, fmt.Errorf("two-hop dial %d: %w", len(lat)+1, err)
		}
		lat = append(lat, d)
	}
	r.n = len(lat)
	r.p50, r.p99 = benchkit.P50P99(lat)
	time.Sleep(2 * time.Second)
	if cs, err := circuits(a); err == nil {
		r.left = len(cs)
	}
	r.stolen = benchkit.StolenPct(stat0, benchkit.ReadCPU())
	fmt.Printf("%s: %d two-hop dials over %s: p50 %s, p99 %s\n", ctrl, r.n, r.dialPath, r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond))
	return r, nil
}

// cutAndProbe cuts the proxy under the open stream c (idle: its last echo
// came back), then writes a byte every 10 ms; it returns the time from the
// cut to the first byte echoed, the time from the cut to the controller
// listing the stream's circuit (the one not in before) on A→B→C, and that
// path once the stream echoed.
func cutAndProbe(a *benchkit.API, p *benchkit.TCPProxy, c net.Conn, before map[string]string) (echoed, rerouted time.Duration, path string, err error) {
	stop, wrote, polled := make(chan struct{}), make(chan struct{}), make(chan struct{})
	start := time.Now()
	p.Cut()
	go func() {
		defer close(wrote)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if _, err := c.Write([]byte{'p'}); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	go func() {
		defer close(polled)
		for time.Since(start) < 60*time.Second {
			if newPath(a, before) == "a>b>c" {
				rerouted = time.Since(start)
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	_, err = c.Read(make([]byte, 1))
	echoed = time.Since(start)
	if err == nil {
		select { // the poller may not have seen the new path yet
		case <-polled:
		case <-time.After(5 * time.Second):
		}
	}
	close(stop)
	<-wrote
	<-polled
	if err != nil {
		return 0, 0, "", fmt.Errorf("the open stream after the cut: %w", err)
	}
	return echoed, rerouted, newPath(a, before), nil
}

// circuits are the controller's circuits: id → path ("a>b>c", by router name).
func circuits(a *benchkit.API) (map[string]string, error) {
	items, err := a.List(benchkit.FabricAPI + "/circuits")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, it := range items {
		var names []string
		nodes, _ := benchkit.JGet(it, "path", "nodes").([]any)
		for _, nd := range nodes {
			name, _ := benchkit.JGet(nd, "name").(string)
			names = append(names, name)
		}
		id, _ := benchkit.JGet(it, "id").(string)
		out[id] = strings.Join(names, ">")
	}
	return out, nil
}

// newPath is the path of the circuits that are not in before (those of a
// stream opened since), joined by ", " if several.
func newPath(a *benchkit.API, before map[string]string) string {
	now, err := circuits(a)
	if err != nil {
		return "? (" + err.Error() + ")"
	}
	var paths []string
	for id, p := range now {
		if _, ok := before[id]; !ok {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return "(no new circuit)"
	}
	sort.Strings(paths)
	return strings.Join(paths, ", ")
}

// openStream connects through the client tunneler, echoes hello and
// returns the connection, its circuit's path and when hello came back.
func openStream(a *benchkit.API, proxy string) (net.Conn, string, time.Time, error) {
	before, err := circuits(a)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	c, err := net.DialTimeout("tcp", proxy, 5*time.Second)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	if err := benchkit.EchoOn(c, "hello", 10*time.Second); err != nil {
		c.Close()
		return nil, "", time.Time{}, err
	}
	echoed := time.Now()
	return c, newPath(a, before), echoed, nil
}

// waitLinks waits until the controller's connected links are exactly want
// ("a-b": one link between routers a and b, either way).
func waitLinks(a *benchkit.API, timeout time.Duration, want ...string) error {
	return benchkit.WaitFor("links "+strings.Join(want, ", "), timeout, func() error {
		items, err := a.List(benchkit.FabricAPI + "/links")
		if err != nil {
			return err
		}
		var got []string
		for _, it := range items {
			if st, _ := benchkit.JGet(it, "state").(string); st != "Connected" {
				continue
			}
			x, _ := benchkit.JGet(it, "sourceRouter", "name").(string)
			y, _ := benchkit.JGet(it, "destRouter", "name").(string)
			if x > y {
				x, y = y, x
			}
			got = append(got, x+"-"+y)
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("connected links %v", got)
		}
		return nil
	})
}

// setup makes the three routers (tunneler enabled, role attributes a, b,
// c), the client and host identities, the echo service and its policies
// (the client may use A only, the host C only, the service every router)
// through the Management API; it enrolls the identities and the routers,
// with the mesh's link listeners and dialers, and starts the A–C proxy.
func setup(a *benchkit.API, dir string, echoPort int) (*mesh, error) {
	mk := func(path string, body map[string]any) error { _, err := a.Create(path, body); return err }
	if err := mk("/configs", map[string]any{"name": "echo-host", "configTypeId": "NH5p4FpGR",
		"data": map[string]any{"protocol": "tcp", "address": "127.0.0.1", "port": echoPort}}); err != nil {
		return nil, err
	}
	cfgs, err := a.List("/configs?" + benchkit.Filter(`name="echo-host"`))
	if err != nil || len(cfgs) != 1 {
		return nil, fmt.Errorf("the echo-host config: %v (%d found)", err, len(cfgs))
	}
	cfgID, _ := benchkit.JGet(cfgs[0], "id").(string)
	for _, s := range []struct {
		path string
		body map[string]any
	}{
		{"/services", map[string]any{"name": "echo", "roleAttributes": []string{"echo"}, "configs": []string{cfgID}, "encryptionRequired": *encrypt}},
		{"/service-policies", map[string]any{"name": "dial", "type": "Dial", "semantic": "AnyOf", "identityRoles": []string{"#clients"}, "serviceRoles": []string{"#echo"}}},
		{"/service-policies", map[string]any{"name": "bind", "type": "Bind", "semantic": "AnyOf", "identityRoles": []string{"#hosts"}, "serviceRoles": []string{"#echo"}}},
		{"/edge-router-policies", map[string]any{"name": "clients-a", "semantic": "AnyOf", "identityRoles": []string{"#clients"}, "edgeRouterRoles": []string{"#a"}}},
		{"/edge-router-policies", map[string]any{"name": "hosts-c", "semantic": "AnyOf", "identityRoles": []string{"#hosts"}, "edgeRouterRoles": []string{"#c"}}},
		{"/service-edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "serviceRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}}},
	} {
		if err := mk(s.path, s.body); err != nil {
			return nil, err
		}
	}
	for name, attr := range map[string]string{"host": "hosts", "client": "clients"} {
		id, err := a.Create("/identities", map[string]any{"name": name, "type": "Device", "isAdmin": false,
			"roleAttributes": []string{attr}, "enrollment": map[string]any{"ott": true}})
		if err != nil {
			return nil, err
		}
		jwt, err := a.Field("/identities/"+id, "enrollment", "ott", "jwt")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".jwt"), []byte(jwt), 0o600); err != nil {
			return nil, err
		}
		if out, err := exec.Command(bins.Ziti, "edge", "enroll", filepath.Join(dir, name+".jwt"), "-o", filepath.Join(dir, name+".json")).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("enroll %s: %v: %s", name, err, out)
		}
	}

	// The links, as in integration/mesh_test.go: A listens for ab and dials
	// ac; B dials ab and bc; C listens for bc, and for ac behind the proxy.
	pa, pc1, pc2 := benchkit.Loopback(benchkit.MustFreePort()), benchkit.Loopback(benchkit.MustFreePort()), benchkit.Loopback(benchkit.MustFreePort())
	proxy, err := benchkit.NewTCPProxy(pc2)
	if err != nil {
		return nil, err
	}
	m := &mesh{acProxy: proxy}
	links := map[string]struct {
		ls   []benchkit.LinkListener
		dial []string
	}{
		"a": {[]benchkit.LinkListener{{Bind: pa, Advertise: pa, Groups: []string{"ab"}}}, []string{"ac"}},
		"b": {nil, []string{"ab", "bc"}},
		"c": {[]benchkit.LinkListener{{Bind: pc1, Advertise: pc1, Groups: []string{"bc"}},
			{Bind: pc2, Advertise: proxy.Addr(), Groups: []string{"ac"}}}, nil},
	}
	ctrl := strings.TrimPrefix(a.Base, "https://")
	for _, name := range []string{"a", "b", "c"} {
		id, err := a.Create("/edge-routers", map[string]any{"name": name, "isTunnelerEnabled": true, "roleAttributes": []string{name}})
		if err != nil {
			proxy.Close()
			return nil, err
		}
		rt := &router{name: name, id: id, dir: filepath.Join(dir, "router-"+name)}
		rt.config = filepath.Join(rt.dir, "config.yml")
		if err := enrollRouter(a, rt, ctrl, links[name].ls, links[name].dial); err != nil {
			proxy.Close()
			return nil, err
		}
		m.routers = append(m.routers, rt)
	}
	return m, nil
}

// enrollRouter writes rt's configuration and runs `ziti router enroll` with
// its enrollment JWT.
func enrollRouter(a *benchkit.API, rt *router, ctrl string, ls []benchkit.LinkListener, dial []string) error {
	if err := os.MkdirAll(rt.dir, 0o700); err != nil {
		return err
	}
	jwt, err := a.Field("/edge-routers/"+rt.id, "enrollmentJwt")
	if err != nil {
		return err
	}
	jwtFile := filepath.Join(rt.dir, "router.jwt")
	if err := os.WriteFile(jwtFile, []byte(jwt), 0o600); err != nil {
		return err
	}
	config := benchkit.ZitiMeshRouterConfig(rt.dir, ctrl, benchkit.Loopback(benchkit.MustFreePort()), ls, dial)
	if err := os.WriteFile(rt.config, []byte(config), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(bins.Ziti, "router", "enroll", rt.config, "--jwt", jwtFile)
	cmd.Dir = rt.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("router %s enroll: %v: %s", rt.name, err, out)
	}
	return nil
}
