package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"edgectl/auth"
	"edgectl/policy"
	"edgectl/store"
)

// oldSessionView is the map view sessions_json.go replaced: the oracle the
// hand-assembled answer must equal byte for byte.
func oldSessionView(s *Server, tx *store.Tx, sess *store.Session) map[string]any {
	ers := []any{}
	for _, id := range policy.SessionEdgeRouters(tx, sess.IdentityID, sess.ServiceID) {
		er, err := store.GetAs[*store.EdgeRouter](tx, store.KindEdgeRouter, id)
		if err != nil {
			continue
		}
		ers = append(ers, map[string]any{
			"appData": objOrEmpty(er.AppData), "cost": er.Cost, "disabled": er.Disabled, "hostname": er.Hostname,
			"isOnline": false, "name": er.Name, "noTraversal": er.NoTraversal,
			"supportedProtocols": strMapOrEmpty(er.SupportedProtocols), "syncStatus": "SYNC_UNKNOWN",
			"urls": strMapOrEmpty(er.SupportedProtocols),
		})
	}
	return map[string]any{
		"_links": selfLinks("sessions", sess.ID), "id": sess.ID, "createdAt": sess.CreatedAt, "updatedAt": sess.UpdatedAt,
		"tags": tagsOrEmpty(sess.Tags), "apiSession": s.entityRef(tx, store.KindAPISession, "api-sessions", sess.APISessionID),
		"apiSessionId": sess.APISessionID, "identityId": sess.IdentityID,
		"service":   s.entityRef(tx, store.KindService, "services", sess.ServiceID),
		"serviceId": sess.ServiceID, "type": sess.Type, "edgeRouters": ers,
	}
}

func encodeOld(v any) []byte {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v)
	return b.Bytes()
}

// sessionModel is a small network: routers with app data, protocols and
// text JSON escapes; edge router and service edge router policies that
// select some of them; sessions with and without tags.
func sessionModel(t *testing.T) (*Server, *store.Store) {
	st := store.New()
	tx := st.Write()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	must(tx.Insert(store.KindIdentityType, &store.IdentityType{Base: store.Base{ID: "User"}, Named: store.Named{Name: "User"}}))
	must(tx.Insert(store.KindAuthPolicy, &store.AuthPolicy{Base: store.Base{ID: "default"}, Named: store.Named{Name: "Default"}}))
	must(tx.Insert(store.KindIdentity, &store.Identity{Base: store.Base{ID: "i1", CreatedAt: at}, Named: store.Named{Name: "alice <&>"},
		TypeID: "User", AuthPolicyID: "default", RoleAttributes: []string{"staff"}}))
	must(tx.Insert(store.KindService, &store.Service{Base: store.Base{ID: "s1", CreatedAt: at}, Named: store.Named{Name: "web \"quoted\""},
		RoleAttributes: []string{"web"}}))
	for i := 0; i < 12; i++ {
		er := &store.EdgeRouter{Base: store.Base{ID: fmt.Sprintf("er-%02d", i), CreatedAt: at}, Named: store.Named{Name: fmt.Sprintf("router-%02d é<%d>", i, i)},
			Cost: i * 10, Disabled: i%5 == 0, NoTraversal: i%4 == 1, Hostname: fmt.Sprintf("er%d.example", i), RoleAttributes: []string{"edge"}}
		if i%2 == 0 {
			er.AppData = map[string]any{"zone": "eu&us", "n": float64(i), "nested": map[string]any{"b": []any{1.5, nil, "\u2028"}}}
			er.SupportedProtocols = map[string]string{"tls": fmt.Sprintf("tls:er%d.example:3022", i), "ws": "ws://<x>"}
		}
		if i%3 == 0 {
			er.RoleAttributes = []string{"edge", "near"}
		}
		must(tx.Insert(store.KindEdgeRouter, er))
	}
	must(tx.Insert(store.KindEdgeRouterPolicy, &store.EdgeRouterPolicy{Base: store.Base{ID: "erp1"}, Named: store.Named{Name: "erp1"},
		Semantic: "AnyOf", IdentityRoles: []string{"#staff"}, EdgeRouterRoles: []string{"#edge"}}))
	must(tx.Insert(store.KindServiceEdgeRouterPolicy, &store.ServiceEdgeRouterPolicy{Base: store.Base{ID: "serp1"}, Named: store.Named{Name: "serp1"},
		Semantic: "AnyOf", ServiceRoles: []string{"#web"}, EdgeRouterRoles: []string{"#near", "@er-07"}}))
	must(tx.Insert(store.KindAPISession, &store.APISession{Base: store.Base{ID: "as1", CreatedAt: at}, TokenHash: auth.HashToken("tok"), IdentityID: "i1"}))
	must(tx.Insert(store.KindSession, &store.Session{Base: store.Base{ID: "sess1", CreatedAt: at, UpdatedAt: at.Add(time.Second)},
		TokenHash: "h1", APISessionID: "as1", IdentityID: "i1", ServiceID: "s1", Type: "Dial"}))
	must(tx.Insert(store.KindSession, &store.Session{Base: store.Base{ID: "sess2", CreatedAt: at, UpdatedAt: at, Tags: map[string]any{"k": "<v>", "x": 1.0}},
		TokenHash: "h2", APISessionID: "as1", IdentityID: "i1", ServiceID: "gone", Type: "Bind"}))
	tx.Commit()
	return New(Deps{Store: st, Activity: auth.NewActivity(), Now: func() time.Time { return at }}, Config{}), st
}

func TestSessionAnswerSameBytesAsMapView(t *testing.T) {
	t.Parallel()
	s, st := sessionModel(t)
	tx := st.Read()
	for _, id := range []string{"sess1", "sess2"} {
		sess, err := store.GetAs[*store.Session](tx, store.KindSession, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, token := range []string{"", "secret-<token>"} {
			old := oldSessionView(s, tx, sess)
			if token != "" {
				old["token"] = token
			}
			want := encodeOld(map[string]any{"data": old, "meta": meta(nil)})
			rec := httptest.NewRecorder()
			c := &call{w: rec}
			if err := s.writeSession(c, http.StatusCreated, tx, sess, token); err != nil {
				t.Fatal(err)
			}
			if got := rec.Body.Bytes(); !bytes.Equal(got, want) {
				t.Fatalf("%s token %q:\ngot  %s\nwant %s", id, token, got, want)
			}
			if rec.Code != http.StatusCreated || rec.Header().Get("Content-Length") != fmt.Sprint(len(want)) {
				t.Fatalf("status %d, length %q", rec.Code, rec.Header().Get("Content-Length"))
			}
		}
		// Through encoding/json (lists and detail answers).
		if got, want := encodeOld(s.sessionView(tx, sess)), encodeOld(oldSessionView(s, tx, sess)); !bytes.Equal(got, want) {
			t.Fatalf("%s view:\ngot  %s\nwant %s", id, got, want)
		}
	}
	// The first session names the routers both policies allow: #near (0, 3, 6, 9) and @er-07.
	sess, _ := store.GetAs[*store.Session](tx, store.KindSession, "sess1")
	var v struct {
		EdgeRouters []struct{ Name string } `json:"edgeRouters"`
	}
	if err := json.Unmarshal(encodeOld(s.sessionView(tx, sess)), &v); err != nil || len(v.EdgeRouters) != 5 {
		t.Fatalf("edge routers %+v (%v)", v.EdgeRouters, err)
	}
}

func TestSessionAnswerFollowsRouterChanges(t *testing.T) {
	t.Parallel()
	s, st := sessionModel(t)
	sess, _ := store.GetAs[*store.Session](st.Read(), store.KindSession, "sess1")
	before := encodeOld(s.sessionView(st.Read(), sess)) // caches the routers' entries
	tx := st.Write()
	er, _ := store.GetAs[*store.EdgeRouter](tx, store.KindEdgeRouter, "er-03")
	n := *er
	n.Name, n.Cost = "renamed", 999
	if err := tx.Replace(store.KindEdgeRouter, &n); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	after := encodeOld(s.sessionView(st.Read(), sess))
	if bytes.Equal(before, after) || !bytes.Contains(after, []byte(`"cost":999`)) || !bytes.Contains(after, []byte(`"name":"renamed"`)) {
		t.Fatalf("the answer did not follow the router change:\n%s", after)
	}
	if want := encodeOld(oldSessionView(s, st.Read(), sess)); !bytes.Equal(after, want) {
		t.Fatalf("after the change:\ngot  %s\nwant %s", after, want)
	}
}
