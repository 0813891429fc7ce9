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
	{name: "type", to: "typeId", kind: fString, required: true, enum: []string{"User", "Device", "Service", "Router", "Default"},
		ui: fieldUI{value: "Device"}},
	{name: "isAdmin", kind: fBool, required: true},
	{name: "appData", kind: fObject, nullable: true},
	{name: "authPolicyId", kind: fString, nullable: true, min: 1, def: "default", ref: "auth-policies"},
	{name: "defaultHostingCost", kind: fInt, nullable: true, min: 0, max: 65535, def: 0},
	{name: "defaultHostingPrecedence", kind: fString, nullable: true, enum: precedences, def: "default"},
	{name: "externalId", kind: fString, nullable: true, min: 1, max: 1024},
	{name: "roleAttributes", kind: fStringList, nullable: true, min: 1, max: 255},
	{name: "serviceHostingCosts", kind: fIntMap, nullable: true, min: 0, max: 65535},
	{name: "serviceHostingPrecedences", kind: fEnumMap, nullable: true, enum: precedences},
	tagsField,
	{name: "enrollment", kind: fCustom, nullable: true, create: true, custom: decodeIdentityEnrollment,
		ui: fieldUI{label: "Enrollment", help: "ott: a one-time token JWT; updb: a password enrollment for a username"}},
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
	p, err := s.newRecord(c, ident, identityFields, notRouterType)
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

// fill sets the fields of a new record from a validated patch (encoded by
// the API itself, so decoded as the nodes decode their own JSON).
func fill(r store.Record, p store.Patch) error {
	return store.DecodeJSON(p.JSON(), r)
}

func (s *Server) updateIdentity(m mode) func(c *call) error {
	return s.updateHandler(store.KindIdentity, identityFields, fsm.CmdIdentityUpdate, m, func(c *call, p *parsed) error {
		if i, err := store.GetAs[*store.Identity](c.tx, store.KindIdentity, c.param("id")); err == nil && i.TypeID == store.IdentityTypeRouter {
			return nil // the model refuses what a router's identity may not change
		}
		return notRouterType(c, p)
	})
}

// notRouterType refuses an identity of type Router written by a user: only
// an edge router with its tunneler enabled has one (OpenZiti's answer).
func notRouterType(_ *call, p *parsed) error {
	if t, _ := p.values["type"].(string); t == store.IdentityTypeRouter {
		return invalidField("type", "Router is the type of an edge router's tunneler identity, which only its router makes (isTunnelerEnabled)", t)
	}
	return nil
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
	id := c.param("id") // an existing identity (ofExistingRecords)
	lr, err := c.parseList(store.KindAuthenticator.Fields, false)
	if err != nil {
		return err
	}
	recs := ownedRecords(c.tx, store.KindAuthenticator, "identity", id)
	return c.page(lr, recordsSource(recs), len(recs), func(r store.Record) any { return s.authenticatorView(c.tx, r.(*store.Authenticator)) })
}

// identityRoutes are the identity operations.
func (s *Server) identityRoutes() []route {
	return append(crudRoutes("/identities", "Identity", "Identities", "Identity", crudOps{list: s.listIdentities, create: s.createIdentity, detail: s.getIdentity, update: s.updateIdentity, del: s.deleteIdentity}),
		route{managementAPI, get, "/identities/:id/authenticators", "getIdentityAuthenticators", "Identity", admin, s.identityAuthenticators},
		route{managementAPI, post, "/identities/:id/disable", "disableIdentity", "Identity", admin, s.disableIdentity},
		route{managementAPI, post, "/identities/:id/enable", "enableIdentity", "Identity", admin, s.enableIdentity},
		route{managementAPI, put, "/identities/:id/trace", "updateIdentityTracing", "Identity, Tracing", admin, s.traceIdentity},
	)
}

// identity is the identity as both APIs show it. A typed view: identity lists
// are the largest Management answers, and struct encoding avoids the map
// building and key sorting of a map-based view.
type identity struct {
	Links                     identityLinks     `json:"_links"`
	ID                        string            `json:"id"`
	CreatedAt                 string            `json:"createdAt"`
	UpdatedAt                 string            `json:"updatedAt"`
	Tags                      map[string]any    `json:"tags"`
	Name                      string            `json:"name"`
	Type                      *ref              `json:"type"`
	TypeID                    string            `json:"typeId"`
	IsAdmin                   bool              `json:"isAdmin"`
	IsDefaultAdmin            bool              `json:"isDefaultAdmin"`
	AppData                   map[string]any    `json:"appData"`
	AuthPolicy                *ref              `json:"authPolicy"`
	AuthPolicyID              string            `json:"authPolicyId"`
	Authenticators            map[string]any    `json:"authenticators"`
	DefaultHostingCost        int               `json:"defaultHostingCost"`
	DefaultHostingPrecedence  string            `json:"defaultHostingPrecedence"`
	ServiceHostingCosts       map[string]int    `json:"serviceHostingCosts"`
	ServiceHostingPrecedences map[string]string `json:"serviceHostingPrecedences"`
	Disabled                  bool              `json:"disabled"`
	DisabledAt                *time.Time        `json:"disabledAt"`
	DisabledUntil             *time.Time        `json:"disabledUntil"`
	Enrollment                map[string]any    `json:"enrollment"`
	EnvInfo                   *store.EnvInfo    `json:"envInfo"`
	SdkInfo                   *store.SdkInfo    `json:"sdkInfo"`
	ExternalID                *string           `json:"externalId"`
	HasAPISession             bool              `json:"hasApiSession"`
	HasEdgeRouterConnection   bool              `json:"hasEdgeRouterConnection"`
	IsMfaEnabled              bool              `json:"isMfaEnabled"`
	RoleAttributes            []string          `json:"roleAttributes"`
}

// identityLinks are the _links of an identity: itself and its related lists.
type identityLinks struct {
	Self                  href `json:"self"`
	Authenticators        href `json:"authenticators"`
	Enrollments           href `json:"enrollments"`
	EdgeRouters           href `json:"edge-routers"`
	ServicePolicies       href `json:"service-policies"`
	Services              href `json:"services"`
	EdgeRouterPolicies    href `json:"edge-router-policies"`
	ServiceConfigs        href `json:"service-configs"`
	FailedServiceRequests href `json:"failed-service-requests"`
	PostureData           href `json:"posture-data"`
}

func linksOfIdentity(id string) identityLinks {
	base := "./identities/" + id
	return identityLinks{Self: href{base}, Authenticators: href{base + "/authenticators"}, Enrollments: href{base + "/enrollments"},
		EdgeRouters: href{base + "/edge-routers"}, ServicePolicies: href{base + "/service-policies"}, Services: href{base + "/services"},
		EdgeRouterPolicies: href{base + "/edge-router-policies"}, ServiceConfigs: href{base + "/service-configs"},
		FailedServiceRequests: href{base + "/failed-service-requests"}, PostureData: href{base + "/posture-data"}}
}

// identityView builds the view of an identity.
func (s *Server) identityView(tx *store.Tx, i *store.Identity) *identity {
	return s.identityViewAt(tx, i, s.now())
}

// identityViewAt is identityView judging "disabled" at now. appendIdentity
// writes the same answer without building it (identities_json.go).
func (s *Server) identityViewAt(tx *store.Tx, i *store.Identity, now time.Time) *identity {
	return &identity{
		Links: linksOfIdentity(i.ID), ID: i.ID, CreatedAt: jsonTime(i.CreatedAt), UpdatedAt: jsonTime(i.UpdatedAt),
		Tags: tagsOrEmpty(i.Tags), Name: i.Name,
		Type: s.typedRef(tx, store.KindIdentityType, "identity-types", i.TypeID), TypeID: i.TypeID,
		IsAdmin: i.IsAdmin, IsDefaultAdmin: i.IsDefaultAdmin, AppData: objOrEmpty(i.AppData),
		AuthPolicy:   s.typedRef(tx, store.KindAuthPolicy, "auth-policies", i.AuthPolicyID),
		AuthPolicyID: i.AuthPolicyID, Authenticators: objOrEmpty(identityAuthenticators(tx, i.ID)),
		DefaultHostingCost: i.DefaultHostingCost, DefaultHostingPrecedence: i.DefaultHostingPrecedence,
		ServiceHostingCosts: intMapOrEmpty(i.ServiceHostingCosts), ServiceHostingPrecedences: strMapOrEmpty(i.ServiceHostingPrecedences),
		Disabled: identityDisabled(i, now), DisabledAt: i.DisabledAt, DisabledUntil: i.DisabledUntil,
		Enrollment: objOrEmpty(identityEnrollments(tx, i.ID)), EnvInfo: i.EnvInfo, SdkInfo: i.SdkInfo, ExternalID: i.ExternalID,
		HasAPISession: tx.First(store.KindAPISession, "identity", i.ID) != nil,
		IsMfaEnabled:  mfaEnabled(tx, i.ID), RoleAttributes: nonNilStrings(i.RoleAttributes),
	}
}

// identityAuthenticators is the authenticators object of an identity's view
// (method → id and username or fingerprint), nil when it has none.
func identityAuthenticators(tx *store.Tx, identityID string) map[string]any {
	var out map[string]any
	tx.Each(store.KindAuthenticator, "identity", func(r store.Record) bool {
		a := r.(*store.Authenticator)
		var v map[string]any
		switch a.Method {
		case "updb":
			v = map[string]any{"id": a.ID, "username": a.Username}
		case "cert":
			v = map[string]any{"id": a.ID, "fingerprint": a.Fingerprint}
		default:
			return true
		}
		if out == nil {
			out = map[string]any{}
		}
		out[a.Method] = v
		return true
	}, identityID)
	return out
}

// identityEnrollments is the enrollment object of an identity's view
// (method → the pending enrollment), nil when it has none.
func identityEnrollments(tx *store.Tx, identityID string) map[string]any {
	var out map[string]any
	tx.Each(store.KindEnrollment, "identity", func(r store.Record) bool {
		e := r.(*store.Enrollment)
		v := map[string]any{"id": e.ID, "jwt": e.JWT, "token": e.Token, "expiresAt": e.ExpiresAt}
		if e.CaID != nil {
			// Spec: ottca {ca EntityRef, caId, expiresAt, id, jwt, token}.
			ca := &ref{Links: linkTo("cas", *e.CaID), Entity: "cas", ID: *e.CaID}
			if rec, err := tx.Get(store.KindCA, *e.CaID); err == nil {
				ca.Name = rec.RecordName()
			}
			v["caId"], v["ca"] = *e.CaID, ca
		}
		if out == nil {
			out = map[string]any{}
		}
		out[e.Method] = v
		return true
	}, identityID)
	return out
}

// traceBody is the trace request.
type traceBody struct {
	Channels []string `json:"channels"`
	Duration *string  `json:"duration"`
	Enabled  *bool    `json:"enabled"`
	TraceID  *string  `json:"traceId"`
}

// maxTrace bounds how long tracing may be turned on at once.
const maxTrace = 24 * time.Hour

// traceIdentity turns tracing of an identity's data flow on (for a duration,
// default ten minutes) or off.
func (s *Server) traceIdentity(c *call) error {
	id := c.param("id")
	if !c.tx.Exists(store.KindIdentity, id) {
		return notFound("identity", id)
	}
	var b traceBody
	if err := decodeInto(c.r, &b); err != nil {
		return err
	}
	if b.Enabled == nil {
		return invalidField("enabled", "is required", nil)
	}
	d := 10 * time.Minute
	if b.Duration != nil && *b.Duration != "" {
		var err error
		if d, err = time.ParseDuration(*b.Duration); err != nil || d <= 0 || d > maxTrace {
			return invalidField("duration", "must be a duration such as 10m, greater than 0 and at most 24h", *b.Duration)
		}
	}
	for i, ch := range b.Channels {
		if ch == "" {
			return invalidField("channels", "channel names must not be empty", i)
		}
	}
	now := s.now()
	spec := &store.TraceSpec{Enabled: *b.Enabled, Channels: nonNilStrings(b.Channels)}
	if b.TraceID != nil && *b.TraceID != "" {
		spec.TraceID = *b.TraceID
	} else if spec.Enabled {
		spec.TraceID = newUUID()
	}
	if spec.Enabled {
		spec.Until = now.Add(d)
	} else {
		spec.Until = now
	}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdIdentityTrace, fsm.Trace{ID: id, Spec: spec, At: now}); err != nil {
		return err
	}
	c.ok(map[string]any{"enabled": spec.Enabled, "traceId": spec.TraceID, "until": spec.Until})
	return nil
}
