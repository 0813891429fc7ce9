package store

import "edgectl/store/filter"

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

var postureCheckFields = map[string]filter.Field{
	"roleAttributes": {Type: filter.StringList, Get: func(r any) any { return r.(*PostureCheck).RoleAttributes }},
	"typeId":         {Type: filter.String, Get: func(r any) any { return r.(*PostureCheck).TypeID }},
	"version":        {Type: filter.Number, Get: func(r any) any { return r.(*PostureCheck).Version }},
}
