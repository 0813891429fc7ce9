package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"

	"edgectl/bench/benchkit"
)

// The model the fleet's SDK clients use, made through the Management API
// the same way on either controller: S services (host i binds service
// i mod S, as a tunneler hosts its own); a Bind policy for the hosting
// identities and a Dial policy for the dialing one; an edge router
// policy and a service edge router policy giving them the fleet's routers.
// Each identity gets a password authenticator, logs in through the Client
// API (its API session) and asks for a service session (Bind or Dial):
// those two tokens are what a router passes on for its clients.

// ClientAPI is the Client API's path.
const ClientAPI = "/edge/client/v1"

// Host is one identity of an SDK client: its API session token and its
// service session tokens: a host's Bind session of its service, the
// dialer's Dial session of each service.
type Host struct {
	Name, ID     string
	APISession   string
	BindSession  string
	DialSessions []string
}

// publicKey is the host's key exchange public key as its SDK would send
// it (32 bytes; only its presence is checked by a controller).
func (h *Host) publicKey() []byte {
	k := make([]byte, 32)
	copy(k, h.ID)
	return k
}

// Model is what Setup made.
type Model struct {
	ServiceIDs []string
	Hosts      []*Host
	Dialer     *Host
}

// password is every fleet identity's password.
const password = "Fleet-pass-1!"

// Setup makes the model (names start with prefix; the routers carry the
// role attribute prefix+"router") with services services, hosts hosting
// identities and one dialing identity, each with its sessions.
func Setup(ctx context.Context, api *benchkit.API, prefix string, hosts, services int) (*Model, error) {
	if services < 1 || services > hosts {
		return nil, fmt.Errorf("fleet: %d services for %d hosts: from one to one per host", services, hosts)
	}
	m := &Model{ServiceIDs: make([]string, services)}
	err := parallel(services, 8, func(i int) error {
		var err error
		m.ServiceIDs[i], err = api.Create("/services", map[string]any{"name": fmt.Sprintf("%ssvc-%d", prefix, i),
			"encryptionRequired": true, "roleAttributes": []string{prefix + "svc"}})
		return err
	})
	if err != nil {
		return nil, err
	}
	svc := "#" + prefix + "svc"
	for _, p := range []struct {
		path string
		body map[string]any
	}{
		{"/service-policies", map[string]any{"name": prefix + "bind", "type": "Bind", "semantic": "AnyOf",
			"serviceRoles": []string{svc}, "identityRoles": []string{"#" + prefix + "host"}}},
		{"/service-policies", map[string]any{"name": prefix + "dial", "type": "Dial", "semantic": "AnyOf",
			"serviceRoles": []string{svc}, "identityRoles": []string{"#" + prefix + "dial"}}},
		{"/edge-router-policies", map[string]any{"name": prefix + "erp", "semantic": "AnyOf",
			"edgeRouterRoles": []string{"#" + prefix + "router"}, "identityRoles": []string{"#" + prefix + "host", "#" + prefix + "dial"}}},
		{"/service-edge-router-policies", map[string]any{"name": prefix + "serp", "semantic": "AnyOf",
			"edgeRouterRoles": []string{"#" + prefix + "router"}, "serviceRoles": []string{svc}}},
	} {
		if _, err := api.Create(p.path, p.body); err != nil {
			return nil, err
		}
	}
	m.Hosts = make([]*Host, hosts)
	err = parallel(hosts, 8, func(i int) error {
		h, err := newIdentity(ctx, api, fmt.Sprintf("%shost-%d", prefix, i), prefix+"host")
		if err == nil {
			h.BindSession, err = newSession(ctx, api, h.APISession, m.ServiceIDs[i%services], "Bind")
		}
		m.Hosts[i] = h
		return err
	})
	if err != nil {
		return nil, err
	}
	if m.Dialer, err = newIdentity(ctx, api, prefix+"dialer", prefix+"dial"); err != nil {
		return nil, err
	}
	m.Dialer.DialSessions = make([]string, services)
	err = parallel(services, 8, func(i int) error {
		var err error
		m.Dialer.DialSessions[i], err = newSession(ctx, api, m.Dialer.APISession, m.ServiceIDs[i], "Dial")
		return err
	})
	return m, err
}

// newIdentity makes identity name with role attribute attr, gives it a
// password and logs it in.
func newIdentity(ctx context.Context, api *benchkit.API, name, attr string) (*Host, error) {
	h := &Host{Name: name}
	var err error
	if h.ID, err = api.Create("/identities", map[string]any{"name": name, "type": "User", "isAdmin": false, "roleAttributes": []string{attr}}); err != nil {
		return nil, err
	}
	if _, err = api.Create("/authenticators", map[string]any{"method": "updb", "identityId": h.ID, "username": name, "password": password}); err != nil {
		return nil, err
	}
	if h.APISession, err = benchkit.Login(ctx, clientRequester(api), ClientAPI, name, password); err != nil {
		return nil, err
	}
	return h, nil
}

// newSession asks the Client API for a service session of type.
func newSession(ctx context.Context, api *benchkit.API, apiSession, svc, typ string) (string, error) {
	raw, _ := json.Marshal(map[string]string{"serviceId": svc, "type": typ})
	st, data, err := clientRequester(api)(ctx, http.MethodPost, ClientAPI+"/sessions", apiSession, raw)
	if err != nil {
		return "", err
	}
	tok := benchkit.TokenOf(data)
	if st != http.StatusCreated && st != http.StatusOK || tok == "" {
		return "", fmt.Errorf("%s session: %d %.300s", typ, st, data)
	}
	return tok, nil
}

// clientRequester sends Client API requests through api's HTTP client,
// the API session in the zt-session header.
func clientRequester(api *benchkit.API) benchkit.Requester {
	return func(ctx context.Context, method, path, token string, body []byte) (int, []byte, error) {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, api.Base+path, rd)
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("zt-session", token)
		}
		resp, err := api.C.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return resp.StatusCode, data, err
	}
}

// parallel runs fn(0..n-1) on at most workers goroutines and returns the
// first error.
func parallel(n, workers int, fn func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range min(workers, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
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
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}
