package api

import (
	"crypto/rand"
	"fmt"
	"slices"
	"time"

	"edgectl/auth"
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
	jwt, err := a.SignEnrollmentJWT(pki.EnrollmentClaims{
		Issuer: s.cfg.AdvertiseURL + ClientPrefix, Subject: identityID, JTI: token, Method: method,
		ExpiresAt: expires, Controllers: s.controllerURLs(),
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
	return []route{
		// Enrollments
		{managementAPI, get, "/enrollments", "listEnrollments", "Enrollment", admin, s.listEnrollments},
		{managementAPI, post, "/enrollments", "createEnrollment", "Enrollment", admin, s.createEnrollment},
		{managementAPI, get, "/enrollments/:id", "detailEnrollment", "Enrollment", admin, s.getEnrollment},
		{managementAPI, del, "/enrollments/:id", "deleteEnrollment", "Enrollment", admin, s.deleteEnrollment},
		{managementAPI, post, "/enrollments/:id/refresh", "refreshEnrollment", "Enrollment", admin, s.refreshEnrollment},
		{managementAPI, get, "/identities/:id/enrollments", "getIdentityEnrollments", "Identity", admin, s.identityEnrollments},
	}
}
