package api

import (
	"edgectl/store"
)

// identityView is the identity as both APIs show it.
func (s *Server) identityView(tx *store.Tx, i *store.Identity) map[string]any {
	authenticators := map[string]any{}
	tx.Each(store.KindAuthenticator, "identity", func(r store.Record) bool {
		a := r.(*store.Authenticator)
		switch a.Method {
		case "updb":
			authenticators["updb"] = map[string]any{"id": a.ID, "username": a.Username}
		case "cert":
			authenticators["cert"] = map[string]any{"id": a.ID, "fingerprint": a.Fingerprint}
		}
		return true
	}, i.ID)
	enrollment := map[string]any{}
	tx.Each(store.KindEnrollment, "identity", func(r store.Record) bool {
		e := r.(*store.Enrollment)
		v := map[string]any{"id": e.ID, "jwt": e.JWT, "token": e.Token, "expiresAt": e.ExpiresAt}
		if e.CaID != nil {
			v["caId"] = *e.CaID
		}
		enrollment[e.Method] = v
		return true
	}, i.ID)
	hasSession := tx.First(store.KindAPISession, "identity", i.ID) != nil
	now := s.now()
	return map[string]any{
		"_links":                    identityLinks(i.ID),
		"id":                        i.ID,
		"createdAt":                 i.CreatedAt,
		"updatedAt":                 i.UpdatedAt,
		"tags":                      tagsOrEmpty(i.Tags),
		"name":                      i.Name,
		"type":                      s.entityRef(tx, store.KindIdentityType, "identity-types", i.TypeID),
		"typeId":                    i.TypeID,
		"isAdmin":                   i.IsAdmin,
		"isDefaultAdmin":            i.IsDefaultAdmin,
		"appData":                   objOrEmpty(i.AppData),
		"authPolicy":                s.entityRef(tx, store.KindAuthPolicy, "auth-policies", i.AuthPolicyID),
		"authPolicyId":              i.AuthPolicyID,
		"authenticators":            authenticators,
		"defaultHostingCost":        i.DefaultHostingCost,
		"defaultHostingPrecedence":  i.DefaultHostingPrecedence,
		"serviceHostingCosts":       intMapOrEmpty(i.ServiceHostingCosts),
		"serviceHostingPrecedences": strMapOrEmpty(i.ServiceHostingPrecedences),
		"disabled":                  identityDisabled(i, now),
		"disabledAt":                i.DisabledAt,
		"disabledUntil":             i.DisabledUntil,
		"enrollment":                enrollment,
		"envInfo":                   i.EnvInfo,
		"sdkInfo":                   i.SdkInfo,
		"externalId":                i.ExternalID,
		"hasApiSession":             hasSession,
		"hasEdgeRouterConnection":   false,
		"isMfaEnabled":              mfaEnabled(tx, i.ID),
		"roleAttributes":            nonNilStrings(i.RoleAttributes),
	}
}

func identityLinks(id string) map[string]any {
	l := selfLinks("identities", id)
	for _, rel := range []string{"authenticators", "enrollments", "edge-routers", "service-policies", "services",
		"edge-router-policies", "service-configs", "failed-service-requests", "posture-data"} {
		l[rel] = map[string]string{"href": "./identities/" + id + "/" + rel}
	}
	return l
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
