package api

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"time"

	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// newUUID returns a random (version 4) UUID, the form of enrollment tokens.
func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// newEnrollment makes an enrollment with its one-time token and signed JWT.
func (s *Server) newEnrollment(tx *store.Tx, identityID, method string, caID, username *string, expires time.Time) (*store.Enrollment, error) {
	a, err := s.authority(tx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	token := newUUID()
	jwt, err := s.signEnrollmentJWT(a, pki.EnrollmentClaims{
		Subject: identityID, JTI: token, Method: method,
		ExpiresAt: expires, Controllers: s.enrollmentControllers(method),
	})
	if err != nil {
		return nil, err
	}
	return &store.Enrollment{
		Base:       store.Base{ID: auth.NewID(), CreatedAt: now, UpdatedAt: now},
		IdentityID: identityID, Method: method, CaID: caID, Username: username,
		Token: token, JWT: jwt, ExpiresAt: expires.UTC(),
	}, nil
}

// newIdentityEnrollments makes the enrollments an identity create asks for.
func (s *Server) newIdentityEnrollments(c *call, identityID string, e *identityEnrollment, now time.Time) ([]*store.Enrollment, error) {
	var out []*store.Enrollment
	exp := now.Add(enrollmentDuration)
	if e.Ott {
		en, err := s.newEnrollment(c.tx, identityID, "ott", nil, nil, exp)
		if err != nil {
			return nil, err
		}
		out = append(out, en)
	}
	if e.Ottca != nil {
		if reason := ottCAProblem(c.tx, *e.Ottca); reason != "" {
			return nil, invalidField("enrollment.ottca", reason, *e.Ottca)
		}
		en, err := s.newEnrollment(c.tx, identityID, "ottca", e.Ottca, nil, exp)
		if err != nil {
			return nil, err
		}
		out = append(out, en)
	}
	if e.Updb != nil {
		en, err := s.newEnrollment(c.tx, identityID, "updb", nil, e.Updb, exp)
		if err != nil {
			return nil, err
		}
		out = append(out, en)
	}
	return out, nil
}

// controllerURLs are the API URLs of the controllers clients may use.
// Conventions §10: ctrls holds the API URLs of every node; this node's first.
// signEnrollmentJWT signs an enrollment (or CA, or network) JWT the way
// OpenZiti's enrollers verify it: "iss" is this node's bare https://host:port
// (they append the Client API path), and the signature is by the key of the
// TLS server certificate that this node presents there (they fetch that
// certificate and verify with its key). /enroll/jwks serves every node's key.
// Without a server key (tests of encoders) the authority's key signs.
func (s *Server) signEnrollmentJWT(a *pki.Authority, claims pki.EnrollmentClaims) (string, error) {
	claims.Issuer = s.cfg.AdvertiseURL
	if s.cfg.JWTKey == nil {
		return a.SignEnrollmentJWT(claims)
	}
	return pki.SignEnrollmentJWTWith(s.cfg.JWTKey, s.jwtKid, claims)
}

// enrollmentControllers is the "ctrls" claim of an enrollment JWT: for a
// router, the control-channel address of every node ("tls:host:port", the
// API port, which routers reach by ALPN), which `ziti router enroll` writes
// to the router's endpoints file; for an identity, every node's API URL.
func (s *Server) enrollmentControllers(method string) []string {
	urls := s.controllerURLs()
	if method != routerEnrollMethod {
		return urls
	}
	out := make([]string, 0, len(urls))
	for _, u := range urls {
		out = append(out, "tls:"+strings.TrimPrefix(u, "https://"))
	}
	return out
}

func (s *Server) controllerURLs() []string {
	urls := []string{s.cfg.AdvertiseURL}
	s.Store.Read().Controllers(func(ctrl *store.Controller) bool {
		if ctrl.APIURL != "" && !slices.Contains(urls, ctrl.APIURL) {
			urls = append(urls, ctrl.APIURL)
		}
		return true
	})
	return urls
}

// ottCAProblem says why the CA caID cannot take ottca enrollments ("" when it can).
func ottCAProblem(tx *store.Tx, caID string) string {
	ca, err := store.GetAs[*store.CA](tx, store.KindCA, caID)
	switch {
	case err != nil:
		return "no CA with this id"
	case !ca.IsVerified:
		return "the CA is not verified"
	case !ca.IsOttCaEnrollmentEnabled:
		return "the CA does not allow ottca enrollment (isOttCaEnrollmentEnabled is false)"
	}
	return ""
}

// enrollmentRoutes are the enrollment operations.
func (s *Server) enrollmentRoutes() []route {
	return append(crudRoutes("/enrollments", "Enrollment", "Enrollments", "Enrollment", crudOps{list: s.listEnrollments, create: s.createEnrollment, detail: s.getEnrollment, del: s.deleteEnrollment}),
		route{managementAPI, post, "/enrollments/:id/refresh", "refreshEnrollment", "Enrollment", admin, s.refreshEnrollment},
		route{managementAPI, get, "/identities/:id/enrollments", "getIdentityEnrollments", "Identity", admin, s.identityEnrollments},
	)
}

// enrollmentCreateFields are the fields of an enrollment create body.
var enrollmentCreateFields = []field{
	{name: "identityId", kind: fString, required: true, min: 1, ref: "identities"},
	{name: "method", kind: fString, required: true, enum: []string{"ott", "ottca", "updb"}},
	{name: "expiresAt", kind: fTime, required: true},
	{name: "caId", kind: fString, nullable: true, min: 1, ref: "cas"},
	{name: "username", kind: fString, nullable: true, min: 4, max: 100},
	tagsField,
}

// expiresAtFields is the body of refresh and re-enroll.
var expiresAtFields = []field{{name: "expiresAt", kind: fTime, required: true}}

// renewedEnrollment is a new enrollment of the identity (method, caID and
// username as newEnrollment takes them) that ends at the body's required
// expiresAt, which must be later than now: the enrollment of refresh and of
// re-enroll. It returns the enrollment and now.
func (s *Server) renewedEnrollment(c *call, identityID, method string, caID, username *string) (*store.Enrollment, time.Time, error) {
	now := s.now()
	raw, err := decodeObject(c.r)
	if err != nil {
		return nil, now, err
	}
	p, err := parseFields(raw, expiresAtFields, modeCreate)
	if err != nil {
		return nil, now, err
	}
	exp := p.values["expiresAt"].(time.Time)
	if !exp.After(now) {
		return nil, now, invalidField("expiresAt", "must be in the future", exp)
	}
	e, err := s.newEnrollment(c.tx, identityID, method, caID, username, exp)
	return e, now, err
}

func (s *Server) createEnrollment(c *call) error {
	raw, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	p, err := parseFields(raw, enrollmentCreateFields, modeCreate)
	if err != nil {
		return err
	}
	now := s.now()
	identityID, method := p.values["identityId"].(string), p.values["method"].(string)
	exp := p.values["expiresAt"].(time.Time)
	if !exp.After(now) {
		return invalidField("expiresAt", "must be in the future", exp)
	}
	opt := func(name string) *string {
		if v, ok := p.values[name].(string); ok {
			return &v
		}
		return nil
	}
	caID, username := opt("caId"), opt("username")
	switch {
	case method == "ottca" && caID == nil:
		return invalidField("caId", "is required for method ottca", nil)
	case method != "ottca" && caID != nil:
		return invalidField("caId", "is only used by method ottca", *caID)
	case method == "updb" && username == nil:
		return invalidField("username", "is required for method updb", nil)
	case method != "updb" && username != nil:
		return invalidField("username", "is only used by method updb", *username)
	}
	if !c.tx.Exists(store.KindIdentity, identityID) {
		return invalidField("identityId", "no identity with this id", identityID)
	}
	e, err := s.newEnrollment(c.tx, identityID, method, caID, username, exp)
	if err != nil {
		return err
	}
	if tags, ok := p.values["tags"].(map[string]any); ok {
		e.Tags = tags
	}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdEnrollmentCreate, fsm.EnrollmentCreate{Enrollment: e, At: now}); err != nil {
		return err
	}
	c.created("enrollments", e.ID)
	return nil
}

// refreshEnrollment gives an enrollment a new expiry, token and JWT.
func (s *Server) refreshEnrollment(c *call) error {
	old, err := store.GetAs[*store.Enrollment](c.tx, store.KindEnrollment, c.param("id"))
	if err != nil {
		return err
	}
	fresh, now, err := s.renewedEnrollment(c, old.IdentityID, old.Method, old.CaID, old.Username)
	if err != nil {
		return err
	}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdEnrollmentRefresh, fsm.EnrollmentRefresh{ID: old.ID,
		Token: fresh.Token, JWT: fresh.JWT, ExpiresAt: fresh.ExpiresAt, At: now}); err != nil {
		return err
	}
	c.ok(map[string]any{"_links": selfLinks("enrollments", old.ID), "id": old.ID})
	return nil
}

func (s *Server) deleteEnrollment(c *call) error {
	_, err := s.Writer.Do(c.r.Context(), fsm.CmdEnrollmentDelete, fsm.Delete{ID: c.param("id")})
	return err
}

func (s *Server) getEnrollment(c *call) error {
	e, err := store.GetAs[*store.Enrollment](c.tx, store.KindEnrollment, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(s.enrollmentView(c.tx, e))
	return nil
}

func (s *Server) listEnrollments(c *call) error {
	return c.listKind(store.KindEnrollment, false, func(r store.Record) any { return s.enrollmentView(c.tx, r.(*store.Enrollment)) })
}

// identityEnrollments lists the enrollments of an identity.
func (s *Server) identityEnrollments(c *call) error {
	id := c.param("id") // an existing identity (ofExistingRecords)
	lr, err := c.parseList(store.KindEnrollment.Fields, false)
	if err != nil {
		return err
	}
	recs := ownedRecords(c.tx, store.KindEnrollment, "identity", id)
	return c.page(lr, recordsSource(recs), len(recs), func(r store.Record) any { return s.enrollmentView(c.tx, r.(*store.Enrollment)) })
}

// reEnrollAuthenticator replaces an authenticator by an enrollment: updb
// gives updb with the same username, cert gives ottca when a verified CA
// that allows ottca signed the certificate, ott otherwise.
func (s *Server) reEnrollAuthenticator(c *call) error {
	a, err := store.GetAs[*store.Authenticator](c.tx, store.KindAuthenticator, c.param("id"))
	if err != nil {
		return err
	}
	method := "ott"
	var caID, username *string
	switch {
	case a.Method == "updb":
		method, username = "updb", &a.Username
	case a.Method == "cert":
		if ca := ottCAOf(c.tx, a.CertPem); ca != nil {
			method, caID = "ottca", &ca.ID
		}
	}
	e, now, err := s.renewedEnrollment(c, a.IdentityID, method, caID, username)
	if err != nil {
		return err
	}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdAuthenticatorReEnroll, fsm.AuthenticatorReEnroll{ID: a.ID, Enrollment: e, At: now}); err != nil {
		return err
	}
	c.created("enrollments", e.ID)
	return nil
}

// requestExtendBody is the optional body of request-extend.
type requestExtendBody struct {
	RollKeys *bool `json:"rollKeys"`
}

// requestExtendAuthenticator asks the holder of a cert authenticator to
// extend its certificate (with a new key when rollKeys is true).
func (s *Server) requestExtendAuthenticator(c *call) error {
	id := c.param("id")
	if !c.tx.Exists(store.KindAuthenticator, id) {
		return notFound("authenticator", id)
	}
	var b requestExtendBody
	if err := decodeInto(c.r, &b); err != nil {
		return err
	}
	_, err := s.Writer.Do(c.r.Context(), fsm.CmdAuthenticatorRequestExtend,
		fsm.AuthenticatorExtendRequest{ID: id, RollKeys: b.RollKeys != nil && *b.RollKeys, At: s.now()})
	return err
}

// enrollmentView is an enrollment as the Management API shows it.
func (s *Server) enrollmentView(tx *store.Tx, e *store.Enrollment) map[string]any {
	links := selfLinks("enrollments", e.ID)
	links["identity"] = map[string]string{"href": "./identities/" + e.IdentityID}
	var ca map[string]any
	if e.CaID != nil {
		links["ca"] = map[string]string{"href": "./cas/" + *e.CaID}
		ca = s.entityRef(tx, store.KindCA, "cas", *e.CaID)
	}
	name := ""
	if i, err := tx.Get(store.KindIdentity, e.IdentityID); err == nil {
		name = i.RecordName()
	}
	return map[string]any{
		"_links":     links,
		"id":         e.ID,
		"createdAt":  e.CreatedAt,
		"updatedAt":  e.UpdatedAt,
		"tags":       tagsOrEmpty(e.Tags),
		"method":     e.Method,
		"expiresAt":  e.ExpiresAt,
		"token":      e.Token,
		"jwt":        e.JWT,
		"identityId": e.IdentityID,
		"identity": map[string]any{"_links": selfLinks("identities", e.IdentityID), "id": e.IdentityID,
			"name": name, "urlName": "identities"},
		"caId":     e.CaID,
		"ca":       ca,
		"username": e.Username,
	}
}
