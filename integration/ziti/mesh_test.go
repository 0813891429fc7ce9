package ziti

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"edgectl/dataplane/wire"

	"github.com/google/go-cmp/cmp"
	"github.com/openziti/metrics/metrics_pb"
	"github.com/openziti/ziti/common/pb/ctrl_pb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// Router links and multi-hop circuits (dataplane/wire/links.go): edgectl's
// encoding read by OpenZiti's generated code, and OpenZiti's read by
// edgectl's decoders.

func zListeners() []*ctrl_pb.Listener {
	return []*ctrl_pb.Listener{
		{Address: "tls:127.0.0.1:6004", Protocol: "tls", CostTags: []string{"cheap", "fast"}, Groups: []string{"default", "east"}, LocalBinding: "lo"},
		{Address: "tls:10.0.0.2:6005", Protocol: "tls", Groups: []string{"default"}},
		{},
	}
}

func TestDecode_Listeners(t *testing.T) {
	zs := zListeners()
	for _, m := range []*ctrl_pb.Listeners{{Listeners: zs}, withUnknown(&ctrl_pb.Listeners{Listeners: zs}).(*ctrl_pb.Listeners)} {
		got, err := wire.DecodeListeners(marshal(t, m))
		if err != nil {
			t.Fatalf("edgectl cannot decode OpenZiti's Listeners: %v", err)
		}
		if len(got) != len(zs) {
			t.Fatalf("%d listeners decoded, want %d", len(got), len(zs))
		}
		for i, l := range got {
			z := zs[i]
			var want = wire.LinkListener{Address: z.Address, Protocol: z.Protocol, LocalBinding: z.LocalBinding, Groups: z.Groups, CostTags: z.CostTags}
			if d := cmp.Diff(want, l, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Raw" }, cmp.Ignore())); d != "" {
				t.Errorf("listener %d decoded differently (-want +got):\n%s", i, d)
			}
			// The raw bytes are sent on to peers as they came: OpenZiti reads them back as the same Listener.
			again := &ctrl_pb.Listener{}
			if err := proto.Unmarshal(l.Raw, again); err != nil {
				t.Fatalf("listener %d: OpenZiti cannot read the raw bytes %x: %v", i, l.Raw, err)
			}
			if !proto.Equal(again, z) {
				t.Errorf("listener %d: the raw bytes read back differently (-want +got):\n%s", i, cmp.Diff(z, again, protocmp.Transform()))
			}
		}
	}
	got, err := wire.DecodeListeners(marshal(t, &ctrl_pb.Listeners{}))
	if err != nil || len(got) != 0 {
		t.Fatalf("no listeners: %v %v", got, err)
	}
}

func TestEncode_PeerStateChanges(t *testing.T) {
	ls, err := wire.DecodeListeners(marshal(t, &ctrl_pb.Listeners{Listeners: zListeners()}))
	if err != nil {
		t.Fatal(err)
	}
	b := wire.PeerStateChanges([]wire.PeerStateChange{
		{ID: "r-healthy", Version: "v1.7.2", State: wire.PeerHealthy, Listeners: ls},
		{ID: "r-bare", Version: "v1.7.2", State: wire.PeerHealthy},
		{ID: "r-unhealthy", State: wire.PeerUnhealthy},
		{ID: "r-removed", State: wire.PeerRemoved},
	})
	checkEncoded(t, "PeerStateChanges", b, &ctrl_pb.PeerStateChanges{Changes: []*ctrl_pb.PeerStateChange{
		{Id: "r-healthy", Version: "v1.7.2", State: ctrl_pb.PeerState_Healthy, Listeners: zListeners()},
		{Id: "r-bare", Version: "v1.7.2", State: ctrl_pb.PeerState_Healthy},
		{Id: "r-unhealthy", State: ctrl_pb.PeerState_Unhealthy},
		{Id: "r-removed", State: ctrl_pb.PeerState_Removed},
	}})
	// Healthy is proto3's default: left out, as OpenZiti leaves it out.
	one := wire.PeerStateChanges([]wire.PeerStateChange{{ID: "r", Version: "v1.7.2", State: wire.PeerHealthy, Listeners: ls[:1]}})
	want := marshal(t, &ctrl_pb.PeerStateChanges{Changes: []*ctrl_pb.PeerStateChange{{Id: "r", Version: "v1.7.2", Listeners: zListeners()[:1]}}})
	if string(one) != string(want) {
		t.Errorf("a healthy peer encodes as %x, OpenZiti's as %x", one, want)
	}
	checkEncoded(t, "empty PeerStateChanges", wire.PeerStateChanges(nil), &ctrl_pb.PeerStateChanges{})
}

func TestDecode_VerifyRouter(t *testing.T) {
	for _, z := range []*ctrl_pb.VerifyRouter{
		{RouterId: "r-1", Fingerprints: []string{"0123456789abcdef0123456789abcdef01234567", "ffff"}},
		{RouterId: "r-2"},
		{},
	} {
		for _, m := range []proto.Message{z, withUnknown(z)} {
			id, fps, err := wire.DecodeVerifyRouter(marshal(t, m))
			checkDecoded(t, "VerifyRouter", struct {
				ID  string
				FPs []string
			}{id, fps}, struct {
				ID  string
				FPs []string
			}{z.RouterId, z.Fingerprints}, err)
		}
	}
}

func TestDecode_RouterLinks(t *testing.T) {
	z := &ctrl_pb.RouterLinks{Links: []*ctrl_pb.RouterLinks_RouterLink{
		{Id: "link-1", DestRouterId: "r-2", LinkProtocol: "tls", LinkCostTags: []string{"x"}, DialAddress: "tls:127.0.0.1:6005", Iteration: 3,
			ConnState: &ctrl_pb.LinkConnState{StateIteration: 2, Conns: []*ctrl_pb.LinkConn{{Type: "payload", LocalAddr: "a", RemoteAddr: "b"}}}},
		{Id: "link-2", DestRouterId: "r-3", LinkProtocol: "tls", DialAddress: "tls:127.0.0.1:6006", Iteration: math.MaxUint32},
		{},
	}}
	want := []wire.RouterLink{
		{ID: "link-1", DestRouterID: "r-2", Protocol: "tls", DialAddress: "tls:127.0.0.1:6005", Iteration: 3,
			ConnState: &wire.LinkConnState{StateIteration: 2, Conns: []wire.LinkConn{{Type: "payload", LocalAddr: "a", RemoteAddr: "b"}}}},
		{ID: "link-2", DestRouterID: "r-3", Protocol: "tls", DialAddress: "tls:127.0.0.1:6006", Iteration: math.MaxUint32},
		{},
	}
	for _, m := range []proto.Message{z, withUnknown(z)} {
		got, err := wire.DecodeRouterLinks(marshal(t, m))
		checkDecoded(t, "RouterLinks", got, want, err)
	}
	got, err := wire.DecodeRouterLinks(marshal(t, &ctrl_pb.RouterLinks{}))
	checkDecoded(t, "empty RouterLinks", got, []wire.RouterLink(nil), err)
}

func TestDecode_LinkStateUpdate(t *testing.T) {
	z := &ctrl_pb.LinkStateUpdate{LinkId: "link-1", LinkIteration: 4, ConnState: &ctrl_pb.LinkConnState{StateIteration: 9,
		Conns: []*ctrl_pb.LinkConn{{Type: "payload", LocalAddr: "127.0.0.1:1", RemoteAddr: "127.0.0.1:2"}, {Type: "ack", LocalAddr: "x", RemoteAddr: "y"}}}}
	want := wire.LinkStateUpdate{LinkID: "link-1", Iteration: 4, ConnState: &wire.LinkConnState{StateIteration: 9,
		Conns: []wire.LinkConn{{Type: "payload", LocalAddr: "127.0.0.1:1", RemoteAddr: "127.0.0.1:2"}, {Type: "ack", LocalAddr: "x", RemoteAddr: "y"}}}}
	for _, m := range []proto.Message{z, withUnknown(z)} {
		got, err := wire.DecodeLinkStateUpdate(marshal(t, m))
		checkDecoded(t, "LinkStateUpdate", got, want, err)
	}
}

func TestFault_BothWays(t *testing.T) {
	for _, f := range []wire.Fault{
		{Subject: wire.LinkFault, ID: "link-1", Iteration: 7},
		{Subject: wire.LinkDuplicate, ID: "link-2", Iteration: math.MaxUint32},
		{Subject: wire.LinkFault, ID: "link-3"},
		{Subject: wire.IngressFault, ID: "circuit"},
	} {
		z := &ctrl_pb.Fault{Subject: ctrl_pb.FaultSubject(f.Subject), Id: f.ID, Iteration: f.Iteration}
		checkEncoded(t, "Fault", wire.EncodeFault(f), z)
		got, err := wire.DecodeFault(marshal(t, withUnknown(z)))
		checkDecoded(t, "Fault", got, f, err)
	}
}

func TestDecode_Metrics(t *testing.T) {
	z := &metrics_pb.MetricsMessage{
		EventId:  "ev-1",
		SourceId: "router-a",
		Tags:     map[string]string{"k": "v"},
		IntValues: map[string]int64{
			"link.l1.latency": 12, // not a histogram: ignored
		},
		FloatValues: map[string]float64{"f": 1.5},
		Meters:      map[string]*metrics_pb.MetricsMessage_Meter{"m": {Count: 3, M1Rate: 2.5}},
		Histograms: map[string]*metrics_pb.MetricsMessage_Histogram{
			"link.l1.latency":    {Count: 6, Max: 9_000_000, Mean: 1_234_567.875, Min: 1, StdDev: 2.5, Variance: 6.25, P50: 1, P75: 2, P95: 3, P99: 4, P999: 5, P9999: 6},
			"link.l1.queue_time": {Count: 6, Mean: 250_000},
			"link.l2.latency":    {Mean: 8_888_888_888_888},
			"zero":               {Count: 4},
			"empty":              {},
		},
		Timers:         map[string]*metrics_pb.MetricsMessage_Timer{"t": {Count: 1, Mean: 9.75}},
		DoNotPropagate: true,
	}
	want := map[string]float64{"link.l1.latency": 1_234_567.875, "link.l1.queue_time": 250_000, "link.l2.latency": 8_888_888_888_888, "zero": 0, "empty": 0}
	for _, m := range []proto.Message{z, withUnknown(z)} {
		src, means, err := wire.DecodeMetrics(marshal(t, m))
		checkDecoded(t, "MetricsMessage", struct {
			Source string
			Means  map[string]float64
		}{src, means}, struct {
			Source string
			Means  map[string]float64
		}{"router-a", want}, err)
	}
}

func TestEncode_RouteOverLinks(t *testing.T) {
	// The routes of a router in the middle of a path, and of the last on a reroute (no egress).
	b := wire.Route("c1", wire.SmartRerouteAttempt, nil, []wire.Forward{
		{Src: "L1", Dst: "L2", DstType: wire.DestLink}, {Src: "L2", Dst: "L1", DstType: wire.DestLink},
	}, 10e9, nil)
	checkEncoded(t, "Route (transit)", b, &ctrl_pb.Route{CircuitId: "c1", Attempt: 99969996, Context: &ctrl_pb.Context{}, Timeout: 10e9,
		Forwards: []*ctrl_pb.Route_Forward{
			{SrcAddress: "L1", DstAddress: "L2", DstType: ctrl_pb.DestType_Link},
			{SrcAddress: "L2", DstAddress: "L1", DstType: ctrl_pb.DestType_Link},
		}})
}

// zitiConst reads an integer constant from OpenZiti v1.7.2's source (for
// one in a package this module does not build: its dependencies are many).
func zitiConst(t *testing.T, pkg, file, name string) int64 {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/openziti/ziti").Output()
	if err != nil {
		t.Fatalf("go list the ziti module: %v", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), pkg, file)
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatalf("OpenZiti's %s: %v", path, err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name != name || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.INT {
					t.Fatalf("OpenZiti's %s is not an integer literal", name)
				}
				v, err := strconv.ParseInt(lit.Value, 0, 64)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
	}
	t.Fatalf("no constant %s in OpenZiti's %s", name, path)
	return 0
}

func TestConstants_Links(t *testing.T) {
	c := func(ct ctrl_pb.ContentType) int64 { return int64(ct) }
	checkConsts(t, []constCase{
		{"wire.VerifyRouterType", wire.VerifyRouterType, c(ctrl_pb.ContentType_VerifyRouterType), "ctrl_pb.ContentType_VerifyRouterType"},
		{"wire.VerifyRouterType", wire.VerifyRouterType, int64((&ctrl_pb.VerifyRouter{}).GetContentType()), "(*ctrl_pb.VerifyRouter).GetContentType()"},
		{"wire.PeerStateChangesType", wire.PeerStateChangesType, c(ctrl_pb.ContentType_PeerStateChangeRequestType), "ctrl_pb.ContentType_PeerStateChangeRequestType"},
		{"wire.PeerStateChangesType", wire.PeerStateChangesType, int64((&ctrl_pb.PeerStateChanges{}).GetContentType()), "(*ctrl_pb.PeerStateChanges).GetContentType()"},
		{"wire.FaultType", wire.FaultType, c(ctrl_pb.ContentType_FaultType), "ctrl_pb.ContentType_FaultType"},
		{"wire.FaultType", wire.FaultType, int64((&ctrl_pb.Fault{}).GetContentType()), "(*ctrl_pb.Fault).GetContentType()"},
		{"wire.RouteType", wire.RouteType, c(ctrl_pb.ContentType_RouteType), "ctrl_pb.ContentType_RouteType"},
		{"wire.UnrouteType", wire.UnrouteType, c(ctrl_pb.ContentType_UnrouteType), "ctrl_pb.ContentType_UnrouteType"},

		{"wire.PeerHealthy", wire.PeerHealthy, int64(ctrl_pb.PeerState_Healthy), "ctrl_pb.PeerState_Healthy"},
		{"wire.PeerUnhealthy", wire.PeerUnhealthy, int64(ctrl_pb.PeerState_Unhealthy), "ctrl_pb.PeerState_Unhealthy"},
		{"wire.PeerRemoved", wire.PeerRemoved, int64(ctrl_pb.PeerState_Removed), "ctrl_pb.PeerState_Removed"},

		{"wire.DestStart", wire.DestStart, int64(ctrl_pb.DestType_Start), "ctrl_pb.DestType_Start"},
		{"wire.DestEnd", wire.DestEnd, int64(ctrl_pb.DestType_End), "ctrl_pb.DestType_End"},
		{"wire.DestLink", wire.DestLink, int64(ctrl_pb.DestType_Link), "ctrl_pb.DestType_Link"},

		{"wire.IngressFault", wire.IngressFault, int64(ctrl_pb.FaultSubject_IngressFault), "ctrl_pb.FaultSubject_IngressFault"},
		{"wire.EgressFault", wire.EgressFault, int64(ctrl_pb.FaultSubject_EgressFault), "ctrl_pb.FaultSubject_EgressFault"},
		{"wire.LinkFault", wire.LinkFault, int64(ctrl_pb.FaultSubject_LinkFault), "ctrl_pb.FaultSubject_LinkFault"},
		{"wire.ForwardFault", wire.ForwardFault, int64(ctrl_pb.FaultSubject_ForwardFault), "ctrl_pb.FaultSubject_ForwardFault"},
		{"wire.UnknownOwnerForwardFault", wire.UnknownOwnerForwardFault, int64(ctrl_pb.FaultSubject_UnknownOwnerForwardFault), "ctrl_pb.FaultSubject_UnknownOwnerForwardFault"},
		{"wire.LinkDuplicate", wire.LinkDuplicate, int64(ctrl_pb.FaultSubject_LinkDuplicate), "ctrl_pb.FaultSubject_LinkDuplicate"},

		// controller/network's, read from its source (this module does not build that package).
		{"wire.SmartRerouteAttempt", wire.SmartRerouteAttempt, zitiConst(t, "controller/network", "network.go", "SmartRerouteAttempt"), "network.SmartRerouteAttempt"},
	})
}
