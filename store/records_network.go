package store

import "time"

// Service is a network service that identities dial or bind.
type Service struct {
	Base
	Named
	RoleAttributes     []string `json:"roleAttributes"`
	Configs            []string `json:"configs"` // config ids
	EncryptionRequired bool     `json:"encryptionRequired"`
	TerminatorStrategy string   `json:"terminatorStrategy"`
	MaxIdleTimeMillis  int64    `json:"maxIdleTimeMillis"`
}

// RecordName is the service's name.
func (r *Service) RecordName() string { return r.Name }

// Roles returns the service's role attributes.
func (r *Service) Roles() []string { return r.RoleAttributes }

// RouterEnrollment holds the enrollment and certificate state shared by edge routers and routers.
type RouterEnrollment struct {
	IsVerified            bool       `json:"isVerified"`
	Fingerprint           *string    `json:"fingerprint"`
	CertPem               *string    `json:"certPem"`
	UnverifiedCertPem     *string    `json:"unverifiedCertPem"`
	UnverifiedFingerprint *string    `json:"unverifiedFingerprint"`
	EnrollmentToken       *string    `json:"enrollmentToken"`
	EnrollmentJwt         *string    `json:"enrollmentJwt"`
	EnrollmentCreatedAt   *time.Time `json:"enrollmentCreatedAt"`
	EnrollmentExpiresAt   *time.Time `json:"enrollmentExpiresAt"`
}

// EdgeRouter is a router that SDK clients connect to.
type EdgeRouter struct {
	Base
	Named
	RouterEnrollment
	RoleAttributes     []string          `json:"roleAttributes"`
	Cost               int               `json:"cost"`
	Disabled           bool              `json:"disabled"`
	NoTraversal        bool              `json:"noTraversal"`
	IsTunnelerEnabled  bool              `json:"isTunnelerEnabled"`
	AppData            map[string]any    `json:"appData"`
	Hostname           string            `json:"hostname"`
	SupportedProtocols map[string]string `json:"supportedProtocols"`
}

// RecordName is the edge router's name.
func (r *EdgeRouter) RecordName() string { return r.Name }

// Roles returns the edge router's role attributes.
func (r *EdgeRouter) Roles() []string { return r.RoleAttributes }

// Router is a transit router of the fabric.
type Router struct {
	Base
	Named
	RouterEnrollment
	Cost        int  `json:"cost"`
	Disabled    bool `json:"disabled"`
	NoTraversal bool `json:"noTraversal"`
}

// RecordName is the router's name.
func (r *Router) RecordName() string { return r.Name }

// Process is one process a PROCESS or PROCESS_MULTI posture check looks for.
type Process struct {
	OSType             string   `json:"osType"`
	Path               string   `json:"path"`
	Hashes             []string `json:"hashes"`
	SignerFingerprints []string `json:"signerFingerprints"`
}

// PostureCheck describes a state an endpoint must be in.
type PostureCheck struct {
	Base
	Named
	RoleAttributes []string `json:"roleAttributes"`
	TypeID         string   `json:"typeId"`
	Version        int64    `json:"version"`
	// OS
	OperatingSystems []OperatingSystem `json:"operatingSystems,omitempty"`
	// MAC
	MacAddresses []string `json:"macAddresses,omitempty"`
	// MFA
	TimeoutSeconds int64 `json:"timeoutSeconds,omitempty"`
	PromptOnWake   bool  `json:"promptOnWake,omitempty"`
	PromptOnUnlock bool  `json:"promptOnUnlock,omitempty"`
	// PROCESS and PROCESS_MULTI
	Process   *Process  `json:"process,omitempty"`
	Semantic  string    `json:"semantic,omitempty"`
	Processes []Process `json:"processes,omitempty"`
	// DOMAIN
	Domains []string `json:"domains,omitempty"`
}

// RecordName is the check's name.
func (r *PostureCheck) RecordName() string { return r.Name }

// Roles returns the check's role attributes.
func (r *PostureCheck) Roles() []string { return r.RoleAttributes }

// ServicePolicy grants identities Dial or Bind on services.
type ServicePolicy struct {
	Base
	Named
	Type              string   `json:"type"` // Dial or Bind
	Semantic          string   `json:"semantic"`
	IdentityRoles     []string `json:"identityRoles"`
	ServiceRoles      []string `json:"serviceRoles"`
	PostureCheckRoles []string `json:"postureCheckRoles"`
}

// RecordName is the policy's name.
func (r *ServicePolicy) RecordName() string { return r.Name }

// EdgeRouterPolicy gives identities edge routers.
type EdgeRouterPolicy struct {
	Base
	Named
	Semantic        string   `json:"semantic"`
	IdentityRoles   []string `json:"identityRoles"`
	EdgeRouterRoles []string `json:"edgeRouterRoles"`
	IsSystem        bool     `json:"isSystem"`
}

// RecordName is the policy's name.
func (r *EdgeRouterPolicy) RecordName() string { return r.Name }

// ServiceEdgeRouterPolicy gives services edge routers.
type ServiceEdgeRouterPolicy struct {
	Base
	Named
	Semantic        string   `json:"semantic"`
	ServiceRoles    []string `json:"serviceRoles"`
	EdgeRouterRoles []string `json:"edgeRouterRoles"`
}

// RecordName is the policy's name.
func (r *ServiceEdgeRouterPolicy) RecordName() string { return r.Name }
