package api_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// BenchmarkSessions_Create is the session phase of scalebench's Issue 5 at
// the size of its full model's routing: 500 edge routers, 100 service edge
// router and 250 edge router policies over 20 attributes, one identity that
// reaches its routers through #all edge router policies, 32 API sessions
// creating Dial sessions round robin over 20 services over HTTPS, in
// process. Each answer names the routers both sides allow (about a hundred).
//
//	go test ./api/ -run '^$' -bench Sessions_Create -benchtime 5000x -benchmem
func BenchmarkSessions_Create(b *testing.B) {
	bn := startBenchNode(b, nil)
	rng := rand.New(rand.NewPCG(7, 8))
	attr := func() string { return fmt.Sprintf("#a%02d", rng.IntN(20)) }
	for i := range 500 {
		bn.create(b, "/edge-routers", map[string]any{"name": fmt.Sprintf("er-%03d", i), "roleAttributes": []string{attr()[1:], attr()[1:]},
			"hostname": fmt.Sprintf("er%d.example", i), "supportedProtocols": map[string]string{"tls": fmt.Sprintf("tls:er%d.example:3022", i)}})
	}
	var services []string
	for i := range 20 {
		services = append(services, bn.create(b, "/services", map[string]any{"name": fmt.Sprintf("svc-%02d", i), "roleAttributes": []string{attr()[1:]}}))
	}
	for i := range 100 {
		bn.create(b, "/service-edge-router-policies", map[string]any{"name": fmt.Sprintf("serp-%03d", i), "semantic": "AnyOf",
			"serviceRoles": []string{attr()}, "edgeRouterRoles": []string{attr(), attr()}})
	}
	for i := range 250 {
		roles := []string{attr()}
		if i%50 == 0 {
			roles = []string{"#all"}
		}
		bn.create(b, "/edge-router-policies", map[string]any{"name": fmt.Sprintf("erp-%03d", i), "semantic": "AnyOf",
			"identityRoles": roles, "edgeRouterRoles": []string{attr(), attr()}})
	}
	id := bn.create(b, "/identities", map[string]any{"name": "bench-client", "type": "User", "isAdmin": false})
	bn.create(b, "/authenticators", map[string]any{"identityId": id, "method": "updb", "username": "bench-client", "password": "bench-password"})
	bn.create(b, "/service-policies", map[string]any{"name": "dial-all", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"@" + id}, "serviceRoles": []string{"#all"}})
	var tokens []string
	for range 32 {
		st, out := bn.post(b, bn.client, "/edge/client/v1/authenticate?method=password", "", nil,
			map[string]any{"username": "bench-client", "password": "bench-password"})
		if st != 200 {
			b.Fatalf("login: %d %v", st, out)
		}
		tokens = append(tokens, out["data"].(map[string]any)["token"].(string))
	}
	st, out := bn.post(b, bn.client, "/edge/client/v1/sessions", tokens[0], nil, map[string]any{"serviceId": services[0], "type": "Dial"})
	if st != 201 {
		b.Fatalf("session: %d %v", st, out)
	}
	b.Logf("a session names %d edge routers", len(out["data"].(map[string]any)["edgeRouters"].([]any)))
	var next atomic.Int64
	b.SetParallelism(16) // 32 clients on 2 CPUs
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		n := int(next.Add(1))
		tok := tokens[n%len(tokens)]
		for i := 0; pb.Next(); i++ {
			// Read the answer as a client that only needs its bytes would:
			// decoding it into maps would cost more than the node's work.
			body := `{"type":"Dial","serviceId":"` + services[(n+i)%len(services)] + `"}`
			req, _ := http.NewRequest(http.MethodPost, bn.base+"/edge/client/v1/sessions", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("zt-session", tok)
			resp, err := bn.client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Errorf("session: %d", resp.StatusCode)
				return
			}
		}
	})
}
