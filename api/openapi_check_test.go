package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// The served OpenAPI documents, loaded and checked with kin-openapi, and a
// transport that checks every answer an in-process API test receives
// against them (newTestServer installs it). A test that gets an answer the
// document does not describe fails, so the document cannot drift from the
// code.

// specRouters are the two documents' routers, loaded once from the first
// test server (the documents of every test server are the same but for
// their server URL, which is replaced by specHost).
var (
	specOnce    sync.Once
	specErr     error
	specRouters map[string]routers.Router // by API prefix
	specDocs    map[string]*openapi3.T
)

const specHost = "http://spec.invalid"

// loadSpecs fetches and validates both documents through base.
func loadSpecs(client *http.Client, base string) error {
	specOnce.Do(func() {
		specRouters, specDocs = map[string]routers.Router{}, map[string]*openapi3.T{}
		for prefix, id := range map[string]string{"/edge/management/v1": "edge-management", "/edge/client/v1": "edge-client"} {
			resp, err := client.Get(base + prefix + "/specs/" + id + "/spec")
			if err != nil {
				specErr = err
				return
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var env struct {
				Data json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(raw, &env); err != nil {
				specErr = fmt.Errorf("%s spec: %v", id, err)
				return
			}
			doc, err := openapi3.NewLoader().LoadFromData(env.Data)
			if err != nil {
				specErr = fmt.Errorf("%s spec does not load: %v", id, err)
				return
			}
			if err := doc.Validate(context.Background()); err != nil {
				specErr = fmt.Errorf("%s spec is not a valid OpenAPI document: %v", id, err)
				return
			}
			doc.Servers = openapi3.Servers{{URL: specHost + prefix}}
			r, err := gorillamux.NewRouter(doc)
			if err != nil {
				specErr = fmt.Errorf("%s spec: router: %v", id, err)
				return
			}
			specRouters[prefix], specDocs[prefix] = r, doc
		}
	})
	return specErr
}

// specCheckingTransport checks each answer against the documents.
type specCheckingTransport struct {
	next http.RoundTripper
	base string
	mu   sync.Mutex
	errs []string
}

func (c *specCheckingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		reqBody, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := c.next.RoundTrip(req)
	if err != nil || strings.Contains(req.URL.Path, "/specs/") ||
		(req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != "") { // a CORS preflight is no operation
		return resp, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if msg := c.check(req, resp, body); msg != "" {
		c.mu.Lock()
		c.errs = append(c.errs, msg)
		c.mu.Unlock()
	}
	return resp, nil
}

// check validates one answer; "" when it matches the document (or the
// request is outside both APIs).
func (c *specCheckingTransport) check(req *http.Request, resp *http.Response, body []byte) string {
	if err := loadSpecs(&http.Client{Transport: c.next}, c.base); err != nil {
		return err.Error()
	}
	if p := req.URL.Path; strings.Contains(p, "//") || (len(p) > 1 && strings.HasSuffix(p, "/")) {
		// The server routes it cleaned of doubled and trailing slashes.
		for strings.Contains(p, "//") {
			p = strings.ReplaceAll(p, "//", "/")
		}
		u := *req.URL
		u.Path, u.RawPath = strings.TrimSuffix(p, "/"), ""
		req = req.Clone(req.Context())
		req.URL = &u
	}
	var prefix string
	for p := range specRouters {
		if strings.HasPrefix(req.URL.Path, p+"/") {
			prefix = p
		}
	}
	if prefix == "" {
		return ""
	}
	u := *req.URL
	u.Scheme, u.Host = "http", "spec.invalid"
	probe := req.Clone(context.Background())
	probe.URL, probe.Host = &u, u.Host
	route, params, err := specRouters[prefix].FindRoute(probe)
	if err != nil {
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
			return "" // no such operation: the router said so too
		}
		return fmt.Sprintf("%s %s answered %d but the document has no such operation: %v", req.Method, req.URL.Path, resp.StatusCode, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Sprintf("%s %s answered %d, which the document does not describe: %v\n%.400s", req.Method, req.URL.Path, resp.StatusCode, err, body)
	}
	return ""
}

// installSpecCheck makes ts's client check every answer; failures are
// reported when the test ends.
func installSpecCheck(t *testing.T, ts *testServer) {
	next := ts.client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c := &specCheckingTransport{next: next, base: ts.base}
	ts.client.Transport = c
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, e := range c.errs {
			if i == 5 {
				t.Errorf("... and %d more answers outside the OpenAPI document", len(c.errs)-5)
				break
			}
			t.Errorf("OpenAPI: %s", e)
		}
	})
}

// TestOpenAPI_DocumentsAreValid: both served documents load and validate
// with kin-openapi, and describe request and response schemas.
func TestOpenAPI_DocumentsAreValid(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	if err := loadSpecs(&http.Client{}, ts.base); err != nil {
		t.Fatal(err)
	}
	doc := specDocs["/edge/management/v1"]
	op := doc.Paths.Find("/identities").Post
	if op == nil || op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json").Schema.Value.Properties["name"] == nil {
		t.Fatal("POST /identities has no request schema with name")
	}
	if r := doc.Paths.Find("/identities/{id}").Get.Responses.Status(200); r == nil || r.Value.Content.Get("application/json") == nil {
		t.Fatal("GET /identities/{id} has no 200 schema")
	}
}
