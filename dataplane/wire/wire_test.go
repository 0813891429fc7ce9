package wire

import (
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// The decoders read what a router may send; whatever the bytes, they
// return a value or an error, never panic. (integration/ziti checks them
// against OpenZiti's generated code.)
func FuzzDecoders(f *testing.F) {
	hello := buf(nil).str(1, "v1.7.2").str(2, "host").strs(3, []string{"tls"}).strMap(4, map[string]string{"a": "b"}).
		strs(5, []string{"3022"}).msg(10, buf(nil).msg(10, buf(nil).str(10, "tls:0.0.0.0:3022").str(20, "tls")).
		msg(20, buf(nil).str(10, "tls:h:3022").str(20, "tls").str(30, "h").uint(40, 3022)))
	f.Add([]byte(hello))
	f.Add([]byte(buf(nil).uint(1, 17).uint(2, 300).boolean(3, true).str(4, "tl")))
	f.Add([]byte(buf(nil).msg(1, buf(nil).str(1, "k").uint(2, 3)).msg(3, buf(nil).str(1, "identity").str(2, "x"))))
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	// The dial's and the terminators' messages and headers.
	f.Add(encodeCreateTerminatorV2(CreateTerminatorV2{Address: "hosted:a", SessionToken: "s", Fingerprints: []string{"f"},
		PeerData: map[uint32][]byte{1: []byte("p")}, Cost: 3, Precedence: PrecedenceRequired, InstanceID: "i",
		InstanceSecret: []byte{1}, APISessionToken: "t"}))
	for _, ct := range terminatorRequestTypes {
		f.Add(encodeTerminatorRequest(ct, TerminatorRequest{SessionToken: "s", Fingerprints: []string{"f"}, TerminatorID: "t-1",
			APISessionToken: "a", Cost: 2, Precedence: PrecedenceFailed, UpdateCost: true, UpdatePrecedence: true, CheckPassed: true}))
	}
	f.Add([]byte(buf(nil).strs(1, []string{"c-1", "c-2"})))
	f.Add(encodeStringSlice([]string{"fp-1", "", "fp-3"}))
	f.Add(EncodeU32Map(map[uint32][]byte{1: []byte("one"), 1 << 31: nil}))
	f.Add(EncodeFault(Fault{Subject: ForwardFault, ID: "c-1", Iteration: 3}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeClientHello(b)
		_, _ = DecodeAPISessionHeartbeat(b)
		_, _ = DecodeRequestClientReSync(b)
		_, _ = DecodeExtendRequest(b)
		_, _ = DecodeExtendVerify(b)
		_, _ = DecodeSubscribe(b)
		_, _ = DecodeValidateResponse(b)
		_, _ = DecodeValidateTerminatorsV2Response(b)
		_, _ = DecodeInspectResponse(b)
		_, _ = DecodeInspectedLinks(string(b))
		_, _, _ = DecodeInspectedSdkTerminators(string(b))
		for _, ct := range []int32{ValidateTerminatorsRequestType, ValidateRouterLinksRequestType, ValidateRouterSdkTerminatorsRequestType, ValidateRouterDataModelRequestType} {
			_, _ = DecodeMgmtValidateRequest(ct, b)
		}
		_, _ = DecodeCreateTerminatorV2(b)
		for _, ct := range terminatorRequestTypes {
			_, _ = DecodeTerminatorRequest(ct, b)
		}
		_, _ = DecodeCircuitConfirmation(b)
		if fault, err := DecodeFault(b); err == nil {
			if again, err := DecodeFault(EncodeFault(fault)); err != nil || again != fault {
				t.Fatalf("fault %+v read back as %+v, %v", fault, again, err)
			}
		}
		_, _ = DecodeRemoveTerminators(b)
		_, _ = DecodeCreateCircuitV2Request(map[int32][]byte{CreateCircuitReqSessionTokenHeader: []byte("s"),
			CreateCircuitReqFingerprintsHeader: b, CreateCircuitPeerDataHeader: b})
		// The headers read back the same once written again.
		if ss, err := DecodeStringSlice(b); err == nil {
			if again, err := DecodeStringSlice(encodeStringSlice(ss)); err != nil || !reflect.DeepEqual(again, ss) {
				t.Fatalf("string list %q read back as %q, %v", ss, again, err)
			}
		}
		if m, err := DecodeU32Map(b); err == nil {
			if again, err := DecodeU32Map(EncodeU32Map(m)); err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("peer data %v read back as %v, %v", m, again, err)
			}
		}
	})
}

func TestDecodeClientHello_ListenersAndSupportedProtocols(t *testing.T) {
	b := buf(nil).str(1, "v1.7.2").str(2, "legacy").msg(10, buf(nil).
		msg(10, buf(nil).str(10, "tls:0.0.0.0:3022").str(20, "tls")).
		msg(20, buf(nil).str(10, "tls:er.example:443").str(20, "tls").str(30, "er.example").uint(40, 443)))
	h, err := DecodeClientHello(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []Listener{{Address: Address{Value: "tls:0.0.0.0:3022", Protocol: "tls"},
		Advertise: Address{Value: "tls:er.example:443", Protocol: "tls", Hostname: "er.example", Port: 443}}}
	if h.Version != "v1.7.2" || !reflect.DeepEqual(h.Listeners, want) {
		t.Fatalf("decoded %+v", h)
	}
	if got := h.SupportedProtocols(); !reflect.DeepEqual(got, map[string]string{"tls": "tls://er.example:443"}) {
		t.Fatalf("supported protocols %v", got)
	}
	// A router without listeners: its legacy hostname, protocols and ports.
	old := &ClientHello{Hostname: "h", Protocols: []string{"tls", "ws"}, ProtocolPorts: []string{"3022"}}
	if got := old.SupportedProtocols(); !reflect.DeepEqual(got, map[string]string{"tls": "tls://h:3022"}) {
		t.Fatalf("legacy supported protocols %v", got)
	}
}

func TestDecoders_BoundRepeatedFields(t *testing.T) {
	var b buf
	for i := 0; i <= MaxRepeated; i++ {
		b = b.str(1, "t")
	}
	if _, err := DecodeAPISessionHeartbeat(b); err != ErrTooMany {
		t.Fatalf("%d tokens: %v", MaxRepeated+1, err)
	}
}

func TestDecodeSubscribe_ClampsTheDuration(t *testing.T) {
	r, err := DecodeSubscribe(buf(nil).uint(1, 42).uint(2, 1<<40).boolean(3, true).str(4, "tl-1"))
	if err != nil {
		t.Fatal(err)
	}
	if r.CurrentIndex != 42 || r.Duration != 24*time.Hour || !r.Renew || r.TimelineID != "tl-1" {
		t.Fatalf("%+v", r)
	}
}

func TestEncoders_LeaveDefaultsOutAndKeepOrder(t *testing.T) {
	if b := Event(Create, false, ConfigType{}); !reflect.DeepEqual(b, []byte(buf(nil).msg(17, nil))) {
		t.Fatalf("an empty create event: %x", b)
	}
	a := Identity{ID: "i", ServiceHostingCosts: map[string]uint32{"b": 2, "a": 1}}.encode()
	again := Identity{ID: "i", ServiceHostingCosts: map[string]uint32{"a": 1, "b": 2}}.encode()
	if !reflect.DeepEqual(a, again) {
		t.Fatal("a map encodes in more than one order")
	}
	num, _, n := protowire.ConsumeTag(PublicKey{Usages: []uint64{0, 1}}.encode())
	if n <= 0 || num != 3 {
		t.Fatalf("usages are not the first field: %d", num)
	}
}
