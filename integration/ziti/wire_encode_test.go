package ziti

import (
	"testing"

	"edgectl/dataplane/wire"

	"github.com/google/go-cmp/cmp"
	"github.com/openziti/ziti/common/pb/ctrl_pb"
	"github.com/openziti/ziti/common/pb/edge_ctrl_pb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"
)

// checkEncoded reads edgectl's encoding b with OpenZiti's generated type
// (the type of want) and fails t unless every field equals want's.
func checkEncoded(t *testing.T, what string, b []byte, want proto.Message) {
	t.Helper()
	got := want.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(b, got); err != nil {
		t.Errorf("%s: OpenZiti's %T cannot read edgectl's encoding %x: %v", what, want, b, err)
		return
	}
	if path := unknownFields(got.ProtoReflect(), string(got.ProtoReflect().Descriptor().Name())); path != "" {
		t.Errorf("%s: edgectl wrote fields OpenZiti's %T does not know, at %s", what, want, path)
	}
	if !proto.Equal(got, want) {
		t.Errorf("%s: OpenZiti reads edgectl's encoding differently from what it should hold (-want +got):\n%s",
			what, cmp.Diff(want, got, protocmp.Transform()))
	}
}

// unknownFields returns the path of the first message holding unknown fields, "" if none does.
func unknownFields(m protoreflect.Message, path string) string {
	if len(m.GetUnknown()) > 0 {
		return path
	}
	found := ""
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		p := path + "." + string(fd.Name())
		switch {
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				found = unknownFields(mv.Message(), p+"["+k.String()+"]")
				return found == ""
			})
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len() && found == ""; i++ {
				found = unknownFields(v.List().Get(i).Message(), p)
			}
		case !fd.IsMap() && !fd.IsList() && fd.Message() != nil:
			found = unknownFields(v.Message(), p)
		}
		return found == ""
	})
	return found
}

func TestEncode_ServerHello(t *testing.T) {
	checkEncoded(t, "ServerHello", wire.ServerHello("v0.1.0", map[string]string{"b": "2", "a": "1", "empty": "", "": "no key"}),
		&edge_ctrl_pb.ServerHello{Version: "v0.1.0", Data: map[string]string{"a": "1", "b": "2", "empty": "", "": "no key"}})
	checkEncoded(t, "empty ServerHello", wire.ServerHello("", nil), &edge_ctrl_pb.ServerHello{})
}

func TestEncode_APISessions(t *testing.T) {
	sessions := []*wire.APISession{
		{Token: "tok-1", CertFingerprints: []string{"fp-a", "fp-b"}, ID: "as-1", IdentityID: "id-1"},
		{Token: "tok-2", ID: "as-2", IdentityID: "id-2"},
		{},
	}
	want := []*edge_ctrl_pb.ApiSession{
		{Token: "tok-1", CertFingerprints: []string{"fp-a", "fp-b"}, Id: "as-1", IdentityId: "id-1"},
		{Token: "tok-2", Id: "as-2", IdentityId: "id-2"},
		{},
	}
	checkEncoded(t, "ApiSessionAdded full", wire.APISessionAdded(true, sessions),
		&edge_ctrl_pb.ApiSessionAdded{IsFullState: true, ApiSessions: want})
	checkEncoded(t, "ApiSessionAdded partial", wire.APISessionAdded(false, sessions[:1]),
		&edge_ctrl_pb.ApiSessionAdded{ApiSessions: want[:1]})
	checkEncoded(t, "ApiSessionAdded empty full state", wire.APISessionAdded(true, nil),
		&edge_ctrl_pb.ApiSessionAdded{IsFullState: true})
	checkEncoded(t, "ApiSessionRemoved", wire.APISessionRemoved([]string{"tok-1", "tok-2"}, []string{"as-1", "as-2", "as-3"}),
		&edge_ctrl_pb.ApiSessionRemoved{Tokens: []string{"tok-1", "tok-2"}, Ids: []string{"as-1", "as-2", "as-3"}})
	checkEncoded(t, "ApiSessionRemoved ids only", wire.APISessionRemoved(nil, []string{"as-1"}),
		&edge_ctrl_pb.ApiSessionRemoved{Ids: []string{"as-1"}})
}

func TestEncode_EnrollmentErrorAndCtrlAddresses(t *testing.T) {
	checkEncoded(t, "EnrollmentCertsResponse", wire.EnrollmentCerts("-----BEGIN CERTIFICATE-----\nclient\n", "server pem", "ca pems"),
		&edge_ctrl_pb.EnrollmentCertsResponse{ClientCertPem: "-----BEGIN CERTIFICATE-----\nclient\n", ServerCertPem: "server pem", CaCertsPem: "ca pems"})
	checkEncoded(t, "Error", wire.Error("INVALID_CSR", "the CSR is invalid", "asn1: syntax error"),
		&edge_ctrl_pb.Error{Code: "INVALID_CSR", Message: "the CSR is invalid", Cause: "asn1: syntax error"})
	checkEncoded(t, "empty Error (success)", wire.Error("", "", ""), &edge_ctrl_pb.Error{})
	checkEncoded(t, "UpdateCtrlAddresses", wire.UpdateCtrlAddresses([]string{"tls:ctrl-1:6262", "tls:ctrl-2:6262"}, 1<<40+9, true),
		&ctrl_pb.UpdateCtrlAddresses{Addresses: []string{"tls:ctrl-1:6262", "tls:ctrl-2:6262"}, Index: 1<<40 + 9, IsLeader: true})
	checkEncoded(t, "UpdateCtrlAddresses follower", wire.UpdateCtrlAddresses([]string{"tls:ctrl-1:6262"}, 3, false),
		&ctrl_pb.UpdateCtrlAddresses{Addresses: []string{"tls:ctrl-1:6262"}, Index: 3})
}

// eventCase is one data model event: edgectl's model and OpenZiti's.
type eventCase struct {
	name      string
	action    wire.Action
	synthetic bool
	model     wire.Model
	want      proto.Message // the model in OpenZiti's type, wrapped in its oneof by zEvent
}

// zEvent wraps c.want in the field of the event's model oneof that holds its
// type.
func zEvent(c eventCase) *edge_ctrl_pb.DataState_Event {
	e := &edge_ctrl_pb.DataState_Event{Action: edge_ctrl_pb.DataState_Action(c.action), IsSynthetic: c.synthetic}
	r := e.ProtoReflect()
	want := c.want.ProtoReflect()
	fields := r.Descriptor().Oneofs().ByName("Model").Fields()
	for i := range fields.Len() {
		if f := fields.Get(i); f.Message() != nil && f.Message().FullName() == want.Descriptor().FullName() {
			r.Set(f, protoreflect.ValueOfMessage(want))
			return e
		}
	}
	panic("no event model holds " + want.Descriptor().FullName())
}

func eventCases() []eventCase {
	type pc = edge_ctrl_pb.DataState_PostureCheck
	proc := func(os, path string, hashes, fps []string) *edge_ctrl_pb.DataState_PostureCheck_Process {
		return &edge_ctrl_pb.DataState_PostureCheck_Process{OsType: os, Path: path, Hashes: hashes, Fingerprints: fps}
	}
	return []eventCase{
		{"config type", wire.Create, false,
			wire.ConfigType{ID: "ct-1", Name: "host.v1"},
			&edge_ctrl_pb.DataState_ConfigType{Id: "ct-1", Name: "host.v1"}},
		{"config", wire.Update, false,
			wire.Config{ID: "cfg-1", TypeID: "ct-1", Name: "web-host", DataJSON: `{"address":"10.0.0.1","port":80,"protocol":"tcp"}`},
			&edge_ctrl_pb.DataState_Config{Id: "cfg-1", TypeId: "ct-1", Name: "web-host", DataJson: `{"address":"10.0.0.1","port":80,"protocol":"tcp"}`}},
		{"identity, every field", wire.Create, true,
			wire.Identity{
				ID: "id-1", Name: "laptop", DefaultHostingPrecedence: wire.PrecedenceRequired, DefaultHostingCost: 17,
				ServiceHostingPrecedences: map[string]wire.Precedence{"svc-b": wire.PrecedenceFailed, "svc-a": wire.PrecedenceRequired, "svc-c": wire.PrecedenceDefault},
				ServiceHostingCosts:       map[string]uint32{"svc-a": 10, "svc-b": 0, "svc-c": 65535},
				AppDataJSON:               []byte(`{"team":"ops","n":1}`),
				ServiceConfigs: map[string]map[string]string{
					"svc-a": {"ct-1": "cfg-1", "ct-2": "cfg-2"},
					"svc-b": {"ct-1": "cfg-3"},
					"svc-c": {},
				},
				Disabled: true,
			},
			&edge_ctrl_pb.DataState_Identity{
				Id: "id-1", Name: "laptop", DefaultHostingPrecedence: edge_ctrl_pb.TerminatorPrecedence_Required, DefaultHostingCost: 17,
				ServiceHostingPrecedences: map[string]edge_ctrl_pb.TerminatorPrecedence{"svc-a": edge_ctrl_pb.TerminatorPrecedence_Required, "svc-b": edge_ctrl_pb.TerminatorPrecedence_Failed, "svc-c": edge_ctrl_pb.TerminatorPrecedence_Default},
				ServiceHostingCosts:       map[string]uint32{"svc-a": 10, "svc-b": 0, "svc-c": 65535},
				AppDataJson:               []byte(`{"team":"ops","n":1}`),
				ServiceConfigs: map[string]*edge_ctrl_pb.DataState_ServiceConfigs{
					"svc-a": {Configs: map[string]string{"ct-1": "cfg-1", "ct-2": "cfg-2"}},
					"svc-b": {Configs: map[string]string{"ct-1": "cfg-3"}},
					"svc-c": {},
				},
				Disabled: true,
			}},
		{"identity, defaults", wire.Update, false,
			wire.Identity{ID: "id-2", Name: "phone", DefaultHostingPrecedence: wire.PrecedenceFailed, DefaultHostingCost: 1},
			&edge_ctrl_pb.DataState_Identity{Id: "id-2", Name: "phone", DefaultHostingPrecedence: edge_ctrl_pb.TerminatorPrecedence_Failed, DefaultHostingCost: 1}},
		{"identity delete", wire.Delete, false,
			wire.Identity{ID: "id-3"},
			&edge_ctrl_pb.DataState_Identity{Id: "id-3"}},
		{"service", wire.Create, false,
			wire.Service{ID: "svc-a", Name: "web", EncryptionRequired: true, Configs: []string{"cfg-1", "cfg-2"}},
			&edge_ctrl_pb.DataState_Service{Id: "svc-a", Name: "web", EncryptionRequired: true, Configs: []string{"cfg-1", "cfg-2"}}},
		{"service, no configs", wire.Update, true,
			wire.Service{ID: "svc-b", Name: "ssh"},
			&edge_ctrl_pb.DataState_Service{Id: "svc-b", Name: "ssh"}},
		{"dial policy", wire.Create, false,
			wire.ServicePolicy{ID: "sp-1", Name: "all-dial", PolicyType: wire.DialPolicy},
			&edge_ctrl_pb.DataState_ServicePolicy{Id: "sp-1", Name: "all-dial", PolicyType: edge_ctrl_pb.PolicyType_DialPolicy}},
		{"bind policy", wire.Update, false,
			wire.ServicePolicy{ID: "sp-2", Name: "hosts", PolicyType: wire.BindPolicy},
			&edge_ctrl_pb.DataState_ServicePolicy{Id: "sp-2", Name: "hosts", PolicyType: edge_ctrl_pb.PolicyType_BindPolicy}},
		{"policy change: add identities", wire.Create, false,
			wire.ServicePolicyChange{PolicyID: "sp-1", RelatedEntityIDs: []string{"id-1", "id-2"}, RelatedEntityType: wire.RelatedIdentity, Add: true},
			&edge_ctrl_pb.DataState_ServicePolicyChange{PolicyId: "sp-1", RelatedEntityIds: []string{"id-1", "id-2"}, RelatedEntityType: edge_ctrl_pb.ServicePolicyRelatedEntityType_RelatedIdentity, Add: true}},
		{"policy change: remove service", wire.Create, false,
			wire.ServicePolicyChange{PolicyID: "sp-1", RelatedEntityIDs: []string{"svc-a"}, RelatedEntityType: wire.RelatedService},
			&edge_ctrl_pb.DataState_ServicePolicyChange{PolicyId: "sp-1", RelatedEntityIds: []string{"svc-a"}, RelatedEntityType: edge_ctrl_pb.ServicePolicyRelatedEntityType_RelatedService}},
		{"policy change: add posture check", wire.Create, true,
			wire.ServicePolicyChange{PolicyID: "sp-2", RelatedEntityIDs: []string{"pc-1"}, RelatedEntityType: wire.RelatedPostureCheck, Add: true},
			&edge_ctrl_pb.DataState_ServicePolicyChange{PolicyId: "sp-2", RelatedEntityIds: []string{"pc-1"}, RelatedEntityType: edge_ctrl_pb.ServicePolicyRelatedEntityType_RelatedPostureCheck, Add: true}},
		{"public key, both usages", wire.Create, false,
			wire.PublicKey{Data: []byte{0x30, 0x82, 0x01, 0x0a, 0x00, 0xff}, Kid: "kid-1", Usages: []uint64{wire.UsageClientX509CertValidation, wire.UsageJWTValidation}, Format: wire.FormatPKIXPublicKey},
			&edge_ctrl_pb.DataState_PublicKey{Data: []byte{0x30, 0x82, 0x01, 0x0a, 0x00, 0xff}, Kid: "kid-1",
				Usages: []edge_ctrl_pb.DataState_PublicKey_Usage{edge_ctrl_pb.DataState_PublicKey_ClientX509CertValidation, edge_ctrl_pb.DataState_PublicKey_JWTValidation},
				Format: edge_ctrl_pb.DataState_PublicKey_PKIXPublicKey}},
		{"public key, JWT usage only, X509 format", wire.Update, false,
			wire.PublicKey{Data: []byte("der"), Kid: "kid-2", Usages: []uint64{wire.UsageJWTValidation}, Format: wire.FormatX509CertDer},
			&edge_ctrl_pb.DataState_PublicKey{Data: []byte("der"), Kid: "kid-2",
				Usages: []edge_ctrl_pb.DataState_PublicKey_Usage{edge_ctrl_pb.DataState_PublicKey_JWTValidation},
				Format: edge_ctrl_pb.DataState_PublicKey_X509CertDer}},
		{"public key delete", wire.Delete, false,
			wire.PublicKey{Kid: "kid-3"},
			&edge_ctrl_pb.DataState_PublicKey{Kid: "kid-3"}},
		{"posture check MAC", wire.Create, false,
			wire.PostureCheck{ID: "pc-1", Name: "macs", TypeID: "MAC", MacAddresses: []string{"aa:bb:cc:dd:ee:ff", "001122334455"}},
			&pc{Id: "pc-1", Name: "macs", TypeId: "MAC", Subtype: &edge_ctrl_pb.DataState_PostureCheck_Mac_{Mac: &edge_ctrl_pb.DataState_PostureCheck_Mac{MacAddresses: []string{"aa:bb:cc:dd:ee:ff", "001122334455"}}}}},
		{"posture check MAC, no addresses", wire.Update, false,
			wire.PostureCheck{ID: "pc-1b", Name: "no macs", TypeID: "MAC"},
			&pc{Id: "pc-1b", Name: "no macs", TypeId: "MAC", Subtype: &edge_ctrl_pb.DataState_PostureCheck_Mac_{Mac: &edge_ctrl_pb.DataState_PostureCheck_Mac{}}}},
		{"posture check MFA", wire.Create, false,
			wire.PostureCheck{ID: "pc-2", Name: "mfa", TypeID: "MFA", MFA: &wire.MFA{TimeoutSeconds: 3600, PromptOnWake: true, PromptOnUnlock: true}},
			&pc{Id: "pc-2", Name: "mfa", TypeId: "MFA", Subtype: &edge_ctrl_pb.DataState_PostureCheck_Mfa_{Mfa: &edge_ctrl_pb.DataState_PostureCheck_Mfa{TimeoutSeconds: 3600, PromptOnWake: true, PromptOnUnlock: true}}}},
		{"posture check MFA, no timeout (-1)", wire.Update, false,
			wire.PostureCheck{ID: "pc-2b", Name: "mfa forever", TypeID: "MFA", MFA: &wire.MFA{TimeoutSeconds: -1, PromptOnUnlock: true}},
			&pc{Id: "pc-2b", Name: "mfa forever", TypeId: "MFA", Subtype: &edge_ctrl_pb.DataState_PostureCheck_Mfa_{Mfa: &edge_ctrl_pb.DataState_PostureCheck_Mfa{TimeoutSeconds: -1, PromptOnUnlock: true}}}},
		{"posture check MFA, no settings", wire.Create, false,
			wire.PostureCheck{ID: "pc-2c", Name: "mfa plain", TypeID: "MFA"},
			&pc{Id: "pc-2c", Name: "mfa plain", TypeId: "MFA", Subtype: &edge_ctrl_pb.DataState_PostureCheck_Mfa_{Mfa: &edge_ctrl_pb.DataState_PostureCheck_Mfa{}}}},
		{"posture check OS", wire.Create, false,
			wire.PostureCheck{ID: "pc-3", Name: "os", TypeID: "OS", OSList: []wire.OS{
				{Type: "Windows", Versions: []string{">=10.0.19041", "<11"}},
				{Type: "macOS", Versions: []string{">=13"}},
				{Type: "Linux"},
			}},
			&pc{Id: "pc-3", Name: "os", TypeId: "OS", Subtype: &edge_ctrl_pb.DataState_PostureCheck_OsList_{OsList: &edge_ctrl_pb.DataState_PostureCheck_OsList{OsList: []*edge_ctrl_pb.DataState_PostureCheck_Os{
				{OsType: "Windows", OsVersions: []string{">=10.0.19041", "<11"}},
				{OsType: "macOS", OsVersions: []string{">=13"}},
				{OsType: "Linux"},
			}}}}},
		{"posture check OS, empty list", wire.Update, false,
			wire.PostureCheck{ID: "pc-3b", Name: "os none", TypeID: "OS"},
			&pc{Id: "pc-3b", Name: "os none", TypeId: "OS", Subtype: &edge_ctrl_pb.DataState_PostureCheck_OsList_{OsList: &edge_ctrl_pb.DataState_PostureCheck_OsList{}}}},
		{"posture check PROCESS", wire.Create, false,
			wire.PostureCheck{ID: "pc-4", Name: "av", TypeID: "PROCESS", Process: &wire.Process{OSType: "Windows", Path: `C:\av\av.exe`, Hashes: []string{"h1", "h2"}, Fingerprints: []string{"fp1"}}},
			&pc{Id: "pc-4", Name: "av", TypeId: "PROCESS", Subtype: &edge_ctrl_pb.DataState_PostureCheck_Process_{Process: proc("Windows", `C:\av\av.exe`, []string{"h1", "h2"}, []string{"fp1"})}}},
		{"posture check PROCESS_MULTI", wire.Create, false,
			wire.PostureCheck{ID: "pc-5", Name: "procs", TypeID: "PROCESS_MULTI", Semantic: "AnyOf", Processes: []wire.Process{
				{OSType: "Linux", Path: "/usr/bin/agent", Hashes: []string{"h3"}},
				{OSType: "macOS", Path: "/Applications/Agent.app", Fingerprints: []string{"fp2", "fp3"}},
			}},
			&pc{Id: "pc-5", Name: "procs", TypeId: "PROCESS_MULTI", Subtype: &edge_ctrl_pb.DataState_PostureCheck_ProcessMulti_{ProcessMulti: &edge_ctrl_pb.DataState_PostureCheck_ProcessMulti{
				Semantic: "AnyOf",
				Processes: []*edge_ctrl_pb.DataState_PostureCheck_Process{
					proc("Linux", "/usr/bin/agent", []string{"h3"}, nil),
					proc("macOS", "/Applications/Agent.app", nil, []string{"fp2", "fp3"}),
				},
			}}}},
		{"posture check DOMAIN", wire.Create, false,
			wire.PostureCheck{ID: "pc-6", Name: "domain", TypeID: "DOMAIN", Domains: []string{"corp.example", "ad.example"}},
			&pc{Id: "pc-6", Name: "domain", TypeId: "DOMAIN", Subtype: &edge_ctrl_pb.DataState_PostureCheck_Domains_{Domains: &edge_ctrl_pb.DataState_PostureCheck_Domains{Domains: []string{"corp.example", "ad.example"}}}}},
		{"posture check delete", wire.Delete, false,
			wire.PostureCheck{ID: "pc-7"},
			&pc{Id: "pc-7"}},
	}
}

func TestEncode_Events(t *testing.T) {
	for _, c := range eventCases() {
		checkEncoded(t, "event "+c.name, wire.Event(c.action, c.synthetic, c.model), zEvent(c))
	}
}

func TestEncode_DataStateAndChangeSet(t *testing.T) {
	var events [][]byte
	var want []*edge_ctrl_pb.DataState_Event
	for _, c := range eventCases() {
		events = append(events, wire.Event(c.action, c.synthetic, c.model))
		want = append(want, zEvent(c))
	}
	state := wire.DataState(events, 1<<33+5, "timeline-abc")
	wantState := &edge_ctrl_pb.DataState{Events: want, EndIndex: 1<<33 + 5, TimelineId: "timeline-abc"}
	checkEncoded(t, "DataState", state, wantState)
	checkEncoded(t, "empty DataState", wire.DataState(nil, 0, ""), &edge_ctrl_pb.DataState{})

	checkEncoded(t, "ChangeSet", wire.ChangeSet(77, true, events),
		&edge_ctrl_pb.DataState_ChangeSet{Index: 77, IsSynthetic: true, Changes: want})
	checkEncoded(t, "ChangeSet, one change", wire.ChangeSet(1<<50, false, events[:1]),
		&edge_ctrl_pb.DataState_ChangeSet{Index: 1 << 50, Changes: want[:1]})

	checkEncoded(t, "RouterDataModelValidateRequest", wire.ValidateRequest(state, true),
		&edge_ctrl_pb.RouterDataModelValidateRequest{State: wantState, Fix: true})
	checkEncoded(t, "RouterDataModelValidateRequest, empty state, no fix", wire.ValidateRequest(wire.DataState(nil, 0, ""), false),
		&edge_ctrl_pb.RouterDataModelValidateRequest{State: &edge_ctrl_pb.DataState{}})
}
