package store

import (
	"encoding/json"
	"fmt"
	"time"

	"edgectl/store/filter"
)

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

// KindAuthPolicy is the kind of AuthPolicy records.
var KindAuthPolicy = &Kind{Table: "authPolicies", Entity: "auth policy", Named: true,
	new: func() Record { return &AuthPolicy{} }, Fields: namedFields(map[string]filter.Field{
		// OpenZiti's reference to the external JWT signer a policy requires.
		"secondary.requireExtJwtSigner": refField("authPolicies",
			optIDOf(func(r any) *string { return r.(*AuthPolicy).Secondary.RequireExtJwtSigner }),
			func() *filter.Schema { return KindExternalJWTSigner.Fields }, KindExternalJWTSigner),
	})}

// DefaultAuthPolicyID is the id of the system auth policy made at bootstrap.
const DefaultAuthPolicyID = "default"

// usesSigner reports whether the policy names the external JWT signer id.
func (r *AuthPolicy) usesSigner(id string) bool {
	if r.Secondary.RequireExtJwtSigner != nil && *r.Secondary.RequireExtJwtSigner == id {
		return true
	}
	for _, s := range r.Primary.ExtJwt.AllowedSigners {
		if s == id {
			return true
		}
	}
	return false
}

// checkAuthPolicyRefs verifies that the signers a policy names exist.
func (tx *Tx) checkAuthPolicyRefs(p *AuthPolicy) error {
	for i, s := range p.Primary.ExtJwt.AllowedSigners {
		if !tx.Exists(KindExternalJWTSigner, s) {
			return Invalid(fmt.Sprintf("primary.extJwt.allowedSigners[%d]", i), "no external JWT signer with this id", s)
		}
	}
	if s := p.Secondary.RequireExtJwtSigner; s != nil && !tx.Exists(KindExternalJWTSigner, *s) {
		return Invalid("secondary.requireExtJwtSigner", "no external JWT signer with this id", *s)
	}
	return nil
}

// CreateAuthPolicy adds an auth policy.
func (tx *Tx) CreateAuthPolicy(p *AuthPolicy) error {
	if err := tx.checkAuthPolicyRefs(p); err != nil {
		return err
	}
	return tx.Insert(KindAuthPolicy, p)
}

// nestedPatchFields are the object fields of an auth policy that a patch
// merges into field by field instead of replacing.
var nestedPatchFields = map[string]bool{"primary": true, "secondary": true}

// UpdateAuthPolicy applies a PUT or PATCH. primary and secondary are merged
// key by key at any depth (arrays and scalars replace), so a PATCH of
// primary.updb.maxAttempts keeps every other rule as the log has it; a PUT
// carries complete objects, which the merge turns into a replacement.
func (tx *Tx) UpdateAuthPolicy(id string, p Patch, at time.Time) error {
	old, err := GetAs[*AuthPolicy](tx, KindAuthPolicy, id)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(old)
	if err != nil {
		return fmt.Errorf("store: patch auth policy: %w", err)
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("store: patch auth policy: %w", err)
	}
	for name, v := range p {
		switch {
		case name == "id" || name == "createdAt" || name == "updatedAt":
		case nestedPatchFields[name]:
			fields[name] = mergeJSON(fields[name], v)
		default:
			fields[name] = v
		}
	}
	raw, err = json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("store: patch auth policy: %w", err)
	}
	n := &AuthPolicy{}
	if err := json.Unmarshal(raw, n); err != nil {
		return Invalid("body", err.Error(), nil)
	}
	n.ID, n.CreatedAt, n.UpdatedAt = old.ID, old.CreatedAt, at
	if err := tx.checkAuthPolicyRefs(n); err != nil {
		return err
	}
	return tx.Replace(KindAuthPolicy, n)
}

// mergeJSON merges patch into base when both are objects, key by key and
// recursively; otherwise patch replaces base (null included, which resets a
// nested object to its zero value).
func mergeJSON(base, patch json.RawMessage) json.RawMessage {
	var b, p map[string]json.RawMessage
	if json.Unmarshal(base, &b) != nil || json.Unmarshal(patch, &p) != nil || b == nil || p == nil {
		return patch
	}
	for k, v := range p {
		if old, ok := b[k]; ok {
			b[k] = mergeJSON(old, v)
		} else {
			b[k] = v
		}
	}
	out, err := json.Marshal(b)
	if err != nil {
		return patch
	}
	return out
}

// DeleteAuthPolicy removes an auth policy that no identity uses. The default
// policy cannot go: identities without a policy fall back to it.
func (tx *Tx) DeleteAuthPolicy(id string) error {
	p, err := GetAs[*AuthPolicy](tx, KindAuthPolicy, id)
	if err != nil {
		return err
	}
	if id == DefaultAuthPolicyID {
		return Invalid("id", "the default auth policy cannot be deleted", id)
	}
	if i := tx.First(KindIdentity, "authPolicy", id); i != nil {
		return Referenced("the auth policy %q is used by identity %q", p.Name, i.RecordName())
	}
	return tx.Remove(KindAuthPolicy, id)
}
