package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"edgectl/auth"
	"edgectl/store"
)

// identityFixture is a Server over identities with every optional part of
// the view set somewhere: tags, appData, hosting maps, an external id and
// names that need escaping, disabled ones, env and SDK info, authenticators,
// enrollments, an API session, MFA, a missing type and no auth policy.
func identityFixture(t *testing.T) *Server {
	st := store.New()
	tx := st.Write()
	now := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tx.Upsert(store.KindSetting, &store.Setting{Base: store.Base{ID: store.SettingDefaultAdmin}, Value: []byte("admin")}))
	must(tx.Insert(store.KindIdentityType, &store.IdentityType{Base: store.Base{ID: "User"}, Named: store.Named{Name: "User"}}))
	must(tx.Insert(store.KindAuthPolicy, &store.AuthPolicy{Base: store.Base{ID: "default"}, Named: store.Named{Name: "Default <policy>"}}))
	must(tx.Insert(store.KindIdentity, &store.Identity{Base: store.Base{ID: "admin", CreatedAt: now}, Named: store.Named{Name: "admin"},
		IsAdmin: true, IsDefaultAdmin: true, TypeID: "User", AuthPolicyID: "default"}))
	for i := range 40 {
		name := fmt.Sprintf("identity-%02d", i)
		if i%4 == 0 {
			name = fmt.Sprintf("needle-%02d", i)
		}
		must(tx.Insert(store.KindIdentity, &store.Identity{Base: store.Base{ID: fmt.Sprintf("id-%02d", i), CreatedAt: now.Add(time.Duration(i) * time.Second),
			UpdatedAt: now.Add(time.Hour)}, Named: store.Named{Name: name}, TypeID: "User", AuthPolicyID: "default",
			RoleAttributes: []string{"a", fmt.Sprint("r", i%3)}}))
	}
	ext := `ext<&>"é"` + "\u2028"
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	rich := []*store.Identity{
		{Base: store.Base{ID: "rich-1", CreatedAt: now, UpdatedAt: now, Tags: map[string]any{"bench": "needle", "n": 1.5, "nested": map[string]any{"z": []any{true, nil}, "a": "<b>"}}},
			Named: store.Named{Name: `needle "quoted" <tag> & ünïcode`}, TypeID: "User", AuthPolicyID: "default",
			AppData: map[string]any{"k": "v", "list": []any{1.0, "x"}}, DefaultHostingCost: 7, DefaultHostingPrecedence: "required",
			ServiceHostingCosts: map[string]int{"svc-b": 2, "svc-a": 1}, ServiceHostingPrecedences: map[string]string{"svc-a": "failed"},
			ExternalID: &ext, Disabled: true, DisabledAt: &past, DisabledUntil: &future,
			EnvInfo: &store.EnvInfo{Arch: "amd64", OS: "linux"}, SdkInfo: &store.SdkInfo{AppID: "app", Version: "1.0"}},
		{Base: store.Base{ID: "rich-2<&>", CreatedAt: now}, Named: store.Named{Name: "needle-expired"}, TypeID: "Gone",
			Disabled: true, DisabledAt: &past, DisabledUntil: &past, RoleAttributes: []string{}},
		{Base: store.Base{ID: "rich-3", CreatedAt: now}, Named: store.Named{Name: "zz-\xff-invalid"}, TypeID: "User", AuthPolicyID: "default",
			Disabled: true, DisabledAt: &past},
	}
	for _, r := range rich {
		must(tx.Insert(store.KindIdentity, r))
	}
	caID := "ca-1"
	must(tx.Insert(store.KindAuthenticator, &store.Authenticator{Base: store.Base{ID: "auth-updb", CreatedAt: now}, IdentityID: "rich-1", Method: "updb", Username: "rich<1>"}))
	must(tx.Insert(store.KindAuthenticator, &store.Authenticator{Base: store.Base{ID: "auth-cert", CreatedAt: now}, IdentityID: "rich-1", Method: "cert", Fingerprint: "ab:cd"}))
	must(tx.Insert(store.KindEnrollment, &store.Enrollment{Base: store.Base{ID: "enr-ott", CreatedAt: now}, IdentityID: "rich-1", Method: "ott", Token: "tok", JWT: "a.b.c", ExpiresAt: future}))
	must(tx.Insert(store.KindEnrollment, &store.Enrollment{Base: store.Base{ID: "enr-ottca", CreatedAt: now}, IdentityID: "id-04", Method: "ottca", CaID: &caID, Token: "tok2", JWT: "d.e.f", ExpiresAt: future}))
	must(tx.Insert(store.KindAPISession, &store.APISession{Base: store.Base{ID: "sess-1", CreatedAt: now}, TokenHash: "h1", IdentityID: "id-08"}))
	must(tx.Insert(store.KindMFA, &store.MFA{Base: store.Base{ID: "mfa-1", CreatedAt: now}, IdentityID: "rich-1", IsVerified: true}))
	must(tx.Insert(store.KindMFA, &store.MFA{Base: store.Base{ID: "mfa-2", CreatedAt: now}, IdentityID: "id-00"}))
	tx.Commit()
	return New(Deps{Store: st, Activity: auth.NewActivity(), Now: func() time.Time { return now }}, Config{})
}

func TestAppendIdentity_SameBytesAsTheView(t *testing.T) {
	t.Parallel()
	s := identityFixture(t)
	tx := s.Store.Read()
	now := s.now()
	n := 0
	for _, r := range tx.Sorted(store.KindIdentity) {
		i := r.(*store.Identity)
		want, err := json.Marshal(s.identityViewAt(tx, i, now))
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.appendIdentity([]byte("prefix"), tx, i, now)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[len("prefix"):], want) {
			t.Errorf("identity %s:\n got %s\nwant %s", i.ID, got[len("prefix"):], want)
		}
		n++
	}
	if n != 44 {
		t.Fatalf("compared %d identities, want 44", n)
	}
}

// TestListIdentities_SameAnswerAsTheGenericList serves identity lists through
// the router (name column, hand-written JSON) and through the generic list
// path (every record matched, identityView encoded by encoding/json), and
// wants the same bytes for every query.
func TestListIdentities_SameAnswerAsTheGenericList(t *testing.T) {
	t.Parallel()
	s := identityFixture(t)
	h := s.LocalAdminHandler()
	for _, q := range []url.Values{
		{}, {"limit": {"3"}, "offset": {"2"}}, {"limit": {"500"}},
		{"filter": {`name contains "needle"`}},
		{"filter": {`name icontains "NEEDLE" sort by createdAt desc limit 4`}},
		{"filter": {`name = "needle-08" or isAdmin = true`}},
		{"filter": {`not (name contains "identity")`}},
		{"filter": {`name contains "needle" and tags.bench = "needle"`}},
		{"filter": {`name > "m" limit none`}},
		{"filter": {`name contains "needle" skip 2 limit 3`}},
		{"filter": {`name in ["needle-04", "identity-01", "nobody"]`}},
		{"filter": {`name contains "needle"`}, "roleFilter": {"#r1"}},
		{"filter": {`name contains "none"`}},
		{"filter": {`name contains "1identity"`}}, // crosses two names in the packed column: no match
		{"filter": {`name = "needle-08"`}},
		{"filter": {`name contains "e-0" and name contains "needle"`}},
		{"roleFilter": {"#r2"}, "roleSemantic": {"AllOf"}},
	} {
		path := ManagementPrefix + "/identities?" + q.Encode()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		if got, want := w.Body.String(), genericIdentityList(t, s, path); got != want {
			t.Errorf("%s:\n got %s\nwant %s", path, got, want)
		}
		if w.Header().Get("Content-Length") != fmt.Sprint(w.Body.Len()) {
			t.Errorf("%s: Content-Length %q for %d bytes", path, w.Header().Get("Content-Length"), w.Body.Len())
		}
	}
}

// genericIdentityList is the answer of the list as every kind's list makes
// it: kindSource (no name column) and the view encoded by encoding/json.
func genericIdentityList(t *testing.T, s *Server, path string) string {
	t.Helper()
	w := httptest.NewRecorder()
	c := &call{s: s, w: w, r: httptest.NewRequest(http.MethodGet, path, nil), tx: s.Store.Read()}
	lr, err := c.parseList(store.KindIdentity.Fields, true)
	if err != nil {
		t.Fatal(err)
	}
	err = c.page(lr, kindSource(c.tx, store.KindIdentity), c.tx.Count(store.KindIdentity),
		func(r store.Record) any { return s.identityView(c.tx, r.(*store.Identity)) })
	if err != nil {
		t.Fatal(err)
	}
	return w.Body.String()
}
