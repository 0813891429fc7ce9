package api

import (
	"context"
	"crypto"
	"crypto/x509"
	"edgectl/dataplane/dpevent"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"edgectl/auth"
	"edgectl/cluster"
	"edgectl/console"
	"edgectl/dataplane"
	"edgectl/dataplane/fabricmgmt"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/julienschmidt/httprouter"
)

// Path prefixes of the two APIs.
const (
	ClientPrefix     = "/edge/client/v1"
	ManagementPrefix = "/edge/management/v1"
	// FabricPrefix is the subset of OpenZiti's Fabric Management API that
	// its tools use (api/fabric.go).
	FabricPrefix = "/fabric/v1"
)

// Cluster is what the API needs of the Raft node.
type Cluster interface {
	Barrier(ctx context.Context) error
	// ReadIndex waits until this node has applied everything committed when
	// it was called, proven by a quorum round; it returns that index.
	ReadIndex(ctx context.Context) (uint64, error)
	// AppliedIndex is the index of the last command this node applied.
	AppliedIndex() uint64
	// CaughtUp waits (until ctx ends) for this node to apply the commit
	// index it knows of, and reports whether it did.
	CaughtUp(ctx context.Context) (applied, target uint64, ok bool)
	// CommitTarget is the index this node has to apply to be current.
	CommitTarget() uint64
	Members() ([]cluster.Member, error)
	Stats() cluster.Stats
	ID() string
	Leader() (id, addr string)
	AddVoter(ctx context.Context, id, addr string) error
	AddNonvoter(ctx context.Context, id, addr string) error
	RemoveServer(ctx context.Context, id string) error
	TransferLeadership(ctx context.Context, toID string) error
	Snapshot(ctx context.Context) (cluster.SnapshotInfo, error)
	OpenSnapshot(id string) (io.ReadCloser, *raft.SnapshotMeta, error)
}

// Config holds the settings of the API.
type Config struct {
	// AdvertiseURL is the https://host:port clients use for this node.
	AdvertiseURL string
	// SessionTimeout ends an API session after this long without activity.
	SessionTimeout time.Duration
	// BackupDir keeps the snapshots taken for download.
	BackupDir string
	// Version, Revision and BuildDate describe the build.
	Version, Revision, BuildDate string
	// CORSOrigins are the origins (scheme://host[:port]) whose pages may
	// call the APIs from a browser (api/cors.go); none by default.
	CORSOrigins []string
	// JWKSRootCAs are the CAs trusted when fetching external JWT signers' key sets; nil = the system pool.
	JWKSRootCAs *x509.CertPool
	// JWTKey is the private key of this node's API server certificate: it
	// signs enrollment JWTs (see signEnrollmentJWT).
	JWTKey crypto.Signer
	// ReadConsistency is the consistency of a GET without ?consistency=:
	// ConsistencyLocal (the default) or ConsistencyLinearizable.
	ReadConsistency string
	// ListenAddrs are this node's listeners besides its API and cluster
	// addresses (which the controller records hold): webhooks may not
	// target any of them.
	ListenAddrs []string
}

// Deps are the parts of the controller the API uses.
type Deps struct {
	Store   *store.Store
	Writer  *fsm.Writer
	Cluster Cluster
	Hasher  *auth.Hasher
	Log     hclog.Logger
	Now     func() time.Time
	// Activity keeps per-node API session activity, flushed through Raft in batches.
	Activity *auth.Activity
	// Peers tells what this node knows of the other members.
	Peers Peers
	// DataPlane is this node's data plane: the routers connected to it,
	// their circuits and links (nil: no router can connect).
	DataPlane DataPlane
	// DataPlaneEvents are this node's data-plane events (nil: none kept).
	DataPlaneEvents *dpevent.Log
}

// DataPlane is what the API asks of this node's data plane: the routers
// connected to it, their circuits and links, the management channel's
// validations and inspections.
type DataPlane interface {
	Status(id string) dataplane.Status
	Connected() []string
	ValidateDataModel(ctx context.Context, id string) (*fabricmgmt.DataModelReport, error)
	Circuits() []*dataplane.Circuit
	// CircuitBytes are the bytes the routers reported of a circuit of
	// this node: what its client sent (in) and its host sent back (out).
	CircuitBytes(id string) (in, out uint64)
	EndCircuit(id string) error
	Links() []dataplane.Link
	LinkUsable(l dataplane.Link) bool
	// ChangeLinkEverywhere changes a link on this node
	// (dataplane.ErrNoLink when it has no such link) and on the other
	// members; it returns what each member did, by node id ("changed", or
	// why not).
	ChangeLinkEverywhere(ctx context.Context, id string, c dataplane.LinkChange) (map[string]string, error)
	// RemoveLink forgets a link and has its routers close it (every
	// connected router, for a link this node does not have).
	RemoveLink(id string)
	// The validations of the management channel (api/wsapi.go).
	ValidateTerminators(filter string, fix bool) (*fabricmgmt.Validation[wire.TerminatorDetail], error)
	ValidateRouterLinks(filter string) (*fabricmgmt.Validation[wire.RouterLinkDetails], error)
	ValidateRouterSdkTerminators(filter string) (*fabricmgmt.Validation[wire.RouterSdkTerminatorsDetails], error)
	ValidateRouterDataModels(filter string, ctrl, fix bool) (*fabricmgmt.Validation[wire.RouterDataModelDetails], error)
	// InspectRouters asks the matching routers for inspection values
	// (api/inspect.go); ConnectedRouters is the node's "connected-routers".
	InspectRouters(ctx context.Context, match *regexp.Regexp, values []string) ([]fabricmgmt.InspectValue, []string)
	ConnectedRouters() string
}

// Peers reports the last known state of a cluster member, and asks the
// members for their own inspection values (api/inspect.go).
type Peers interface {
	PeerStatus(id string) (online bool, applied uint64, known bool)
	// InspectPeers asks each other member whose id match matches for its
	// own values of names (Server.InspectLocal there); errors are "id: error".
	InspectPeers(ctx context.Context, match *regexp.Regexp, names []string) ([]fabricmgmt.InspectValue, []string)
}

// Server is the HTTP side of one node.
type Server struct {
	Deps
	cfg    Config
	router *httprouter.Router
	routes []route

	// resources is the resource table (api/resources.go).
	resources []resource

	integrity integrityRun
	metrics   *metrics
	// streams counts the open event streams; streamsDropped those closed
	// because the client read too slowly.
	streams, streamsDropped atomic.Int64
	// health is the last hour's health samples (SampleHealth).
	health healthRing
	// mgmt are the open management channels (api/wsapi.go).
	mgmt mgmtChannels

	pkiMu    sync.Mutex
	pkiCache *pki.Authority
	// signer is the service session signing key of the data-plane keys
	// whose PEM is signerPEM (sessionSigner).
	signer    crypto.Signer
	signerPEM string
	pkiSource []byte

	jwtKid string          // the key id of cfg.JWTKey
	jwtJWK json.RawMessage // its public JWK

	authnSt authnState // per-node authentication state: throttle, JWKS cache, sealing key (api/authnstate.go)
}

// New builds the server and its routes.
func New(d Deps, cfg Config) *Server {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = hclog.NewNullLogger()
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = 30 * time.Minute
	}
	if cfg.ReadConsistency == "" {
		cfg.ReadConsistency = ConsistencyLocal
	}
	var jwtKid string
	var jwtJWK json.RawMessage
	if cfg.JWTKey != nil {
		var err error
		if jwtKid, err = pki.KeyID(cfg.JWTKey.Public()); err == nil {
			jwtJWK, err = pki.PublicJWK(cfg.JWTKey.Public(), jwtKid)
		}
		if err != nil {
			panic(fmt.Sprintf("api: the API server key cannot sign JWTs: %v", err)) // the node made this key
		}
	}
	s := &Server{Deps: d, cfg: cfg, router: httprouter.New(), jwtKid: jwtKid, jwtJWK: jwtJWK}
	s.router.RedirectTrailingSlash = false
	// An API answers a path with ".." or the wrong case with 404, never
	// with a redirect to another path ("//" and a trailing "/" are cleaned
	// before routing: cleanPaths).
	s.router.RedirectFixedPath = false
	s.router.HandleMethodNotAllowed = true
	s.router.NotFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, newRequestID(), &apiError{status: http.StatusNotFound, code: codeNotFound,
			message: "no operation at " + r.Method + " " + r.URL.Path})
	})
	s.addProbes(s.router)
	// The web console (console/): static assets on every node, the same origin as the API.
	con := console.Handler()
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		s.router.Handler(m, "/console", con)
		s.router.Handler(m, "/console/*file", con)
	}
	s.router.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, newRequestID(), &apiError{status: http.StatusMethodNotAllowed, code: codeNoMethod,
			message: "method " + r.Method + " is not allowed at " + r.URL.Path})
	})
	s.router.PanicHandler = func(w http.ResponseWriter, r *http.Request, v any) {
		s.Log.Error("handler panic", "path", r.URL.Path, "panic", v)
		s.writeError(w, r, newRequestID(), &apiError{status: http.StatusInternalServerError, code: codeInternal, message: "internal error"})
	}
	s.metrics = newMetrics(s)
	s.resources = s.resourceTable()
	for _, rt := range s.routeTable() {
		s.add(rt)
	}
	return s
}

// Handler serves both APIs (and the console), with CORS for the allowed
// origins and paths cleaned of doubled and trailing slashes.
func (s *Server) Handler() http.Handler { return s.withCORS(cleanPaths(s.router)) }

// JWK is the public JWK of the key this node signs enrollment JWTs with
// (nil without one): each node publishes it in its controller record, so
// that /enroll/jwks on any node verifies the JWTs of every node.
func (s *Server) JWK() json.RawMessage { return s.jwtJWK }

// now is the time of the request, in UTC.
func (s *Server) now() time.Time { return s.Now().UTC() }

// authority returns the PKI loaded from the model, reloaded when the model's copy changes.
// Authority is the cluster's CA as the model holds it (cached while the model's PKI setting is unchanged).
func (s *Server) Authority(tx *store.Tx) (*pki.Authority, error) { return s.authority(tx) }

func (s *Server) authority(tx *store.Tx) (*pki.Authority, error) {
	raw := tx.Setting(store.SettingPKI)
	s.pkiMu.Lock()
	defer s.pkiMu.Unlock()
	if s.pkiCache != nil && string(raw) == string(s.pkiSource) {
		return s.pkiCache, nil
	}
	var st pki.State
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, err
	}
	a, err := pki.Load(&st)
	if err != nil {
		return nil, err
	}
	s.pkiCache, s.pkiSource = a, raw
	return a, nil
}

// peerCerts returns the TLS client certificates of a request.
func peerCerts(r *http.Request) []*x509.Certificate {
	if r.TLS == nil {
		return nil
	}
	return r.TLS.PeerCertificates
}
