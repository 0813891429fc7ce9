package api

import (
	"encoding/json"
	"errors"

	"edgectl/fsm"
	"edgectl/store"
)

// maxInt32 bounds the counters of an auth policy.
const maxInt32 = 1<<31 - 1

// nestedError puts the path of the object a validation error happened in
// before the error's field, so nested rules report "primary.updb.maxAttempts".
func nestedError(prefix string, err error) error {
	var ae *apiError
	if errors.As(err, &ae) {
		if fc, ok := ae.cause.(fieldCause); ok {
			return invalidField(prefix+"."+fc.Field, fc.Reason, fc.Value)
		}
	}
	return err
}

// nestedDecoder returns a fCustom decoder of a JSON object with its own
// field list. For create and PUT every required field must be there; for
// PATCH only the fields present are returned, so the store merges them into
// the stored object field by field.
func nestedDecoder(prefix string, fields []field, m mode) func(json.RawMessage) (any, error) {
	return func(raw json.RawMessage) (any, error) {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			return nil, invalidField(prefix, "must be an object", nil)
		}
		p, err := parseFields(obj, fields, m)
		if err != nil {
			return nil, nestedError(prefix, err)
		}
		return p.values, nil
	}
}

// authPolicyFields are the writable fields of an auth policy for a mode.
func authPolicyFields(m mode) []field {
	cert := []field{
		{name: "allowed", kind: fBool, required: true},
		{name: "allowExpiredCerts", kind: fBool, required: true},
	}
	extJwt := []field{
		{name: "allowed", kind: fBool, required: true},
		// null is taken as "no signers", the common way clients send an empty list.
		{name: "allowedSigners", kind: fStringList, required: true, nullable: true, min: 1, def: []string{}},
	}
	updb := []field{
		{name: "allowed", kind: fBool, required: true},
		{name: "lockoutDurationMinutes", kind: fInt, required: true, min: 0, max: maxInt32},
		{name: "maxAttempts", kind: fInt, required: true, min: 0, max: maxInt32},
		{name: "minPasswordLength", kind: fInt, required: true, min: 5, max: 100},
		{name: "requireMixedCase", kind: fBool, required: true},
		{name: "requireNumberChar", kind: fBool, required: true},
		{name: "requireSpecialChar", kind: fBool, required: true},
	}
	primary := []field{
		{name: "cert", kind: fCustom, required: true, custom: nestedDecoder("cert", cert, m)},
		{name: "extJwt", kind: fCustom, required: true, custom: nestedDecoder("extJwt", extJwt, m)},
		{name: "updb", kind: fCustom, required: true, custom: nestedDecoder("updb", updb, m)},
	}
	secondary := []field{
		{name: "requireExtJwtSigner", kind: fString, nullable: true, min: 1},
		{name: "requireTotp", kind: fBool, required: true},
	}
	return []field{
		// The spec makes the PATCH name nullable: null leaves the name as it is
		// (a policy always has a name).
		{name: "name", kind: fString, required: true, min: 1, max: 255, patchNullKeeps: true},
		{name: "primary", kind: fCustom, required: true, custom: nestedDecoder("primary", primary, m), ui: fieldUI{value: map[string]any{
			"cert":   map[string]any{"allowed": true, "allowExpiredCerts": false},
			"extJwt": map[string]any{"allowed": false, "allowedSigners": []string{}},
			"updb": map[string]any{"allowed": true, "lockoutDurationMinutes": 0, "maxAttempts": 0, "minPasswordLength": 5,
				"requireMixedCase": false, "requireNumberChar": false, "requireSpecialChar": false}}}},
		// secondary: null means no secondary factor at all.
		{name: "secondary", kind: fCustom, required: true, nullable: true, custom: nestedDecoder("secondary", secondary, m),
			def: map[string]any{"requireExtJwtSigner": nil, "requireTotp": false}},
		tagsField,
	}
}

func (s *Server) createAuthPolicy(c *call) error {
	return s.createHandler(store.KindAuthPolicy, "auth-policies", authPolicyFields(modeCreate), fsm.CmdAuthPolicyCreate, nil)(c)
}

func (s *Server) updateAuthPolicy(m mode) func(c *call) error {
	return s.updateHandler(store.KindAuthPolicy, authPolicyFields(m), fsm.CmdAuthPolicyUpdate, m, nil)
}

func (s *Server) deleteAuthPolicy(c *call) error { return s.deleteHandler(fsm.CmdAuthPolicyDelete)(c) }

func (s *Server) getAuthPolicy(c *call) error {
	p, err := store.GetAs[*store.AuthPolicy](c.tx, store.KindAuthPolicy, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(authPolicyView(p))
	return nil
}

func (s *Server) listAuthPolicies(c *call) error {
	return c.listKind(store.KindAuthPolicy, false, func(r store.Record) any { return authPolicyView(r.(*store.AuthPolicy)) })
}

// authPolicyView is an auth policy as the Management API shows it.
func authPolicyView(p *store.AuthPolicy) map[string]any {
	pr, u := p.Primary, p.Primary.Updb
	return map[string]any{
		"_links":    selfLinks("auth-policies", p.ID),
		"id":        p.ID,
		"createdAt": p.CreatedAt,
		"updatedAt": p.UpdatedAt,
		"tags":      tagsOrEmpty(p.Tags),
		"name":      p.Name,
		"primary": map[string]any{
			"cert":   map[string]any{"allowed": pr.Cert.Allowed, "allowExpiredCerts": pr.Cert.AllowExpiredCerts},
			"extJwt": map[string]any{"allowed": pr.ExtJwt.Allowed, "allowedSigners": nonNilStrings(pr.ExtJwt.AllowedSigners)},
			"updb": map[string]any{
				"allowed":                u.Allowed,
				"lockoutDurationMinutes": u.LockoutDurationMinutes,
				"maxAttempts":            u.MaxAttempts,
				"minPasswordLength":      u.MinPasswordLength,
				"requireMixedCase":       u.RequireMixedCase,
				"requireNumberChar":      u.RequireNumberChar,
				"requireSpecialChar":     u.RequireSpecialChar,
			},
		},
		"secondary": map[string]any{
			"requireExtJwtSigner": p.Secondary.RequireExtJwtSigner,
			"requireTotp":         p.Secondary.RequireTotp,
		},
	}
}

// authPolicyRoutes are the auth policy operations.
func (s *Server) authPolicyRoutes() []route {
	return crudRoutes("/auth-policies", "AuthPolicy", "AuthPolicies", "Auth Policy", crudOps{list: s.listAuthPolicies, create: s.createAuthPolicy, detail: s.getAuthPolicy, update: s.updateAuthPolicy, del: s.deleteAuthPolicy})
}
