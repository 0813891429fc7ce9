package ziti

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"
	"time"

	"edgectl/pki"

	"github.com/golang-jwt/jwt/v5"
	"github.com/openziti/ziti/common"
)

// edgectl's API session and service session tokens, read as OpenZiti's
// router reads them (router/state/manager.go: ParseApiSessionJwt and
// ParseServiceSessionJwt): its claim types, its checks.
func TestTokensAreReadAsOpenZitiRoutersReadThem(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(tok *jwt.Token) (any, error) {
		if tok.Header["kid"] != "k1" {
			t.Errorf("kid %v, want k1", tok.Header["kid"])
		}
		return key.Public(), nil
	}
	now := time.Now()
	api, err := pki.SignAPIAccess(key, "k1", pki.APIAccess{Issuer: "https://ctrl", IdentityID: "ident1", APISessionID: "as1",
		CertFingerprints: []string{"ab12"}, IssuedAt: now, ExpiresAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	access := &common.AccessClaims{}
	parsed, err := jwt.ParseWithClaims(api, access, lookup)
	if err != nil || !parsed.Valid {
		t.Fatalf("the router refuses the API session token: %v", err)
	}
	sub, _ := access.GetSubject()
	if !access.HasAudience(common.ClaimAudienceOpenZiti) || access.Type != common.TokenTypeAccess || sub != "ident1" ||
		access.ApiSessionId != "as1" || len(access.CertFingerprints) != 1 || access.CertFingerprints[0] != "ab12" {
		t.Errorf("the router reads the API session token as %+v", access)
	}

	svc, err := pki.SignServiceAccess(key, "k1", pki.ServiceAccess{Issuer: "https://ctrl", ServiceID: "svc1", SessionID: "s1",
		APISessionID: "as1", IdentityID: "ident1", Type: common.ServiceSessionTypeDial, IssuedAt: now, ExpiresAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	service := &common.ServiceAccessClaims{}
	if _, err := jwt.ParseWithClaims(svc, service, lookup); err != nil {
		t.Fatalf("the router refuses the service session token: %v", err)
	}
	if service.TokenType != common.TokenTypeServiceAccess || service.ApiSessionId != "as1" || service.IdentityId != "ident1" ||
		service.Subject != "svc1" || service.Type != common.ServiceSessionTypeDial {
		t.Errorf("the router reads the service session token as %+v", service)
	}

	// An expired API session token is refused, as routers refuse it.
	old, err := pki.SignAPIAccess(key, "k1", pki.APIAccess{IdentityID: "ident1", APISessionID: "as1", IssuedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jwt.ParseWithClaims(old, &common.AccessClaims{}, lookup); err == nil {
		t.Error("the router accepts an expired API session token")
	}
}
