package store

import "time"

// Record is a row of any table. Stored records are immutable: a change
// inserts a modified copy, so readers holding an old view never see it move.
type Record interface {
	base() *Base
	// GetID returns the record's id.
	GetID() string
	// RecordName is the unique name of the record, "" for kinds without one.
	RecordName() string
}

// Base holds the fields every record has.
type Base struct {
	ID        string         `json:"id"`
	CreatedAt time.Time      `json:"createdAt"`
	UpdatedAt time.Time      `json:"updatedAt"`
	Tags      map[string]any `json:"tags"`
}

func (b *Base) base() *Base { return b }

// RecordName is empty for records without a name.
func (b *Base) RecordName() string { return "" }

// Named is embedded by the kinds whose records have a unique name.
type Named struct {
	Name string `json:"name"`
}

// EnvInfo is the client environment reported at authentication.
type EnvInfo struct {
	Arch      string `json:"arch"`
	OS        string `json:"os"`
	OSRelease string `json:"osRelease"`
	OSVersion string `json:"osVersion"`
}

// SdkInfo is the client SDK reported at authentication.
type SdkInfo struct {
	AppID      string `json:"appId"`
	AppVersion string `json:"appVersion"`
	Branch     string `json:"branch"`
	Revision   string `json:"revision"`
	Type       string `json:"type"`
	Version    string `json:"version"`
}

// Identity is a user, device, service or router that authenticates.
type Identity struct {
	Base
	Named
	TypeID                    string            `json:"typeId"`
	IsAdmin                   bool              `json:"isAdmin"`
	IsDefaultAdmin            bool              `json:"isDefaultAdmin"`
	AppData                   map[string]any    `json:"appData"`
	AuthPolicyID              string            `json:"authPolicyId"`
	DefaultHostingCost        int               `json:"defaultHostingCost"`
	DefaultHostingPrecedence  string            `json:"defaultHostingPrecedence"`
	ServiceHostingCosts       map[string]int    `json:"serviceHostingCosts"`
	ServiceHostingPrecedences map[string]string `json:"serviceHostingPrecedences"`
	ExternalID                *string           `json:"externalId"`
	RoleAttributes            []string          `json:"roleAttributes"`
	Disabled                  bool              `json:"disabled"`
	DisabledAt                *time.Time        `json:"disabledAt"`
	DisabledUntil             *time.Time        `json:"disabledUntil"`
	EnvInfo                   *EnvInfo          `json:"envInfo"`
	SdkInfo                   *SdkInfo          `json:"sdkInfo"`
	Trace                     *TraceSpec        `json:"trace,omitempty"`
}

// RecordName is the identity's name.
func (r *Identity) RecordName() string { return r.Name }

// IdentityType is one of the four fixed identity types.
type IdentityType struct {
	Base
	Named
}

// RecordName is the type's name.
func (r *IdentityType) RecordName() string { return r.Name }

// AuthPolicy decides which primary and secondary methods an identity may use.
type AuthPolicy struct {
	Base
	Named
	Primary   AuthPolicyPrimary   `json:"primary"`
	Secondary AuthPolicySecondary `json:"secondary"`
}

// RecordName is the policy's name.
func (r *AuthPolicy) RecordName() string { return r.Name }

// AuthPolicyPrimary holds the primary-method rules of an auth policy.
type AuthPolicyPrimary struct {
	Cert struct {
		Allowed           bool `json:"allowed"`
		AllowExpiredCerts bool `json:"allowExpiredCerts"`
	} `json:"cert"`
	ExtJwt struct {
		Allowed        bool     `json:"allowed"`
		AllowedSigners []string `json:"allowedSigners"`
	} `json:"extJwt"`
	Updb struct {
		Allowed                bool `json:"allowed"`
		LockoutDurationMinutes int  `json:"lockoutDurationMinutes"`
		MaxAttempts            int  `json:"maxAttempts"`
		MinPasswordLength      int  `json:"minPasswordLength"`
		RequireMixedCase       bool `json:"requireMixedCase"`
		RequireNumberChar      bool `json:"requireNumberChar"`
		RequireSpecialChar     bool `json:"requireSpecialChar"`
	} `json:"updb"`
}

// AuthPolicySecondary holds the secondary-factor rules of an auth policy.
type AuthPolicySecondary struct {
	RequireExtJwtSigner *string `json:"requireExtJwtSigner"`
	RequireTotp         bool    `json:"requireTotp"`
}

// Authenticator binds a credential (password or certificate) to an identity.
type Authenticator struct {
	Base
	IdentityID string `json:"identityId"`
	Method     string `json:"method"` // updb or cert
	Username   string `json:"username,omitempty"`
	// PasswordHash is the encoded Argon2id hash; never shown by the API.
	PasswordHash string `json:"passwordHash,omitempty"`
	CertPem      string `json:"certPem,omitempty"`
	Fingerprint  string `json:"fingerprint,omitempty"`
	// IsExtendRequested asks the holder of a cert authenticator to extend its
	// certificate (IsKeyRollRequested: with a new key); set by an admin.
	IsExtendRequested  bool       `json:"isExtendRequested,omitempty"`
	IsKeyRollRequested bool       `json:"isKeyRollRequested,omitempty"`
	ExtendRequestedAt  *time.Time `json:"extendRequestedAt,omitempty"`
}

// APISession is an authenticated session of an identity.
type APISession struct {
	Base
	// TokenHash is the SHA-256 of the token; the token itself is never stored.
	TokenHash       string   `json:"tokenHash"`
	IdentityID      string   `json:"identityId"`
	AuthenticatorID string   `json:"authenticatorId"`
	IPAddress       string   `json:"ipAddress"`
	ConfigTypes     []string `json:"configTypes"`
	IsMfaRequired   bool     `json:"isMfaRequired"`
	IsMfaComplete   bool     `json:"isMfaComplete"`
	// LastMfaAt is when the session last passed a TOTP (or recovery) code; MFA posture checks time from it.
	LastMfaAt            *time.Time  `json:"lastMfaAt,omitempty"`
	CachedLastActivityAt time.Time   `json:"cachedLastActivityAt"`
	AuthQueries          []AuthQuery `json:"authQueries"`
	// EnvInfo and SdkInfo, when reported at authentication, are copied to the identity.
	EnvInfo *EnvInfo `json:"envInfo,omitempty"`
	SdkInfo *SdkInfo `json:"sdkInfo,omitempty"`
}

// AuthQuery is a pending secondary authentication query of an API session.
type AuthQuery struct {
	Format     string `json:"format,omitempty"`
	HTTPMethod string `json:"httpMethod,omitempty"`
	HTTPURL    string `json:"httpUrl,omitempty"`
	MaxLength  int    `json:"maxLength,omitempty"`
	MinLength  int    `json:"minLength,omitempty"`
	Provider   string `json:"provider"`
	TypeID     string `json:"typeId"`
}

// Enrollment is an outstanding way for an identity to get its credential.
type Enrollment struct {
	Base
	IdentityID string    `json:"identityId"`
	Method     string    `json:"method"` // ott, ottca, updb
	CaID       *string   `json:"caId"`
	Username   *string   `json:"username"`
	Token      string    `json:"token"`
	JWT        string    `json:"jwt"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// PostureCheckType is one of the fixed posture check types.
type PostureCheckType struct {
	Base
	Named
	OperatingSystems []OperatingSystem `json:"operatingSystems"`
	Version          string            `json:"version"`
}

// RecordName is the type's name.
func (r *PostureCheckType) RecordName() string { return r.Name }

// OperatingSystem is an OS type with version statements.
type OperatingSystem struct {
	Type     string   `json:"type"`
	Versions []string `json:"versions"`
}

// Setting is a singleton value of the model, such as the PKI state.
type Setting struct {
	Base
	Value []byte `json:"value"`
}

// GetID returns the record's id.
func (b *Base) GetID() string { return b.ID }

// Roles returns the identity's role attributes.
func (r *Identity) Roles() []string { return r.RoleAttributes }

// BaseOf returns the common fields of any record.
func BaseOf(r Record) *Base { return r.base() }
