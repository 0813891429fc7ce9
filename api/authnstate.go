package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// Throttle limits of failed authentication attempts, per node.
var (
	// limitCredential: per username or certificate fingerprint.
	limitCredential = auth.Limit{Burst: 10, Every: 6 * time.Second}
	// limitAddress: per source address, across every credential.
	limitAddress = auth.Limit{Burst: 100, Every: 500 * time.Millisecond}
	// limitMFA: wrong TOTP or recovery codes per identity.
	limitMFA = auth.Limit{Burst: 5, Every: 20 * time.Second}
	// limitAudit: failed logins of one identity recorded for the audit trail
	// only (auditFailure), 10 at once and then 10 a minute.
	limitAudit = auth.Limit{Burst: 10, Every: 6 * time.Second}
)

// throttleKeys bounds the throttle table (about 100 bytes a key).
const throttleKeys = 100_000

// authnState is the per-node state of authentication. Nothing in it decides
// who is who on its own: lockout, replay and MFA state are in the model.
type authnState struct {
	once     sync.Once
	throttle *auth.Throttle
	jwks     *auth.JWKS
	certs    auth.CertCache

	// failWrites are how long the last authentication writes through Raft
	// took; failures that record nothing wait their median, so the time of
	// an answer does not tell whether the username exists.
	failWrites writeTimes

	boxMu  sync.Mutex
	box    *auth.SecretBox
	boxSrc []byte
}

func (s *Server) authn() *authnState {
	a := &s.authnSt
	a.once.Do(func() {
		a.throttle = auth.NewThrottle(throttleKeys)
		a.jwks = auth.NewJWKS(s.cfg.JWKSRootCAs)
	})
	return a
}

// throttled checks the buckets of keys and answers 429 with Retry-After when
// one is empty.
func (s *Server) throttled(c *call, now time.Time, keys map[string]auth.Limit) error {
	t := s.authn().throttle
	var wait time.Duration
	for k, l := range keys {
		if w, ok := t.Check(k, l, now); !ok && w > wait {
			wait = w
		}
	}
	if wait == 0 {
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	c.w.Header().Set("Retry-After", strconv.Itoa(secs))
	return tooMany(fmt.Sprintf("too many failed attempts: try again in %d s", secs))
}

// failed takes a token of each key's bucket.
func (s *Server) failed(now time.Time, keys map[string]auth.Limit) {
	t := s.authn().throttle
	for k, l := range keys {
		t.Fail(k, l, now)
	}
}

// recordFailure counts a failed attempt of an identity through Raft (the
// lockout holds on every node).
func (s *Server) recordFailure(ctx context.Context, identityID, method, reason string, now time.Time) {
	start := time.Now()
	if _, err := s.Writer.Do(ctx, fsm.CmdLoginFailed, fsm.LoginFailed{IdentityID: identityID, At: now, Method: method, Reason: reason}); err != nil {
		s.Log.Warn("recording a failed login", "identity", identityID, "error", err)
		return
	}
	s.metrics.loginFailures.WithLabelValues("counted").Inc()
	s.noteWrite(time.Since(start))
}

// auditFailure records a failed login of a known identity that counts
// toward no lockout, for the audit trail (an authentication.loginFailed
// event), at most auditPerIdentity a minute per identity on this node, so
// that guessing at one account cannot flood the event log; past that, and
// while the cluster cannot take the command yet (a rolling upgrade), the
// failure is only counted in edgectl_login_failures_total.
func (s *Server) auditFailure(ctx context.Context, identityID, method, reason string, now time.Time) {
	if _, ok := s.authn().throttle.Check("audit:"+identityID, limitAudit, now); !ok {
		s.metrics.loginFailures.WithLabelValues("not_recorded").Inc()
		s.padFailure(ctx)
		return
	}
	s.authn().throttle.Fail("audit:"+identityID, limitAudit, now)
	start := time.Now()
	if _, err := s.Writer.Do(ctx, fsm.CmdLoginFailedAudit, fsm.LoginFailed{IdentityID: identityID, At: now, Method: method, Reason: reason}); err != nil {
		s.Log.Debug("recording a failed login for the audit trail", "identity", identityID, "error", err)
		s.metrics.loginFailures.WithLabelValues("not_recorded").Inc()
		return
	}
	s.metrics.loginFailures.WithLabelValues("recorded").Inc()
	s.noteWrite(time.Since(start))
}

// noteWrite records how long an authentication write (a failure or a
// login) took through Raft.
func (s *Server) noteWrite(d time.Duration) { s.authn().failWrites.add(d) }

// padFailure waits about as long as recording a failure takes, for failures
// that record nothing (unknown username, identity without lockout).
func (s *Server) padFailure(ctx context.Context) {
	d := s.authn().failWrites.median()
	if d <= 0 {
		return
	}
	if d > time.Second {
		d = time.Second
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// writeTimes holds the last len(d) write durations. Their median is what a
// write takes now: a running average kept one slow write (a busy disk, a
// loaded host) for many answers after, padding unknown usernames several
// times longer than the failures they must look like.
type writeTimes struct {
	mu   sync.Mutex
	d    [15]time.Duration
	n    int // writes recorded, up to len(d)
	next int
}

func (w *writeTimes) add(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d[w.next] = d
	w.next = (w.next + 1) % len(w.d)
	if w.n < len(w.d) {
		w.n++
	}
}

func (w *writeTimes) median() time.Duration {
	w.mu.Lock()
	if w.n == 0 {
		w.mu.Unlock()
		return 0
	}
	d := slices.Clone(w.d[:w.n])
	w.mu.Unlock()
	slices.Sort(d)
	return d[len(d)/2]
}

// secretBox returns the box that seals MFA secrets, keyed from the cluster
// PKI's root key: every node derives the same key, no new secret is to be
// distributed, and the sealed values are exactly as safe as the CA itself.
func (s *Server) secretBox(tx *store.Tx) (*auth.SecretBox, error) {
	raw := tx.Setting(store.SettingPKI)
	a := s.authn()
	a.boxMu.Lock()
	defer a.boxMu.Unlock()
	if a.box != nil && string(raw) == string(a.boxSrc) {
		return a.box, nil
	}
	var st pki.State
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("api: PKI state: %w", err)
	}
	box, err := auth.NewSecretBox([]byte(st.RootKeyPEM), "mfa v1")
	if err != nil {
		return nil, err
	}
	a.box, a.boxSrc = box, raw
	return box, nil
}

// addrKey names the throttle bucket of the request's source address.
func addrKey(r *http.Request) string { return "addr:" + clientIP(r) }
