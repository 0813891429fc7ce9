package wire

import (
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// Action is DataState.Action.
type Action uint64

// Event actions.
const (
	Create Action = 0
	Update Action = 1
	Delete Action = 2
)

// Precedence is edge_ctrl_pb.TerminatorPrecedence.
type Precedence uint64

// Terminator precedences.
const (
	PrecedenceDefault  Precedence = 0
	PrecedenceRequired Precedence = 1
	PrecedenceFailed   Precedence = 2
)

// PolicyType is edge_ctrl_pb.PolicyType.
type PolicyType uint64

// Service policy types.
const (
	DialPolicy PolicyType = 1
	BindPolicy PolicyType = 2
)

// Related is ServicePolicyRelatedEntityType.
type Related uint64

// Entities a service policy relates to.
const (
	RelatedService      Related = 1
	RelatedIdentity     Related = 2
	RelatedPostureCheck Related = 3
)

// Public key usages and formats.
const (
	UsageJWTValidation            = 0
	UsageClientX509CertValidation = 1
	FormatX509CertDer             = 0
	FormatPKIXPublicKey           = 1
)

// Model is one of DataState.Event's models.
type Model interface {
	field() protowire.Number
	encode() []byte
}

// Event encodes DataState.Event: action 1, isSynthetic 3, the model in its
// oneof field.
func Event(action Action, synthetic bool, m Model) []byte {
	return buf(nil).uint(1, uint64(action)).boolean(3, synthetic).msg(m.field(), m.encode())
}

// DataState encodes a full state: events 1, endIndex 2, timelineId 3.
func DataState(events [][]byte, endIndex uint64, timeline string) []byte {
	// Sized once: a full state is megabytes, and growing it by appends
	// would allocate it about twice over.
	n := protowire.SizeTag(2) + protowire.SizeVarint(endIndex) + protowire.SizeTag(3) + protowire.SizeBytes(len(timeline))
	for _, e := range events {
		n += protowire.SizeTag(1) + protowire.SizeBytes(len(e))
	}
	b := make(buf, 0, n)
	for _, e := range events {
		b = b.msg(1, e)
	}
	return b.uint(2, endIndex).str(3, timeline)
}

// ChangeSet encodes DataState.ChangeSet: index 1, isSynthetic 2, changes 3.
func ChangeSet(index uint64, synthetic bool, events [][]byte) []byte {
	b := buf(nil).uint(1, index).boolean(2, synthetic)
	for _, e := range events {
		b = b.msg(3, e)
	}
	return b
}

// ConfigType is DataState.ConfigType: id 1, name 2.
type ConfigType struct{ ID, Name string }

func (ConfigType) field() protowire.Number { return 17 }
func (c ConfigType) encode() []byte        { return buf(nil).str(1, c.ID).str(2, c.Name) }

// Config is DataState.Config: id 1, typeId 2, name 3, dataJson 4.
type Config struct{ ID, TypeID, Name, DataJSON string }

func (Config) field() protowire.Number { return 18 }
func (c Config) encode() []byte {
	return buf(nil).str(1, c.ID).str(2, c.TypeID).str(3, c.Name).str(4, c.DataJSON)
}

// Identity is DataState.Identity: id 1, name 2, defaultHostingPrecedence 3,
// defaultHostingCost 4, serviceHostingPrecedences 5, serviceHostingCosts 6,
// appDataJson 7, serviceConfigs 8 (service id → config type id → config
// id), disabled 9.
type Identity struct {
	ID, Name                  string
	DefaultHostingPrecedence  Precedence
	DefaultHostingCost        uint32
	ServiceHostingPrecedences map[string]Precedence
	ServiceHostingCosts       map[string]uint32
	AppDataJSON               []byte
	ServiceConfigs            map[string]map[string]string
	Disabled                  bool
}

func (Identity) field() protowire.Number { return 10 }
func (i Identity) encode() []byte {
	b := buf(nil).str(1, i.ID).str(2, i.Name).uint(3, uint64(i.DefaultHostingPrecedence)).uint(4, uint64(i.DefaultHostingCost))
	for _, k := range sortedKeys(i.ServiceHostingPrecedences) {
		b = b.msg(5, buf(nil).str(1, k).uint(2, uint64(i.ServiceHostingPrecedences[k])))
	}
	for _, k := range sortedKeys(i.ServiceHostingCosts) {
		b = b.msg(6, buf(nil).str(1, k).uint(2, uint64(i.ServiceHostingCosts[k])))
	}
	b = b.bytes(7, i.AppDataJSON)
	for _, svc := range sortedKeys(i.ServiceConfigs) {
		b = b.msg(8, buf(nil).str(1, svc).msg(2, buf(nil).strMap(1, i.ServiceConfigs[svc])))
	}
	return b.boolean(9, i.Disabled)
}

// Service is DataState.Service: id 1, name 2, encryptionRequired 3, configs 4.
type Service struct {
	ID, Name           string
	EncryptionRequired bool
	Configs            []string
}

func (Service) field() protowire.Number { return 11 }
func (s Service) encode() []byte {
	return buf(nil).str(1, s.ID).str(2, s.Name).boolean(3, s.EncryptionRequired).strs(4, s.Configs)
}

// ServicePolicy is DataState.ServicePolicy: id 1, name 2, policyType 3.
type ServicePolicy struct {
	ID, Name   string
	PolicyType PolicyType
}

func (ServicePolicy) field() protowire.Number { return 12 }
func (p ServicePolicy) encode() []byte {
	return buf(nil).str(1, p.ID).str(2, p.Name).uint(3, uint64(p.PolicyType))
}

// ServicePolicyChange is DataState.ServicePolicyChange: policyId 1,
// relatedEntityIds 2, relatedEntityType 3, add 4.
type ServicePolicyChange struct {
	PolicyID          string
	RelatedEntityIDs  []string
	RelatedEntityType Related
	Add               bool
}

func (ServicePolicyChange) field() protowire.Number { return 16 }
func (c ServicePolicyChange) encode() []byte {
	return buf(nil).str(1, c.PolicyID).strs(2, c.RelatedEntityIDs).uint(3, uint64(c.RelatedEntityType)).boolean(4, c.Add)
}

// PublicKey is DataState.PublicKey: data 1, kid 2, usages 3 (packed), format 4.
type PublicKey struct {
	Data   []byte
	Kid    string
	Usages []uint64
	Format uint64
}

func (PublicKey) field() protowire.Number { return 14 }
func (k PublicKey) encode() []byte {
	return buf(nil).bytes(1, k.Data).str(2, k.Kid).packed(3, k.Usages).uint(4, k.Format)
}

// OS is one operating system of an OS posture check: type 1, versions 2.
type OS struct {
	Type     string
	Versions []string
}

// Process is a process posture check's process: osType 1, path 2, hashes 3, fingerprints 4.
type Process struct {
	OSType, Path string
	Hashes       []string
	Fingerprints []string
}

func (p Process) encode() []byte {
	return buf(nil).str(1, p.OSType).str(2, p.Path).strs(3, p.Hashes).strs(4, p.Fingerprints)
}

// MFA is an MFA posture check's settings: timeoutSeconds 1, promptOnWake 2, promptOnUnlock 3.
type MFA struct {
	TimeoutSeconds               int64
	PromptOnWake, PromptOnUnlock bool
}

// PostureCheck is DataState.PostureCheck: id 1, name 2, typeId 4, and the
// part of its type: mac 7, mfa 8, osList 9, process 10, processMulti 11,
// domains 12.
type PostureCheck struct {
	ID, Name, TypeID string
	MacAddresses     []string
	MFA              *MFA
	OSList           []OS
	Process          *Process
	Semantic         string // processMulti
	Processes        []Process
	Domains          []string
}

func (PostureCheck) field() protowire.Number { return 13 }
func (p PostureCheck) encode() []byte {
	b := buf(nil).str(1, p.ID).str(2, p.Name).str(4, p.TypeID)
	switch p.TypeID {
	case "MAC":
		b = b.msg(7, buf(nil).strs(1, p.MacAddresses))
	case "MFA":
		m := MFA{}
		if p.MFA != nil {
			m = *p.MFA
		}
		b = b.msg(8, buf(nil).uint(1, uint64(m.TimeoutSeconds)).boolean(2, m.PromptOnWake).boolean(3, m.PromptOnUnlock))
	case "OS":
		var l buf
		for _, os := range p.OSList {
			l = l.msg(1, buf(nil).str(1, os.Type).strs(2, os.Versions))
		}
		b = b.msg(9, l)
	case "PROCESS":
		if p.Process != nil {
			b = b.msg(10, p.Process.encode())
		}
	case "PROCESS_MULTI":
		m := buf(nil).str(1, p.Semantic)
		for _, pr := range p.Processes {
			m = m.msg(2, pr.encode())
		}
		b = b.msg(11, m)
	case "DOMAIN":
		b = b.msg(12, buf(nil).strs(1, p.Domains))
	}
	return b
}

// SubscribeRequest is SubscribeToDataModelRequest: currentIndex 1,
// subscriptionDurationSeconds 2, renew 3, timelineId 4.
type SubscribeRequest struct {
	CurrentIndex uint64
	Duration     time.Duration
	Renew        bool
	TimelineID   string
}

// DecodeSubscribe reads a SubscribeToDataModelRequest.
func DecodeSubscribe(b []byte) (SubscribeRequest, error) {
	var r SubscribeRequest
	err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		switch num {
		case 1:
			r.CurrentIndex = v
		case 2:
			r.Duration = time.Duration(min(v, 86400)) * time.Second
		case 3:
			r.Renew = v != 0
		case 4:
			r.TimelineID = string(raw)
		}
		return nil
	})
	return r, err
}

// ValidateRequest encodes RouterDataModelValidateRequest: state 1, fix 2.
func ValidateRequest(state []byte, fix bool) []byte {
	return buf(nil).msg(1, state).boolean(2, fix)
}

// Diff is RouterDataModelDiff: entityType 1, entityId 2, diffType 3, detail 4.
type Diff struct {
	EntityType string `json:"entityType"`
	EntityID   string `json:"entityId"`
	DiffType   string `json:"diffType"`
	Detail     string `json:"detail"`
}

// String is the difference as OpenZiti's controller words it
// (RouterDataModelDiff.ToDetail).
func (d Diff) String() string {
	return d.EntityType + " id: " + d.EntityID + " " + d.DiffType + ": " + d.Detail
}

// ValidateResponse is RouterDataModelValidateResponse: origEntityCounts 1
// (the state sent), copyEntityCounts 2 (the router's), diffs 3.
type ValidateResponse struct {
	Expected, Actual map[string]uint32
	Diffs            []Diff
}

// DecodeValidateResponse reads a RouterDataModelValidateResponse.
func DecodeValidateResponse(b []byte) (*ValidateResponse, error) {
	r := &ValidateResponse{Expected: map[string]uint32{}, Actual: map[string]uint32{}, Diffs: []Diff{}}
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		switch num {
		case 1, 2:
			k, v, _, err := mapEntry(raw)
			if num == 1 {
				r.Expected[k] = uint32(v)
			} else {
				r.Actual[k] = uint32(v)
			}
			return err
		case 3:
			var d Diff
			err := Fields(raw, func(num protowire.Number, _ uint64, b []byte) error {
				switch num {
				case 1:
					d.EntityType = string(b)
				case 2:
					d.EntityID = string(b)
				case 3:
					d.DiffType = string(b)
				case 4:
					d.Detail = string(b)
				}
				return nil
			})
			if err == nil {
				r.Diffs, err = appendBounded(r.Diffs, d)
			}
			return err
		}
		return nil
	})
	return r, err
}
