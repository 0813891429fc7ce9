package api

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"edgectl/auth"
	"edgectl/store"
)

// benchServer is a Server over a model with n identities, served through the
// local admin handler (no TLS, no session) to measure the list path alone.
func benchServer(b *testing.B, n int) *Server {
	st := store.New()
	tx := st.Write()
	now := time.Now().UTC()
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(tx.Upsert(store.KindSetting, &store.Setting{Base: store.Base{ID: store.SettingDefaultAdmin}, Value: []byte("admin")}))
	must(tx.Insert(store.KindIdentityType, &store.IdentityType{Base: store.Base{ID: "User"}, Named: store.Named{Name: "User"}}))
	must(tx.Insert(store.KindAuthPolicy, &store.AuthPolicy{Base: store.Base{ID: "default"}, Named: store.Named{Name: "Default"}}))
	must(tx.Insert(store.KindIdentity, &store.Identity{Base: store.Base{ID: "admin"}, Named: store.Named{Name: "admin"}, IsAdmin: true, TypeID: "User", AuthPolicyID: "default"}))
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("identity-%06d", i)
		if i%(n/10) == 0 {
			name = fmt.Sprintf("needle-%02d", i/(n/10))
		}
		must(tx.Insert(store.KindIdentity, &store.Identity{Base: store.Base{ID: auth.NewID(), CreatedAt: now}, Named: store.Named{Name: name},
			TypeID: "User", AuthPolicyID: "default", RoleAttributes: []string{"a", "b"}}))
	}
	tx.Commit()
	return New(Deps{Store: st, Activity: auth.NewActivity()}, Config{})
}

func benchList(b *testing.B, url string) {
	s := benchServer(b, 10000)
	h := s.LocalAdminHandler()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", url, nil))
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body.String())
		}
	}
}

func BenchmarkListIdentities_FirstPageOf10k(b *testing.B) {
	benchList(b, ManagementPrefix+"/identities?limit=10")
}

func BenchmarkListIdentities_Filter10Of10k(b *testing.B) {
	benchList(b, ManagementPrefix+"/identities?filter=name%20contains%20%22needle%22")
}
