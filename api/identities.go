package api

import (
	"encoding/json"
	"time"

	"edgectl/fsm"
	"edgectl/store"
)

var precedences = []string{"default", "required", "failed"}

// identityFields are the writable fields of an identity.
var identityFields = []field{
	{name: "name", kind: fString, required: true, min: 1, max: 255},
	{name: "type", to: "typeId", kind: fString, required: true, enum: []string{"User", "Device", "Service", "Router"}},
	{name: "isAdmin", kind: fBool, required: true},
	{name: "appData", kind: fObject, nullable: true},
	{name: "authPolicyId", kind: fString, nullable: true, min: 1, def: "default"},
	{name: "defaultHostingCost", kind: fInt, nullable: true, min: 0, max: 65535, def: 0},
	{name: "defaultHostingPrecedence", kind: fString, nullable: true, enum: precedences, def: "default"},
	{name: "externalId", kind: fString, nullable: true, min: 1, max: 1024},
	{name: "roleAttributes", kind: fStringList, nullable: true, min: 1, max: 255},
	{name: "serviceHostingCosts", kind: fIntMap, nullable: true, min: 0, max: 65535},
	{name: "serviceHostingPrecedences", kind: fEnumMap, nullable: true, enum: precedences},
	tagsField,
	{name: "enrollment", kind: fCustom, nullable: true, create: true, custom: decodeIdentityEnrollment},
}

// identityEnrollment is the enrollment part of an identity create body.
type identityEnrollment struct {
	Ott   bool    `json:"ott"`
	Ottca *string `json:"ottca"`
	Updb  *string `json:"updb"`
}

func decodeIdentityEnrollment(raw json.RawMessage) (any, error) {
	var e identityEnrollment
	if err := unmarshalField("enrollment", raw, &e); err != nil {
		return nil, err
	}
	if e.Updb != nil {
		if err := checkLen("enrollment.updb", *e.Updb, 4, 100); err != nil {
			return nil, err
		}
	}
	if e.Ott && e.Ottca != nil {
		return nil, invalidField("enrollment", "ott and ottca cannot both be requested", nil)
	}
	return &e, nil
}

// enrollmentDuration is how long an enrollment made with an identity stays valid.
const enrollmentDuration = 24 * time.Hour

func (s *Server) createIdentity(c *call) error {
	ident := &store.Identity{}
	p, err := s.newRecord(c, ident, identityFields)
	if err != nil {
		return err
	}
	now := ident.CreatedAt
	var enrollments []*store.Enrollment
	if e, _ := p.values["enrollment"].(*identityEnrollment); e != nil {
		if enrollments, err = s.newIdentityEnrollments(c, ident.ID, e, now); err != nil {
			return err
		}
	}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdIdentityCreate, fsm.IdentityCreate{Identity: ident, Enrollments: enrollments}); err != nil {
		return err
	}
	c.created("identities", ident.ID)
	return nil
}

// fill sets the fields of a new record from a validated patch.
func fill(r store.Record, p store.Patch) error {
	return json.Unmarshal(p.JSON(), r)
}

func (s *Server) updateIdentity(m mode) func(c *call) error {
	return s.updateHandler(store.KindIdentity, identityFields, fsm.CmdIdentityUpdate, m)
}

func (s *Server) deleteIdentity(c *call) error { return s.deleteHandler(fsm.CmdIdentityDelete)(c) }

func (s *Server) getIdentity(c *call) error {
	i, err := store.GetAs[*store.Identity](c.tx, store.KindIdentity, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(s.identityView(c.tx, i))
	return nil
}

// disableBody is the disable request.
type disableBody struct {
	DurationMinutes *int64 `json:"durationMinutes"`
}

// disableIdentity disables an identity for durationMinutes (0: until enabled)
// and ends its API sessions.
func (s *Server) disableIdentity(c *call) error {
	var b disableBody
	if err := decodeInto(c.r, &b); err != nil {
		return err
	}
	if b.DurationMinutes == nil {
		return invalidField("durationMinutes", "is required", nil)
	}
	if *b.DurationMinutes < 0 || *b.DurationMinutes > 100*365*24*60 {
		return invalidField("durationMinutes", "must be between 0 (until enabled) and 52560000", *b.DurationMinutes)
	}
	now := s.now()
	var until *time.Time
	if *b.DurationMinutes > 0 {
		u := now.Add(time.Duration(*b.DurationMinutes) * time.Minute)
		until = &u
	}
	_, err := s.Writer.Do(c.r.Context(), fsm.CmdIdentityDisable, fsm.Disable{ID: c.param("id"), At: now, Until: until})
	return err
}

func (s *Server) enableIdentity(c *call) error {
	_, err := s.Writer.Do(c.r.Context(), fsm.CmdIdentityEnable, fsm.Disable{ID: c.param("id"), At: s.now()})
	return err
}

// identityAuthenticators lists the authenticators of an identity.
func (s *Server) identityAuthenticators(c *call) error {
	id := c.param("id")
	if !c.tx.Exists(store.KindIdentity, id) {
		return notFound("identity", id)
	}
	lr, err := c.parseList(store.KindAuthenticator.Fields, false)
	if err != nil {
		return err
	}
	recs := ownedRecords(c.tx, store.KindAuthenticator, "identity", id)
	return c.page(lr, recordsSource(recs), len(recs), func(r store.Record) any { return s.authenticatorView(c.tx, r.(*store.Authenticator)) })
}

func (s *Server) getCurrentIdentity(c *call) error {
	c.ok(s.identityView(c.tx, c.identity))
	return nil
}

// identityRoutes are the identity operations.
func (s *Server) identityRoutes() []route {
	return []route{
		// Identities
		{managementAPI, get, "/identities", "listIdentities", "Identity", admin, s.listIdentities},
		{managementAPI, post, "/identities", "createIdentity", "Identity", admin, s.createIdentity},
		{managementAPI, get, "/identities/:id", "detailIdentity", "Identity", admin, s.getIdentity},
		{managementAPI, put, "/identities/:id", "updateIdentity", "Identity", admin, s.updateIdentity(modePut)},
		{managementAPI, patch, "/identities/:id", "patchIdentity", "Identity", admin, s.updateIdentity(modePatch)},
		{managementAPI, del, "/identities/:id", "deleteIdentity", "Identity", admin, s.deleteIdentity},
		{managementAPI, get, "/identities/:id/authenticators", "getIdentityAuthenticators", "Identity", admin, s.identityAuthenticators},
		{managementAPI, post, "/identities/:id/disable", "disableIdentity", "Identity", admin, s.disableIdentity},
		{managementAPI, post, "/identities/:id/enable", "enableIdentity", "Identity", admin, s.enableIdentity},
		{managementAPI, put, "/identities/:id/trace", "updateIdentityTracing", "Identity, Tracing", admin, s.traceIdentity},
	}
}
