package api

import (
	"time"

	"edgectl/store"
)

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

// ref is a typed EntityRef: {_links, entity, id, name}.
type ref struct {
	Links  selfLink `json:"_links"`
	Entity string   `json:"entity"`
	ID     string   `json:"id"`
	Name   string   `json:"name"`
}

func (s *Server) typedRef(tx *store.Tx, k *store.Kind, path, id string) *ref {
	if id == "" {
		return nil
	}
	r := &ref{Links: linkTo(path, id), Entity: path, ID: id}
	if rec, err := tx.Get(k, id); err == nil {
		r.Name = rec.RecordName()
	}
	return r
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

// authenticatorView is an authenticator without its secret.
func (s *Server) authenticatorView(tx *store.Tx, a *store.Authenticator) map[string]any {
	return map[string]any{
		"_links":      selfLinks("authenticators", a.ID),
		"id":          a.ID,
		"createdAt":   a.CreatedAt,
		"updatedAt":   a.UpdatedAt,
		"tags":        tagsOrEmpty(a.Tags),
		"method":      a.Method,
		"identityId":  a.IdentityID,
		"identity":    s.entityRef(tx, store.KindIdentity, "identities", a.IdentityID),
		"username":    a.Username,
		"certPem":     a.CertPem,
		"fingerprint": a.Fingerprint,
	}
}

func objOrEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func intMapOrEmpty(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

func strMapOrEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
