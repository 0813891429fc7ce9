package ziti

import (
	"strconv"
	"testing"
	"time"

	"edgectl/dataplane/wire"

	"github.com/google/go-cmp/cmp"
	"github.com/openziti/ziti/common/pb/edge_ctrl_pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// marshal is OpenZiti's encoding of m (with map keys in order, though
// edgectl's decoders must not care).
func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatalf("proto.Marshal(%T): %v", m, err)
	}
	return b
}

// checkDecoded fails t unless edgectl decoded OpenZiti's message to want.
func checkDecoded(t *testing.T, what string, got, want any, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: edgectl cannot decode OpenZiti's encoding: %v", what, err)
		return
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s: edgectl decodes OpenZiti's message differently (-want +got):\n%s", what, d)
	}
}

// withUnknown returns a copy of m whose encoding also carries fields of every
// wire type that edgectl does not know (as a newer router's would).
func withUnknown(m proto.Message) proto.Message {
	c := proto.Clone(m)
	var u []byte
	u = protowire.AppendTag(u, 900, protowire.VarintType)
	u = protowire.AppendVarint(u, 1<<60)
	u = protowire.AppendTag(u, 901, protowire.Fixed32Type)
	u = protowire.AppendFixed32(u, 7)
	u = protowire.AppendTag(u, 902, protowire.Fixed64Type)
	u = protowire.AppendFixed64(u, 8)
	u = protowire.AppendTag(u, 903, protowire.BytesType)
	u = protowire.AppendString(u, "future")
	u = protowire.AppendTag(u, 904, protowire.StartGroupType)
	u = protowire.AppendTag(u, 1, protowire.VarintType)
	u = protowire.AppendVarint(u, 1)
	u = protowire.AppendTag(u, 904, protowire.EndGroupType)
	r := c.ProtoReflect()
	r.SetUnknown(append(r.GetUnknown(), u...))
	return c
}

func zClientHello() *edge_ctrl_pb.ClientHello {
	addr := func(proto, host string, port int32) *edge_ctrl_pb.Address {
		return &edge_ctrl_pb.Address{Value: proto + ":" + host + ":" + itoa(port), Protocol: proto, Hostname: host, Port: port}
	}
	return &edge_ctrl_pb.ClientHello{
		Version:       "v1.7.2",
		Hostname:      "router.example",
		Protocols:     []string{"tls", "wss"},
		Data:          map[string]string{"a": "1", "empty": "", "z": "26"},
		ProtocolPorts: []string{"3022", "3023"},
		Listeners: []*edge_ctrl_pb.Listener{
			{Address: addr("tls", "0.0.0.0", 3022), Advertise: addr("tls", "router.example", 3022)},
			{Address: addr("wss", "0.0.0.0", 3023), Advertise: addr("wss", "ws.router.example", 443)},
			{Advertise: addr("tls", "only-advertise.example", 65535)},
			{},
		},
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func wClientHello() *wire.ClientHello {
	addr := func(proto, host string, port int32) wire.Address {
		return wire.Address{Value: proto + ":" + host + ":" + itoa(port), Protocol: proto, Hostname: host, Port: port}
	}
	return &wire.ClientHello{
		Version:       "v1.7.2",
		Hostname:      "router.example",
		Protocols:     []string{"tls", "wss"},
		Data:          map[string]string{"a": "1", "empty": "", "z": "26"},
		ProtocolPorts: []string{"3022", "3023"},
		Listeners: []wire.Listener{
			{Address: addr("tls", "0.0.0.0", 3022), Advertise: addr("tls", "router.example", 3022)},
			{Address: addr("wss", "0.0.0.0", 3023), Advertise: addr("wss", "ws.router.example", 443)},
			{Advertise: addr("tls", "only-advertise.example", 65535)},
			{},
		},
	}
}

func TestDecode_ClientHello(t *testing.T) {
	got, err := wire.DecodeClientHello(marshal(t, zClientHello()))
	checkDecoded(t, "ClientHello", got, wClientHello(), err)

	// Unknown fields at every level are skipped.
	z := zClientHello()
	z.Listeners[0] = withUnknown(z.Listeners[0]).(*edge_ctrl_pb.Listener)
	z.Listeners[0].Advertise = withUnknown(z.Listeners[0].Advertise).(*edge_ctrl_pb.Address)
	got, err = wire.DecodeClientHello(marshal(t, withUnknown(z)))
	checkDecoded(t, "ClientHello with unknown fields", got, wClientHello(), err)

	// A router without edge listeners (and the empty message).
	got, err = wire.DecodeClientHello(marshal(t, &edge_ctrl_pb.ClientHello{Version: "v1.7.2", Data: map[string]string{}}))
	checkDecoded(t, "ClientHello without listeners", got, &wire.ClientHello{Version: "v1.7.2", Data: map[string]string{}}, err)
	got, err = wire.DecodeClientHello(nil)
	checkDecoded(t, "empty ClientHello", got, &wire.ClientHello{Data: map[string]string{}}, err)
}

func TestDecode_SubscribeToDataModelRequest(t *testing.T) {
	z := &edge_ctrl_pb.SubscribeToDataModelRequest{CurrentIndex: 1<<40 + 1, SubscriptionDurationSeconds: 300, Renew: true, TimelineId: "timeline-abc"}
	got, err := wire.DecodeSubscribe(marshal(t, z))
	checkDecoded(t, "SubscribeToDataModelRequest", got,
		wire.SubscribeRequest{CurrentIndex: 1<<40 + 1, Duration: 300 * time.Second, Renew: true, TimelineID: "timeline-abc"}, err)

	got, err = wire.DecodeSubscribe(marshal(t, withUnknown(&edge_ctrl_pb.SubscribeToDataModelRequest{SubscriptionDurationSeconds: 60})))
	checkDecoded(t, "SubscribeToDataModelRequest, first subscription, unknown fields", got,
		wire.SubscribeRequest{Duration: time.Minute}, err)
}

func TestDecode_APISessionHeartbeatAndReSync(t *testing.T) {
	tokens, err := wire.DecodeAPISessionHeartbeat(marshal(t, &edge_ctrl_pb.ApiSessionHeartbeat{Tokens: []string{"tok-1", "", "tok-3"}}))
	checkDecoded(t, "ApiSessionHeartbeat", tokens, []string{"tok-1", "", "tok-3"}, err)
	tokens, err = wire.DecodeAPISessionHeartbeat(marshal(t, &edge_ctrl_pb.ApiSessionHeartbeat{}))
	checkDecoded(t, "empty ApiSessionHeartbeat", tokens, []string(nil), err)

	reason, err := wire.DecodeRequestClientReSync(marshal(t, withUnknown(&edge_ctrl_pb.RequestClientReSync{Reason: "router restarted"})))
	checkDecoded(t, "RequestClientReSync", reason, "router restarted", err)
}

func TestDecode_Enrollment(t *testing.T) {
	x, err := wire.DecodeExtendRequest(marshal(t, &edge_ctrl_pb.EnrollmentExtendRouterRequest{
		ClientCertCsr: "-----BEGIN CERTIFICATE REQUEST-----\nclient\n", ServerCertCsr: "server csr", RequireVerification: true}))
	checkDecoded(t, "EnrollmentExtendRouterRequest", x,
		wire.ExtendRequest{ClientCertCSR: "-----BEGIN CERTIFICATE REQUEST-----\nclient\n", ServerCertCSR: "server csr", RequireVerification: true}, err)
	x, err = wire.DecodeExtendRequest(marshal(t, withUnknown(&edge_ctrl_pb.EnrollmentExtendRouterRequest{ClientCertCsr: "c", ServerCertCsr: "s"})))
	checkDecoded(t, "EnrollmentExtendRouterRequest without verification", x, wire.ExtendRequest{ClientCertCSR: "c", ServerCertCSR: "s"}, err)

	pem, err := wire.DecodeExtendVerify(marshal(t, &edge_ctrl_pb.EnrollmentExtendRouterVerifyRequest{ClientCertPem: "-----BEGIN CERTIFICATE-----\nnew\n"}))
	checkDecoded(t, "EnrollmentExtendRouterVerifyRequest", pem, "-----BEGIN CERTIFICATE-----\nnew\n", err)
}

func TestDecode_RouterDataModelValidateResponse(t *testing.T) {
	z := &edge_ctrl_pb.RouterDataModelValidateResponse{
		OrigEntityCounts: map[string]uint32{"identities": 3, "services": 2, "postureChecks": 0},
		CopyEntityCounts: map[string]uint32{"identities": 2, "services": 2, "publicKeys": 4294967295},
		Diffs: []*edge_ctrl_pb.RouterDataModelDiff{
			{EntityType: "identity", EntityId: "id-1", DiffType: "missing", Detail: "identity id-1 not found in copy"},
			{EntityType: "service", EntityId: "svc-a", DiffType: "changed", Detail: "name: web != web2"},
			{},
		},
	}
	got, err := wire.DecodeValidateResponse(marshal(t, withUnknown(z)))
	checkDecoded(t, "RouterDataModelValidateResponse", got, &wire.ValidateResponse{
		Expected: map[string]uint32{"identities": 3, "services": 2, "postureChecks": 0},
		Actual:   map[string]uint32{"identities": 2, "services": 2, "publicKeys": 4294967295},
		Diffs: []wire.Diff{
			{EntityType: "identity", EntityID: "id-1", DiffType: "missing", Detail: "identity id-1 not found in copy"},
			{EntityType: "service", EntityID: "svc-a", DiffType: "changed", Detail: "name: web != web2"},
			{},
		},
	}, err)

	got, err = wire.DecodeValidateResponse(marshal(t, &edge_ctrl_pb.RouterDataModelValidateResponse{}))
	checkDecoded(t, "empty RouterDataModelValidateResponse", got,
		&wire.ValidateResponse{Expected: map[string]uint32{}, Actual: map[string]uint32{}, Diffs: []wire.Diff{}}, err)
}
