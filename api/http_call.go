package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"edgectl/fsm"
	"edgectl/store"

	"github.com/julienschmidt/httprouter"
)

// apiKind tells which API a route belongs to.
type apiKind int

const (
	clientAPI apiKind = 1 << iota
	managementAPI
	fabricAPI
	bothAPIs = clientAPI | managementAPI
)

// prefix is the path the routes of one API are served below.
func (a apiKind) prefix() string {
	switch a {
	case managementAPI:
		return ManagementPrefix
	case fabricAPI:
		return FabricPrefix
	}
	return ClientPrefix
}

// access is what a route requires of the caller.
type access int

const (
	public  access = iota // no session
	partial               // any API session, even one with pending secondary factors
	full                  // a fully authenticated API session
	admin                 // a fully authenticated admin
)

// route is one operation: where it is, who may call it, and its handler.
type route struct {
	api    apiKind
	method string
	path   string
	op     string
	tag    string
	access access
	h      func(c *call) error
}

// call is one request being served.
type call struct {
	s        *Server
	w        http.ResponseWriter
	r        *http.Request
	ps       httprouter.Params
	api      apiKind
	reqID    string
	tx       *store.Tx
	txIndex  uint64 // tx holds at least the commands up to this index
	caughtUp bool   // catchUp ran
	session  *store.APISession
	identity *store.Identity
	wrote    bool
}

func newRequestID() string {
	b := make([]byte, 9)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Server) add(rt route) {
	for _, a := range []apiKind{clientAPI, managementAPI, fabricAPI} {
		if rt.api&a == 0 {
			continue
		}
		prefix := a.prefix()
		rt, a := rt, a
		s.routes = append(s.routes, route{api: a, method: rt.method, path: rt.path, op: rt.op, tag: rt.tag, access: rt.access, h: rt.h})
		handle := func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
			start := time.Now()
			sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
			defer func() { s.metrics.observe(a, rt.op, sw.code, time.Since(start)) }()
			w = sw
			c := &call{s: s, w: w, r: r, ps: ps, api: a, reqID: newRequestID()}
			w.Header().Set("X-Request-Id", c.reqID)
			c.snapshot()
			if rt.method == http.MethodGet {
				// Checked before authentication, so that the session
				// lookup itself sees the caught-up state.
				consistency, err := s.readConsistency(r)
				if err == nil && consistency == ConsistencyLinearizable {
					_, err = c.catchUp()
				}
				if err != nil {
					s.writeError(w, r, c.reqID, err)
					return
				}
			}
			if err := s.authenticateCall(c, rt.access); err != nil {
				s.writeError(w, r, c.reqID, err)
				return
			}
			var body *replayBody
			var proposed *atomic.Bool
			if rt.method != http.MethodGet {
				body = &replayBody{src: r.Body}
				r.Body = body
				var ctx context.Context
				ctx, proposed = fsm.WatchProposals(fsm.WithActor(r.Context(), s.actorOf(c)))
				c.r = r.WithContext(ctx)
			}
			err := rt.h(c)
			if err != nil && body != nil && !c.wrote && !proposed.Load() && toAPIError(err).status == http.StatusNotFound && c.rejudge() {
				// A write about a record made through another node a
				// moment ago: judged again on the caught-up view.
				c.r.Body = body.replay()
				err = rt.h(c)
			}
			if err != nil {
				s.writeError(w, r, c.reqID, err)
				return
			}
			if !c.wrote {
				c.empty()
			}
		}
		s.router.Handle(rt.method, prefix+rt.path, handle)
		if a == managementAPI && rootPaths[rt.path] {
			s.router.Handle(rt.method, rt.path, handle)
		}
		if rt.path == "/" {
			// The API root answers with or without its trailing slash.
			s.router.Handle(rt.method, prefix, handle)
		}
	}
}

// actorOf is who makes the call, for the events of its commands.
func (s *Server) actorOf(c *call) store.EventActor {
	a := store.EventActor{SourceAddress: clientIP(c.r)}
	if s.Cluster != nil {
		a.NodeID = s.Cluster.ID()
	}
	if c.session != nil {
		a.APISessionID = c.session.ID
	}
	if c.identity != nil {
		a.IdentityID, a.IdentityName = c.identity.ID, c.identity.Name
	}
	return a
}

// rootPaths are the operations also served at the root of the API port,
// where OpenZiti's clients look for them: the CLI's login fetches the CA
// certificates there, and older clients probe the version.
var rootPaths = map[string]bool{"/version": true, "/.well-known/est/cacerts": true}

// statusWriter remembers the status code for the metrics.
type statusWriter struct {
	http.ResponseWriter
	code int
}

// Unwrap lets http.ResponseController reach the connection (the event
// stream flushes and sets write deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// param returns a path parameter.
func (c *call) param(name string) string { return c.ps.ByName(name) }

// meta is the envelope's meta object.
func meta(extra map[string]any) map[string]any {
	m := map[string]any{"apiVersion": apiVersion, "apiEnrollmentVersion": apiEnrollmentVersion}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// Versions carried by every envelope's meta.
const (
	apiVersion           = "0.0.1"
	apiEnrollmentVersion = "0.0.1"
)

func (c *call) write(status int, body any) {
	c.wrote = true
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(status)
	enc := json.NewEncoder(c.w)
	_ = enc.Encode(body)
}

// ok answers 200 with data.
func (c *call) ok(data any) { c.write(http.StatusOK, map[string]any{"data": data, "meta": meta(nil)}) }

// okMeta answers 200 with data and extra meta fields.
func (c *call) okMeta(data any, extra map[string]any) {
	c.write(http.StatusOK, map[string]any{"data": data, "meta": meta(extra)})
}

// empty answers 200 with an empty data object (update, patch, delete).
func (c *call) empty() { c.ok(map[string]any{}) }

// created answers 201 with the id and links of a new record.
// It writes the bytes json.Encoder writes for the envelope {"data": {"id",
// "_links": selfLinks}, "meta": meta(nil)} (keys in order, HTML escaped, a
// final newline) without building the maps: it answers every create
// (http_call_test.go compares the two).
func (c *call) created(path, id string) {
	buf := getJSONBuf()
	defer putJSONBuf(buf)
	b := append((*buf)[:0], `{"data":{"_links":{"self":{"href":`...)
	b = appendJSONString(b, "./"+path+"/"+id)
	b = append(b, `}},"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `},"meta":{"apiEnrollmentVersion":"`+apiEnrollmentVersion+`","apiVersion":"`+apiVersion+`"}}`+"\n"...)
	*buf = b
	c.writeJSONBytes(http.StatusCreated, b)
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, reqID string, err error) {
	ae := toAPIError(err)
	if ae.status >= 500 {
		s.Log.Error("request failed", "method", r.Method, "path", r.URL.Path, "requestId", reqID, "error", err)
	}
	writeAPIError(w, r, reqID, ae)
}

// writeAPIError writes ae in the error envelope.
func writeAPIError(w http.ResponseWriter, r *http.Request, reqID string, ae *apiError) {
	body := map[string]any{"code": ae.code, "message": ae.message, "requestId": reqID}
	if ae.cause != nil {
		body["cause"] = ae.cause
	}
	w.Header().Set("Content-Type", "application/json")
	if ae.status == http.StatusUnauthorized && strings.HasPrefix(r.URL.Path, ManagementPrefix) {
		w.Header().Set("WWW-Authenticate", "svc-session")
	}
	w.WriteHeader(ae.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": body, "meta": meta(nil)})
}

// selfLinks is the _links object of a record.
func selfLinks(path, id string) map[string]any {
	return map[string]any{"self": map[string]string{"href": "./" + path + "/" + id}}
}

// replayBody keeps what a handler read of the request body, so that the
// handler can run a second time on the same body (see rejudge).
type replayBody struct {
	src io.ReadCloser
	buf bytes.Buffer
}

func (b *replayBody) Read(p []byte) (int, error) {
	n, err := b.src.Read(p)
	b.buf.Write(p[:n])
	return n, err
}

func (b *replayBody) Close() error { return b.src.Close() }

// replay is the body from its start again: what was read, then the rest.
func (b *replayBody) replay() io.ReadCloser {
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b.buf.Bytes()), b.src), b.src}
}
