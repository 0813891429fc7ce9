package api

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// Validity of the certificates the controller issues from CSRs.
const (
	// identityCertValidity: ott enrollment and authenticator extension.
	identityCertValidity = 365 * 24 * time.Hour
	// routerCertValidity: router enrollment and extension, client and server certificates.
	routerCertValidity = 365 * 24 * time.Hour
	// sessionCertValidity: ephemeral API session certificates.
	sessionCertValidity = 12 * time.Hour
)

// issuedCert is a certificate the controller issued from a CSR.
type issuedCert struct {
	leaf        *x509.Certificate
	leafPEM     string
	chainPEM    string // the leaf, then the intermediate: what a peer needs to reach the root
	fingerprint string
}

// issueFromCSR issues a certificate with common name cn for the PEM request csr,
// the body field named field. A request that does not parse, is not signed
// by its key, or has an unsupported key type is a 400 on that field.
func issueFromCSR(a *pki.Authority, now time.Time, field, csr, cn string, validity time.Duration, usage pki.Usage, uris ...*url.URL) (*issuedCert, error) {
	leafPEM, err := a.SignCSR(now, []byte(csr), cn, validity, usage, uris...)
	if errors.Is(err, pki.ErrBadCSR) || errors.Is(err, pki.ErrBadPEM) || errors.Is(err, pki.ErrUnsupportedKey) {
		return nil, invalidField(field, "must be a PEM certificate request signed by its RSA, ECDSA or Ed25519 key: "+err.Error(), nil)
	}
	if err != nil {
		return nil, err
	}
	certs, err := pki.ParseCertsPEM(leafPEM)
	if err != nil {
		return nil, err
	}
	return &issuedCert{leaf: certs[0], leafPEM: string(leafPEM), chainPEM: string(leafPEM) + string(a.ChainPEM()),
		fingerprint: pki.Fingerprint(certs[0])}, nil
}

// enrollTokenPattern is the form of enrollment tokens: a UUID.
var enrollTokenPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// enrollToken returns the one-time token of an enrollment request: the query
// parameter token (what clients send: the enrollment JWT's jti), else the
// token field of a JSON body (body may be nil).
func enrollToken(c *call, body map[string]json.RawMessage) (string, error) {
	t := c.r.URL.Query().Get("token")
	if raw, ok := body["token"]; t == "" && ok {
		if err := unmarshalField("token", raw, &t); err != nil {
			return "", err
		}
	}
	if t == "" {
		return "", invalidField("token", "is required: the query parameter token (the jti of the enrollment JWT)", nil)
	}
	if !enrollTokenPattern.MatchString(t) {
		return "", invalidField("token", "must be a UUID", t)
	}
	return t, nil
}

// enrollmentNotFound is the answer for a token that finds no outstanding
// enrollment. Unknown, used and expired tokens are not told apart.
func enrollmentNotFound() *apiError {
	return &apiError{status: http.StatusNotFound, code: codeNotFound,
		message: "no outstanding enrollment has this token: it is unknown, used already or expired"}
}

// outstandingEnrollment finds the unexpired enrollment of token; its method
// must be method (a token of another method is a 400 naming the right path).
func outstandingEnrollment(tx *store.Tx, token, method string, now time.Time) (*store.Enrollment, error) {
	r := tx.First(store.KindEnrollment, "token", token)
	if r == nil {
		return nil, enrollmentNotFound()
	}
	e := r.(*store.Enrollment)
	if !e.ExpiresAt.After(now) {
		return nil, enrollmentNotFound()
	}
	if e.Method != method {
		return nil, invalidField("token", fmt.Sprintf("belongs to a %s enrollment: use /enroll/%s", e.Method, e.Method), nil)
	}
	return e, nil
}

// enrollmentOf reads the token of an enrollment request and finds its
// outstanding enrollment of method, at the time the request is judged.
func (s *Server) enrollmentOf(c *call, body map[string]json.RawMessage, method string) (*store.Enrollment, time.Time, error) {
	token, err := enrollToken(c, body)
	if err != nil {
		return nil, time.Time{}, err
	}
	now := s.now()
	e, err := outstandingEnrollment(c.tx, token, method, now)
	if err != nil && c.rejudge() {
		// An enrollment made through another node a moment ago.
		e, err = outstandingEnrollment(c.tx, token, method, now)
	}
	return e, now, err
}

// consumeEnrollment proposes the one command of an identity enrollment: the
// enrollment is removed and a takes its place.
func (s *Server) consumeEnrollment(c *call, e *store.Enrollment, a *store.Authenticator, now time.Time) error {
	_, err := s.Writer.Do(c.r.Context(), fsm.CmdEnrollmentConsume,
		fsm.EnrollmentConsume{EnrollmentID: e.ID, Token: e.Token, Authenticator: a, At: now})
	return err
}

// newEnrolledAuthenticator starts an authenticator of identityID made now.
func newEnrolledAuthenticator(identityID, method string, now time.Time) *store.Authenticator {
	return &store.Authenticator{Base: store.Base{ID: auth.NewID(), CreatedAt: now, UpdatedAt: now}, IdentityID: identityID, Method: method}
}

// readEnrollCSR reads the body of an ott enrollment: the PEM CSR itself
// (application/x-pem-file or text/plain), or a JSON object {"csr", "token"}.
func readEnrollCSR(c *call) (string, map[string]json.RawMessage, error) {
	b, err := readBody(c.r, maxBody)
	if err != nil {
		return "", nil, err
	}
	b = bytes.TrimSpace(b)
	var body map[string]json.RawMessage
	csr := string(b)
	if len(b) > 0 && b[0] == '{' {
		if err := json.Unmarshal(b, &body); err != nil {
			return "", nil, badBody("the request body is not valid JSON: %v", err)
		}
		csr = ""
		if raw, ok := body["csr"]; ok {
			if err := unmarshalField("csr", raw, &csr); err != nil {
				return "", nil, err
			}
		}
	}
	if strings.TrimSpace(csr) == "" {
		return "", nil, invalidField("csr", `is required: send the PEM certificate request as the body, or {"csr": PEM}`, nil)
	}
	return csr, body, nil
}

// enrollOtt enrolls an identity with a one-time token and a CSR: the
// certificate (CN = identity id) is returned as PEM, or as {cert} in a JSON
// envelope when the client accepts application/json.
func (s *Server) enrollOtt(c *call) error {
	csr, body, err := readEnrollCSR(c)
	if err != nil {
		return err
	}
	e, now, err := s.enrollmentOf(c, body, "ott")
	if err != nil {
		return err
	}
	a, err := s.authority(c.tx)
	if err != nil {
		return err
	}
	cert, err := issueFromCSR(a, now, "csr", csr, e.IdentityID, identityCertValidity, pki.UsageClient)
	if err != nil {
		return err
	}
	au := newEnrolledAuthenticator(e.IdentityID, "cert", now)
	au.CertPem, au.Fingerprint = cert.leafPEM, cert.fingerprint
	if err := s.consumeEnrollment(c, e, au, now); err != nil {
		return err
	}
	if strings.Contains(c.r.Header.Get("Accept"), "application/json") {
		c.ok(map[string]any{"cert": cert.chainPEM})
		return nil
	}
	c.wrote = true
	c.w.Header().Set("Content-Type", "application/x-pem-file")
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write([]byte(cert.chainPEM))
	return nil
}

// requireClientCert returns the TLS client certificates of the request; without
// one, the operation cannot know who is asking (401).
func requireClientCert(c *call) ([]*x509.Certificate, error) {
	certs := peerCerts(c.r)
	if len(certs) == 0 {
		return nil, unauthorized("this operation needs a TLS client certificate")
	}
	return certs, nil
}

// enrollOttCA enrolls an identity with a one-time token and the TLS client
// certificate, which the enrollment's CA must have signed. No CSR.
func (s *Server) enrollOttCA(c *call) error {
	body, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	e, now, err := s.enrollmentOf(c, body, "ottca")
	if err != nil {
		return err
	}
	certs, err := requireClientCert(c)
	if err != nil {
		return err
	}
	if e.CaID == nil {
		return invalidField("token", "the enrollment names no CA", nil)
	}
	if reason := ottCAProblem(c.tx, *e.CaID); reason != "" {
		return invalidField("token", "the enrollment's CA can no longer enroll: "+reason, nil)
	}
	ca, _ := store.GetAs[*store.CA](c.tx, store.KindCA, *e.CaID)
	caCert, err := firstCert(ca.CertPem)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	if err := pki.VerifyClientChain(certs, pool, now, false); err != nil {
		return unauthorized("the TLS client certificate is not a valid certificate of the enrollment's CA")
	}
	au := newEnrolledAuthenticator(e.IdentityID, "cert", now)
	au.CertPem, au.Fingerprint = string(certToPEM(certs[0])), pki.Fingerprint(certs[0])
	return s.consumeEnrollment(c, e, au, now)
}

// enrollUpdb enrolls an identity with a one-time token and a password for
// the enrollment's username; the identity's auth policy rules apply.
func (s *Server) enrollUpdb(c *call) error {
	body, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	p, err := parseFields(body, []field{{name: "password", kind: fString, required: true}}, modeCreate)
	if err != nil {
		return err
	}
	e, now, err := s.enrollmentOf(c, body, "updb")
	if err != nil {
		return err
	}
	ident, err := store.GetAs[*store.Identity](c.tx, store.KindIdentity, e.IdentityID)
	if err != nil {
		return enrollmentNotFound()
	}
	pw := p.values["password"].(string)
	if err := checkPassword("password", pw, s.authPolicyOf(c.tx, ident)); err != nil {
		return err
	}
	au := newEnrolledAuthenticator(e.IdentityID, "updb", now)
	if e.Username != nil {
		au.Username = *e.Username
	}
	if au.PasswordHash, err = s.Hasher.Hash(c.r.Context(), pw); err != nil {
		return err
	}
	return s.consumeEnrollment(c, e, au, now)
}

// enrollAny serves POST /enroll: the method is the query parameter method,
// or the method of the enrollment the token finds.
func (s *Server) enrollAny(c *call) error {
	q := c.r.URL.Query()
	method := q.Get("method")
	if tok := q.Get("token"); method == "" && tok != "" {
		if c.tx.First(store.KindEnrollment, "token", tok) == nil && c.tx.RouterByEnrollmentToken(tok) == nil {
			c.rejudge() // an enrollment made through another node a moment ago
		}
		if r := c.tx.First(store.KindEnrollment, "token", tok); r != nil {
			method = r.(*store.Enrollment).Method
		} else if c.tx.RouterByEnrollmentToken(tok) != nil {
			method = routerEnrollMethod
		} else {
			return enrollmentNotFound()
		}
	}
	switch method {
	case "ott":
		return s.enrollOtt(c)
	case "ottca":
		return s.enrollOttCA(c)
	case "updb":
		return s.enrollUpdb(c)
	case "ca":
		return s.enrollCA(c)
	case routerEnrollMethod:
		return s.enrollRouter(c)
	case "":
		return invalidField("method", "is required unless the query parameter token is given", nil)
	}
	return invalidField("method", "must be one of ott, ottca, updb, ca, erott", method)
}

// enrollmentJWKS answers the public key(s) that sign enrollment JWTs as a
// JSON Web Key Set (the bare set, not an envelope), so clients can verify
// an enrollment JWT before they trust it.
func (s *Server) enrollmentJWKS(c *call) error {
	a, err := s.authority(c.tx)
	if err != nil {
		return err
	}
	// The authority's key verifies JWTs made before nodes signed with their
	// API server keys; then every node's key, this one's first.
	own, err := a.AuthorityJWK()
	if err != nil {
		return err
	}
	keys := []json.RawMessage{own}
	if s.jwtJWK != nil {
		keys = append(keys, s.jwtJWK)
	}
	c.tx.Controllers(func(ctrl *store.Controller) bool {
		if len(ctrl.JWK) > 0 && !slices.ContainsFunc(keys, func(k json.RawMessage) bool { return bytes.Equal(k, ctrl.JWK) }) {
			keys = append(keys, ctrl.JWK)
		}
		return true
	})
	body, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		return err
	}
	c.wrote = true
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(body)
	return nil
}

// listNetworkJWTs answers the network JWT: signed like enrollment JWTs,
// method "network", no subject or token, valid as long as the intermediate
// CA. A client imports it to learn the controllers and the signing key.
func (s *Server) listNetworkJWTs(c *call) error {
	a, err := s.authority(c.tx)
	if err != nil {
		return err
	}
	jwt, err := s.signEnrollmentJWT(a, pki.EnrollmentClaims{Method: "network",
		ExpiresAt: a.Intermediates()[0].NotAfter, Controllers: s.controllerURLs()})
	if err != nil {
		return err
	}
	c.okMeta([]any{map[string]any{"name": "default", "token": jwt}},
		map[string]any{"pagination": map[string]any{"limit": 1, "offset": 0, "totalCount": 1}})
	return nil
}

// enrollRoutes are the Client API enrollment flows.
func (s *Server) enrollRoutes() []route {
	return []route{
		{clientAPI, post, "/enroll", "enroll", "Enroll", public, s.enrollAny},
		{clientAPI, post, "/enroll/ott", "enrollOtt", "Enroll", public, s.enrollOtt},
		{clientAPI, post, "/enroll/ottca", "enrollOttCa", "Enroll", public, s.enrollOttCA},
		{clientAPI, post, "/enroll/updb", "enrollUpdb", "Enroll", public, s.enrollUpdb},
		{clientAPI, post, "/enroll/ca", "enrollCa", "Enroll", public, s.enrollCA},
		{clientAPI, post, "/enroll/erott", "enrollErOtt", "Enroll", public, s.enrollRouter},
		{clientAPI, post, "/enroll/extend/router", "extendRouterEnrollment", "Enroll, Extend Enrollment", public, s.extendRouter},
		{clientAPI, get, "/enroll/jwks", "getEnrollmentJwks", "Enroll", public, s.enrollmentJWKS},
		{bothAPIs, get, "/network-jwts", "listNetworkJWTs", "Enrollment", public, s.listNetworkJWTs},
	}
}
