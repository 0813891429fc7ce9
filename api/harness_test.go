package api_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"edgectl/api"
	"edgectl/auth"
	"edgectl/cluster"
	"edgectl/controller"
	"edgectl/dataplane/fabricmgmt"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// testServer is a server with a logged-in admin: either the API in process
// over the store and the FSM (newTestServer: no TLS, no Raft) or a whole
// node (newNodeServer: TLS, Raft, the PKI's certificates), with the same
// helpers for both.
type testServer struct {
	t      *testing.T
	client *http.Client
	base   string
	token  string

	api      *api.Server
	store    *store.Store
	writer   *fsm.Writer
	node     *controller.Node // nil in process
	local    *localCluster    // the in-process proposer (nil on a real node)
	follower *laggingFollower // set by newFollowerServer
	now      func() time.Time
}

const testAdminPassword = "admin-password-1"

// testJWTKey stands in for an in-process server's API certificate key (an
// in-process server has no TLS): it signs enrollment JWTs.
var testJWTKey = func() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}()

// startNode starts a one-node controller on loopback ports (edit may adjust
// its configuration) and returns it with a pool that trusts its CA bundle.
func startNode(tb testing.TB, edit func(*controller.Config)) (*controller.Node, *x509.CertPool) {
	tb.Helper()
	dir := tb.TempDir()
	cfg := controller.Config{
		DataDir: dir, APIAddr: "127.0.0.1:0", ClusterAddr: "127.0.0.1:0",
		AdminPassword: testAdminPassword, MaintenanceInterval: time.Hour,
	}
	if edit != nil {
		edit(&cfg)
	}
	n, err := controller.Start(context.Background(), cfg, nil, io.Discard)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = n.Shutdown(sctx)
	})
	bundle, err := os.ReadFile(filepath.Join(dir, "pki", "ca-bundle.pem"))
	if err != nil {
		tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(bundle)
	return n, pool
}

// newNodeServer starts a one-node controller and logs the admin in: for the
// tests of TLS, client certificates, enrollment and the cluster.
func newNodeServer(t *testing.T) *testServer { return newNodeServerWith(t, nil) }

// newNodeServerWith is newNodeServer with an adjusted configuration.
func newNodeServerWith(t *testing.T, edit func(*controller.Config)) *testServer {
	t.Helper()
	n, pool := startNode(t, edit)
	ts := &testServer{t: t, node: n, base: n.APIURL(), api: n.API, store: n.Store, writer: n.Writer,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
	ts.token = ts.login("admin", testAdminPassword)
	return ts
}

// newTestServer serves the API in process over a fresh model with the
// bootstrap records, and logs the admin in.
func newTestServer(t *testing.T) *testServer { return newTestServerWith(t, nil) }

// newTestServerWith is newTestServer with an adjusted configuration; of the
// controller settings, the API's own are used (clock, session timeout,
// JWKS roots, admin password).
func newTestServerWith(t *testing.T, edit func(*controller.Config)) *testServer {
	t.Helper()
	return newTestServerOf(t, edit, nil)
}

// newTestServerOf is newTestServerWith whose API sees routers as this
// node's routers.
func newTestServerOf(t *testing.T, edit func(*controller.Config), routers api.DataPlane) *testServer {
	t.Helper()
	cfg := controller.Config{AdminUsername: "admin", AdminPassword: testAdminPassword}
	if edit != nil {
		edit(&cfg)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	st := store.New()
	local := &localCluster{id: "local", fsm: fsm.New(st)}
	w := fsm.NewWriter(local, now)
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	a := api.New(api.Deps{Store: st, Writer: w, Cluster: local, Hasher: auth.NewHasher(auth.DefaultParams),
		Activity: auth.NewActivity(), Peers: local, Now: now, DataPlane: routers},
		api.Config{AdvertiseURL: base, SessionTimeout: cfg.SessionTimeout, BackupDir: t.TempDir(), JWKSRootCAs: cfg.JWKSRootCAs,
			JWTKey: testJWTKey, CORSOrigins: cfg.CORSOrigins})
	srv.Config.Handler = a.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	local.addr = srv.Listener.Addr().String()

	pkiState, err := pki.NewState(now().UTC(), "edgectl")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(pkiState)
	b, _, err := controller.BootstrapRecords(context.Background(), cfg.AdminUsername, cfg.AdminPassword, raw, now().UTC())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Do(context.Background(), fsm.CmdBootstrap, b); err != nil {
		t.Fatal(err)
	}
	// What a node's leader adds right after the bootstrap.
	if _, err := w.Do(context.Background(), fsm.CmdBuiltinsEnsure, controller.BuiltinRecords(now().UTC())); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Do(context.Background(), fsm.CmdEventsEnable, controller.DefaultEventRetention()); err != nil {
		t.Fatal(err)
	}
	keys, err := controller.NewDataPlaneKeys(now().UTC())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Do(context.Background(), fsm.CmdDataPlaneKeysEnsure, keys); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, base: base, api: a, store: st, writer: w, client: &http.Client{Timeout: 30 * time.Second},
		local: local, now: now}
	installSpecCheck(t, ts)
	ts.token = ts.login(cfg.AdminUsername, cfg.AdminPassword)
	return ts
}

// newFollowerServer serves a second in-process node of leader's "cluster"
// that applies the leader's log only when it must: on its own writes
// (read-your-writes), and when a read-index round makes it catch up. Until
// then it is behind, as a real follower can be. It starts caught up, with
// the leader's admin session; cfg adjusts its API configuration.
func newFollowerServer(t *testing.T, leader *testServer, cfg api.Config) *testServer {
	t.Helper()
	st := store.New()
	f := &laggingFollower{localCluster: leader.local, fsm: fsm.New(st)}
	f.catchUp()
	w := fsm.NewWriter(f, leader.now)
	srv := httptest.NewUnstartedServer(nil)
	cfg.AdvertiseURL = "http://" + srv.Listener.Addr().String()
	cfg.BackupDir = t.TempDir()
	a := api.New(api.Deps{Store: st, Writer: w, Cluster: f, Hasher: auth.NewHasher(auth.DefaultParams),
		Activity: auth.NewActivity(), Peers: f, Now: leader.now}, cfg)
	srv.Config.Handler = a.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return &testServer{t: t, base: cfg.AdvertiseURL, api: a, store: st, writer: w, client: &http.Client{Timeout: 30 * time.Second},
		token: leader.token, now: leader.now, follower: f}
}

// laggingFollower is the proposer and cluster of newFollowerServer.
type laggingFollower struct {
	*localCluster // the leader: membership, stats
	fsm           *fsm.FSM
	mu            sync.Mutex
	applied       uint64
	readIndexes   atomic.Int64
}

// catchUp applies the leader's entries this node has not applied yet.
func (f *laggingFollower) catchUp() {
	f.localCluster.mu.Lock()
	log := f.localCluster.log
	f.localCluster.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range log[f.applied:] {
		f.fsm.Apply(l)
		f.applied = l.Index
	}
}

func (f *laggingFollower) Apply(ctx context.Context, cmd []byte) ([]byte, uint64, error) {
	resp, idx, err := f.localCluster.Apply(ctx, cmd)
	f.catchUp()
	return resp, idx, err
}

func (f *laggingFollower) ReadIndex(context.Context) (uint64, error) {
	f.readIndexes.Add(1)
	idx := f.localCluster.AppliedIndex()
	f.catchUp()
	return idx, nil
}

// CaughtUp applies what the leader applied: a follower that knows the
// commit index but had not applied up to it when a request came.
func (f *laggingFollower) CaughtUp(context.Context) (uint64, uint64, bool) {
	f.catchUp()
	i := f.AppliedIndex()
	return i, i, true
}

func (f *laggingFollower) AppliedIndex() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied
}

// nodeTransport is the HTTPS transport of a whole node's client, for tests
// that present client certificates; an in-process server has none.
func (ts *testServer) nodeTransport() *http.Transport {
	ts.t.Helper()
	if ts.node == nil {
		ts.t.Fatal("this test presents client certificates: start it with newNodeServer")
	}
	return ts.client.Transport.(*http.Transport)
}

// localCluster is the harness's one-member "cluster": it applies each
// command to the FSM at once, one at a time and in order as Raft would.
// It implements fsm.Proposer, api.Cluster and api.Peers; the membership
// and snapshot operations are for real nodes (newNodeServer).
type localCluster struct {
	id, addr string
	fsm      *fsm.FSM
	mu       sync.Mutex
	index    uint64
	log      []*raft.Log // every entry applied, for laggingFollower
	// others are members listed after this one (none unless a test adds them).
	others []cluster.Member
	// addVoter, when set, is asked by AddVoter, which then lists the member.
	addVoter func(id, addr string) error
}

func (l *localCluster) Apply(_ context.Context, cmd []byte) ([]byte, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.index++
	entry := &raft.Log{Index: l.index, Term: 1, Type: raft.LogCommand, Data: cmd, AppendedAt: time.Now()}
	l.log = append(l.log, entry)
	resp, err := cluster.FSMResult(l.fsm.Apply(entry))
	return resp, l.index, err
}

var errNotACluster = errors.New("the in-process harness has no cluster: use newNodeServer")

func (l *localCluster) Barrier(context.Context) error { return nil }
func (l *localCluster) ReadIndex(context.Context) (uint64, error) {
	return l.AppliedIndex(), nil
}
func (l *localCluster) CaughtUp(context.Context) (uint64, uint64, bool) {
	i := l.AppliedIndex()
	return i, i, true
}
func (l *localCluster) CommitTarget() uint64 { return l.AppliedIndex() }
func (l *localCluster) AppliedIndex() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.index
}
func (l *localCluster) Members() ([]cluster.Member, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]cluster.Member{{ID: l.id, Address: l.addr, IsVoter: true, IsLeader: true}}, l.others...), nil
}
func (l *localCluster) Stats() cluster.Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return cluster.Stats{State: "Leader", Term: 1, LastLogIndex: l.index, CommitIndex: l.index, AppliedIndex: l.index,
		LeaderID: l.id, LeaderAddr: l.addr}
}
func (l *localCluster) ID() string                                        { return l.id }
func (l *localCluster) Leader() (string, string)                          { return l.id, l.addr }
func (l *localCluster) AddNonvoter(context.Context, string, string) error { return errNotACluster }
func (l *localCluster) RemoveServer(context.Context, string) error        { return errNotACluster }
func (l *localCluster) TransferLeadership(context.Context, string) error  { return errNotACluster }
func (l *localCluster) Snapshot(context.Context) (cluster.SnapshotInfo, error) {
	return cluster.SnapshotInfo{}, errNotACluster
}
func (l *localCluster) OpenSnapshot(string) (io.ReadCloser, *raft.SnapshotMeta, error) {
	return nil, nil, errNotACluster
}

// AddVoter asks addVoter (none: the harness has no cluster) and then lists the member.
func (l *localCluster) AddVoter(_ context.Context, id, addr string) error {
	l.mu.Lock()
	add := l.addVoter
	l.mu.Unlock()
	if add == nil {
		return errNotACluster
	}
	if err := add(id, addr); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.others = append(l.others, cluster.Member{ID: id, Address: addr, IsVoter: true})
	return nil
}
func (l *localCluster) PeerStatus(string) (bool, uint64, bool) { return false, 0, false }

// InspectPeers: there are no other members.
func (l *localCluster) InspectPeers(context.Context, *regexp.Regexp, []string) ([]fabricmgmt.InspectValue, []string) {
	return nil, nil
}

// login authenticates with a password on the Management API and returns the token.
func (ts *testServer) login(user, pass string) string {
	ts.t.Helper()
	st, body := ts.doAs("", http.MethodPost, "/edge/management/v1/authenticate?method=password", map[string]any{"username": user, "password": pass})
	if st != http.StatusOK {
		ts.t.Fatalf("login %s: %d %v", user, st, body)
	}
	return body["data"].(map[string]any)["token"].(string)
}

// do sends a request as the admin. body may be nil, a string (sent raw) or any JSON value.
func (ts *testServer) do(method, path string, body any) (int, map[string]any) {
	ts.t.Helper()
	return ts.doAs(ts.token, method, path, body)
}

// doAs sends a request with token (none when "").
func (ts *testServer) doAs(token, method, path string, body any) (int, map[string]any) {
	ts.t.Helper()
	st, out, _ := ts.send(req{method: method, path: path, token: token, body: body})
	return st, out
}

// badCreate is a create the API must refuse with 400 naming field: a string
// body is sent as is and must be COULD_NOT_PARSE_BODY, any other body
// COULD_NOT_VALIDATE.
type badCreate struct {
	name  string
	body  any
	field string
}

// refusesCreates posts each case to the Management collection, one subtest
// a case, and fails unless the collection holds as many records after as
// before.
func (ts *testServer) refusesCreates(t *testing.T, collection string, cases []badCreate) {
	t.Helper()
	_, before := ts.list(collection)
	for _, c := range cases {
		st, out := ts.do(http.MethodPost, mgmt(collection), c.body)
		code := "COULD_NOT_VALIDATE"
		if _, raw := c.body.(string); raw {
			code = "COULD_NOT_PARSE_BODY"
		}
		t.Run(c.name, func(t *testing.T) { wantError(t, st, out, http.StatusBadRequest, code, c.field) })
	}
	if _, after := ts.list(collection); after != before {
		t.Fatalf("%s: %d after bad creates, want %d", collection, after, before)
	}
}

// mgmt is the Management API path of p.
func mgmt(p string) string { return "/edge/management/v1" + p }

// mustDelete deletes the Management API record at path and fails the test
// unless the answer is 200.
func (ts *testServer) mustDelete(path string) {
	ts.t.Helper()
	if st, out := ts.do(http.MethodDelete, mgmt(path), nil); st != 200 {
		ts.t.Fatalf("delete %s: %d %v", path, st, out)
	}
}

// create posts body to a Management collection, expects 201 and returns the id.
func (ts *testServer) create(collection string, body any) string {
	ts.t.Helper()
	st, out := ts.do(http.MethodPost, mgmt(collection), body)
	if st != http.StatusCreated {
		ts.t.Fatalf("create %s: %d %v", collection, st, out)
	}
	return out["data"].(map[string]any)["id"].(string)
}

// get fetches a Management record and returns its data.
func (ts *testServer) get(path string) map[string]any {
	ts.t.Helper()
	st, out := ts.do(http.MethodGet, mgmt(path), nil)
	if st != http.StatusOK {
		ts.t.Fatalf("get %s: %d %v", path, st, out)
	}
	return out["data"].(map[string]any)
}

// list fetches a Management list and returns its data and total count.
func (ts *testServer) list(path string) ([]any, int) {
	ts.t.Helper()
	st, out := ts.do(http.MethodGet, mgmt(path), nil)
	if st != http.StatusOK {
		ts.t.Fatalf("list %s: %d %v", path, st, out)
	}
	total := int(out["meta"].(map[string]any)["pagination"].(map[string]any)["totalCount"].(float64))
	return out["data"].([]any), total
}

// fails sends method path body as the admin (ts.do) and wants the error
// answer status with code and, when field is set, cause.field (wantError).
func (ts *testServer) fails(method, path string, body any, status int, code, field string) {
	ts.t.Helper()
	st, out := ts.do(method, path, body)
	wantError(ts.t, st, out, status, code, field)
}

// wantError checks the status and error code of a response and, when field is set, cause.field.
func wantError(t *testing.T, st int, out map[string]any, status int, code, field string) {
	t.Helper()
	if st != status {
		t.Fatalf("status %d, want %d: %v", st, status, out)
	}
	e, _ := out["error"].(map[string]any)
	if e == nil || e["code"] != code {
		t.Fatalf("error code %v, want %s: %v", e["code"], code, out)
	}
	if field != "" {
		c, _ := e["cause"].(map[string]any)
		if c == nil || c["field"] != field {
			t.Fatalf("cause %v, want field %s", e["cause"], field)
		}
	}
}
