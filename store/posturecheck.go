package store

import (
	"fmt"
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

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

var postureCheckFilterFields = map[string]filter.Field{
	"roleAttributes": filter.StringListField(func(r any) []string { return r.(*PostureCheck).RoleAttributes }),
	"typeId":         filter.StringField(func(r any) string { return r.(*PostureCheck).TypeID }),
	"version":        filter.IntField(func(r any) int64 { return r.(*PostureCheck).Version }),
}

// CreatePostureCheck adds a posture check at version 1.
func (tx *Tx) CreatePostureCheck(c *PostureCheck) error {
	if !tx.Exists(KindPostureCheckType, c.TypeID) {
		return Invalid("typeId", "no posture check type with this id", c.TypeID)
	}
	c.Version = 1
	return tx.Insert(KindPostureCheck, c)
}

// UpdatePostureCheck applies a PUT or PATCH to a posture check. Every change
// raises the version by one, so a client can tell that what it evaluated
// against is out of date. The type is fixed at create: the fields of one
// type mean nothing to another.
func (tx *Tx) UpdatePostureCheck(id string, p Patch, at time.Time) error {
	_, _, err := tx.Update(KindPostureCheck, id, p, at, func(old, upd Record) error {
		o, n := old.(*PostureCheck), upd.(*PostureCheck)
		if n.TypeID != o.TypeID {
			return Invalid("typeId", fmt.Sprintf("the type of a posture check cannot change (it is %s)", o.TypeID), n.TypeID)
		}
		n.Version = o.Version + 1
		return nil
	})
	return err
}

// DeletePostureCheck removes a posture check; service policies that name it
// by @id lose that entry, and those that select it by attribute simply stop
// selecting it.
func (tx *Tx) DeletePostureCheck(id string) error {
	if _, err := tx.Get(KindPostureCheck, id); err != nil {
		return err
	}
	if err := tx.dropRoleRefs(KindPostureCheck, id); err != nil {
		return err
	}
	return tx.Remove(KindPostureCheck, id)
}

// KindPostureCheck is the kind of PostureCheck records.
var KindPostureCheck = &Kind{Table: "postureChecks", Entity: "posture check", Named: true,
	new: func() Record { return &PostureCheck{} }, indexes: []*memdb.IndexSchema{rolesIndex()},
	Fields: namedFields(postureCheckFilterFields)}
