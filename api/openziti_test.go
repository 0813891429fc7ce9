package api_test

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
)

// getNoRedirect GETs path of ts without following redirects.
func (ts *testServer) getNoRedirect(path string, header map[string]string) (int, http.Header, []byte) {
	ts.t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.base+path, nil)
	if err != nil {
		ts.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	c := *ts.client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body
}

// TestOpenZiti_ESTCACertsReadableByOpenSSL: the CA certificates answer at
// the root of the API port (where `ziti edge login` fetches them) and under
// both APIs, as base64 PKCS#7 that openssl reads: a ContentInfo with the
// SignedData in its [0] EXPLICIT content.
func TestOpenZiti_ESTCACertsReadableByOpenSSL(t *testing.T) {
	t.Parallel()
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Fatal("this test reads the answer with openssl: install it (Debian: apt-get install openssl)")
	}
	ts := newTestServer(t)
	for _, p := range []string{"/.well-known/est/cacerts", mgmt("/.well-known/est/cacerts"), clientPath("/.well-known/est/cacerts")} {
		st, h, body := ts.getNoRedirect(p, nil)
		if st != 200 || h.Get("Content-Type") != "application/pkcs7-mime" {
			t.Fatalf("%s: %d %s", p, st, h.Get("Content-Type"))
		}
		der, err := base64.StdEncoding.DecodeString(string(body))
		if err != nil {
			t.Fatalf("%s: not base64: %v", p, err)
		}
		cmd := exec.Command(openssl, "pkcs7", "-inform", "DER", "-print_certs")
		cmd.Stdin = bytes.NewReader(der)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: openssl pkcs7 cannot read it: %v\n%s", p, err, out)
		}
		if n := strings.Count(string(out), "-----BEGIN CERTIFICATE-----"); n != 2 {
			t.Fatalf("%s: openssl found %d certificates, want the root and the intermediate:\n%s", p, n, out)
		}
	}
}

// TestOpenZiti_VersionAtTheRoot: older clients probe GET /version at the
// root of the API port.
func TestOpenZiti_VersionAtTheRoot(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st, _, body := ts.getNoRedirect("/version", nil)
	if st != 200 || !strings.Contains(string(body), `"apiVersions"`) {
		t.Fatalf("/version: %d %s", st, body)
	}
}

// TestOpenZiti_NoRedirects: a path with "..", "." or another case answers
// 404, never a redirect; doubled and trailing slashes are cleaned, as
// OpenZiti's controller cleans them (ZAC sends both).
func TestOpenZiti_NoRedirects(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.create("/identities", map[string]any{"name": "slashes", "type": "User", "isAdmin": false})
	for _, p := range []string{"/edge/management/v1//identities", "/edge/management/v1/identities/", "/edge/management/v1/identities/" + id + "//",
		"//edge/management/v1/identities/" + id + "/service-policies/"} {
		st, h, body := ts.getNoRedirect(p, map[string]string{"zt-session": ts.token})
		if st != http.StatusOK {
			t.Errorf("%s: %d (Location %q) %s, want 200", p, st, h.Get("Location"), body)
		}
	}
	for _, p := range []string{"/edge/management/v1/../v1/identities",
		"/edge/management/v1/IDENTITIES", "/edge/client/v1/./version"} {
		st, h, body := ts.getNoRedirect(p, map[string]string{"zt-session": ts.token})
		if st != http.StatusNotFound {
			t.Errorf("%s: %d (Location %q) %s, want 404", p, st, h.Get("Location"), body)
		}
	}
}

// TestInvalidUTF8IsRefused: JSON text must be UTF-8; a string that is not
// is a 400 naming the field, and nothing is stored.
func TestInvalidUTF8IsRefused(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	_, before := ts.list("/identities")
	st, out := ts.do(http.MethodPost, mgmt("/identities"), `{"name":"bad-`+"\xff"+`","type":"User","isAdmin":false}`)
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "name")
	st, out = ts.do(http.MethodPost, mgmt("/identities"), `{"name":"ok","type":"User","isAdmin":false,"tags":{"team":"`+"\xc3\x28"+`"}}`)
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "tags.team")
	if _, after := ts.list("/identities"); after != before {
		t.Fatalf("%d identities stored from invalid bodies", after-before)
	}
}

// TestOpenZiti_BuiltinsAndTheDefaultIdentityType: the config types the
// tunnelers ask for by name exist (with OpenZiti's ids), validate their
// data and cannot be changed or deleted; an identity of type Default (what
// `ziti edge create identity` sends) is created and shown as sent.
func TestOpenZiti_BuiltinsAndTheDefaultIdentityType(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ids := map[string]string{}
	for name, id := range map[string]string{"intercept.v1": "g7cIWbcGg", "host.v1": "NH5p4FpGR", "host.v2": "host.v2",
		"ziti-tunneler-client.v1": "f2dd2df0-9c04-4b84-a91e-71437ac229f1", "ziti-tunneler-server.v1": "cea49285-6c07-42cf-9f52-09a9b115c783",
		"proxy.v1": "proxy.v1"} {
		data, n := ts.list(`/config-types?filter=name%3D%22` + name + `%22`)
		if n != 1 || dig(data[0], "id") != id || dig(data[0], "schema") == nil {
			t.Fatalf("config type %s: %v", name, data)
		}
		ids[name] = id
		st, out := ts.do(http.MethodDelete, mgmt("/config-types/"+id), nil)
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "id")
		st, out = ts.do(http.MethodPatch, mgmt("/config-types/"+id), map[string]any{"schema": map[string]any{}})
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "id")
	}
	for _, ok := range []struct{ typ, data string }{
		{"intercept.v1", `{"protocols":["tcp"],"addresses":["app.ziti","10.0.0.0/24"],"portRanges":[{"low":80,"high":443}]}`},
		{"host.v1", `{"protocol":"tcp","address":"localhost","port":8080}`},
		{"host.v1", `{"forwardProtocol":true,"allowedProtocols":["tcp","udp"],"forwardAddress":true,"allowedAddresses":["10.0.0.0/8"],"forwardPort":true,"allowedPortRanges":[{"low":1,"high":65535}]}`},
		{"host.v2", `{"terminators":[{"protocol":"udp","address":"dns.local","port":53,"portChecks":[{"interval":"5s","timeout":"1s","address":"dns.local:53"}]}]}`},
		{"ziti-tunneler-client.v1", `{"hostname":"db.ziti","port":5432}`},
		{"ziti-tunneler-server.v1", `{"protocol":"tcp","hostname":"db.internal","port":5432}`},
		{"proxy.v1", `{"port":8080,"protocols":["tcp","udp"],"binding":"127.0.0.1"}`},
	} {
		body := `{"name":"c-` + ok.typ + `-` + strings.ReplaceAll(ok.data[2:8], `"`, "") + `","configTypeId":"` + ids[ok.typ] + `","data":` + ok.data + `}`
		if st, out := ts.do(http.MethodPost, mgmt("/configs"), body); st != http.StatusCreated {
			t.Fatalf("%s %s: %d %v", ok.typ, ok.data, st, out)
		}
	}
	for _, bad := range []struct{ typ, data string }{
		{"intercept.v1", `{"protocols":["icmp"],"addresses":["a"],"portRanges":[{"low":1,"high":2}]}`},
		{"intercept.v1", `{"protocols":["tcp"],"addresses":[],"portRanges":[{"low":1,"high":2}]}`},
		{"host.v1", `{"protocol":"tcp","address":"localhost"}`},
		{"host.v2", `{"terminators":[]}`},
		{"ziti-tunneler-client.v1", `{"hostname":"db.ziti","port":70000}`},
		{"proxy.v1", `{"port":0,"protocols":["tcp"]}`},
		{"proxy.v1", `{"port":8080,"protocols":[]}`},
		{"proxy.v1", `{"port":8080,"protocols":["icmp"]}`},
		{"proxy.v1", `{"port":8080,"protocols":["tcp"],"listen":"x"}`},
	} {
		body := `{"name":"bad","configTypeId":"` + ids[bad.typ] + `","data":` + bad.data + `}`
		st, out := ts.do(http.MethodPost, mgmt("/configs"), body)
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "")
	}

	if got := ts.get("/identity-types/Default"); got["name"] != "Default" {
		t.Fatalf("identity type Default: %v", got)
	}
	id := ts.create("/identities", map[string]any{"name": "cli-made", "type": "Default", "isAdmin": false})
	if got := ts.get("/identities/" + id); got["typeId"] != "Default" || dig(got, "type", "name") != "Default" {
		t.Fatalf("identity of type Default: typeId %v, type %v", got["typeId"], got["type"])
	}
}

// TestOpenZiti_FilterTrueAndOpenZitiFieldNames: "true limit N" lists
// everything (what the clients send), and OpenZiti's symbol names work as
// aliases of ours and are listed in meta.filterableFields.
func TestOpenZiti_FilterTrueAndOpenZitiFieldNames(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ident := ts.authnIdentity("alias-user", map[string]any{"enrollment": map[string]any{"ott": true}})
	ts.create("/authenticators", map[string]any{"identityId": ident, "method": "updb", "username": "alias-user", "password": "Alias-pass-1"})
	ts.login("alias-user", "Alias-pass-1")

	q := func(f string) string { return "?filter=" + url.QueryEscape(f) }
	if data, total := ts.list("/identities" + q("true skip 0 limit 2")); len(data) != 2 || total < 2 {
		t.Fatalf("true skip 0 limit 2: %d of %d", len(data), total)
	}
	if _, total := ts.list("/identities" + q("false")); total != 0 {
		t.Fatalf("false: %d", total)
	}
	for _, c := range []struct{ path, filter string }{
		{"/authenticators", `identity = "` + ident + `"`},
		{"/api-sessions", `identity = "` + ident + `"`},
		{"/enrollments", `identity = "` + ident + `"`},
		{"/identities", `type = "User" and id = "` + ident + `"`},
	} {
		st, out := ts.do(http.MethodGet, mgmt(c.path+q(c.filter)), nil)
		if st != 200 || dig(out, "meta", "pagination", "totalCount") != float64(1) {
			t.Fatalf("%s %s: %d %v", c.path, c.filter, st, out)
		}
		fields, _ := dig(out, "meta", "filterableFields").([]any)
		want := strings.Fields(c.filter)[0]
		found := false
		for _, f := range fields {
			found = found || f == want
		}
		if !found {
			t.Fatalf("%s: %q not in filterableFields %v", c.path, want, fields)
		}
	}
}

// TestOpenZiti_WhatGeneratedClientsSend: the shapes OpenZiti's CLI and
// generated clients send for "not set" and "no change", MAC addresses in any
// common spelling, AnyOf for PROCESS_MULTI, and dynamicCost on terminators.
func TestOpenZiti_WhatGeneratedClientsSend(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	// "externalAuthUrl": "" is not set.
	body := signerBody("gen-idp", "https://gen.example")
	body["externalAuthUrl"] = ""
	signer := ts.create("/external-jwt-signers", body)
	if got := ts.get("/external-jwt-signers/" + signer); got["externalAuthUrl"] != nil {
		t.Fatalf("externalAuthUrl %v, want null", got["externalAuthUrl"])
	}
	// PATCH with null role arrays changes nothing of them.
	sp := ts.create("/service-policies", map[string]any{"name": "gen-sp", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"#a"}, "serviceRoles": []string{"#b"}, "postureCheckRoles": []string{"#c"}})
	if st, out := ts.do(http.MethodPatch, mgmt("/service-policies/"+sp), map[string]any{"name": "gen-sp2",
		"identityRoles": nil, "serviceRoles": nil, "postureCheckRoles": nil}); st != 200 {
		t.Fatalf("patch: %d %v", st, out)
	}
	got := ts.get("/service-policies/" + sp)
	if got["name"] != "gen-sp2" || dig(got, "identityRoles").([]any)[0] != "#a" || dig(got, "postureCheckRoles").([]any)[0] != "#c" {
		t.Fatalf("after a PATCH with null roles: %v", got)
	}
	// So do the CAs' (ziti edge update ca NAME --name X sends "identityRoles": null) and every other resource's lists.
	caID := ts.create("/cas", caBody("gen-ca", newAuthnCA(t, "Gen Root").pem))
	if st, out := ts.do(http.MethodPatch, mgmt("/cas/"+caID), map[string]any{"name": "gen-ca-renamed", "identityRoles": nil}); st != 200 {
		t.Fatalf("patch a CA with null identityRoles: %d %v", st, out)
	}
	if got := ts.get("/cas/" + caID); got["name"] != "gen-ca-renamed" || dig(got, "identityRoles").([]any)[0] != "from-ca" {
		t.Fatalf("after a PATCH with null identityRoles: %v", got)
	}
	id := ts.create("/identities", map[string]any{"name": "gen-id", "type": "User", "isAdmin": false, "roleAttributes": []string{"x"}})
	if st, out := ts.do(http.MethodPatch, mgmt("/identities/"+id), map[string]any{"name": "gen-id2", "roleAttributes": nil}); st != 200 {
		t.Fatalf("patch an identity with null roleAttributes: %d %v", st, out)
	}
	if got := ts.get("/identities/" + id); dig(got, "roleAttributes").([]any)[0] != "x" {
		t.Fatalf("after a PATCH with null roleAttributes: %v", got)
	}
	// MAC addresses bare, with colons or dashes, any case; shown normalised.
	mac := ts.create("/posture-checks", map[string]any{"name": "gen-mac", "typeId": "MAC",
		"macAddresses": []string{"aabbccddeeff", "00:11:22:33:44:5a", "0A-0B-0C-0D-0E-0F"}})
	macs := ts.get("/posture-checks/" + mac)["macAddresses"].([]any)
	if len(macs) != 3 || macs[0] != "AA-BB-CC-DD-EE-FF" || macs[1] != "00-11-22-33-44-5A" || macs[2] != "0A-0B-0C-0D-0E-0F" {
		t.Fatalf("macAddresses %v", macs)
	}
	st, out := ts.do(http.MethodPost, mgmt("/posture-checks"), map[string]any{"name": "bad-mac", "typeId": "MAC", "macAddresses": []string{"aabbccddeef"}})
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "macAddresses[0]")
	// AnyOf for PROCESS_MULTI.
	ts.create("/posture-checks", map[string]any{"name": "gen-multi", "typeId": "PROCESS_MULTI", "semantic": "AnyOf",
		"processes": []any{map[string]any{"osType": "Linux", "path": "/usr/bin/agent"}}})
	// A CA PATCH with an empty externalIdClaim object changes nothing of it.
	claim := map[string]any{"location": "COMMON_NAME", "matcher": "ALL", "matcherCriteria": "", "parser": "NONE", "parserCriteria": "", "index": 0}
	cab := caBody("gen-ca", newAuthnCA(t, "Gen Root").pem)
	cab["externalIdClaim"] = claim
	ca := ts.create("/cas", cab)
	if st, out := ts.do(http.MethodPatch, mgmt("/cas/"+ca), map[string]any{"name": "gen-ca2", "externalIdClaim": map[string]any{}}); st != 200 {
		t.Fatalf("CA patch: %d %v", st, out)
	}
	if got := ts.get("/cas/" + ca); got["name"] != "gen-ca2" || dig(got, "externalIdClaim", "location") != "COMMON_NAME" {
		t.Fatalf("CA after a PATCH with {} externalIdClaim: %v", got)
	}
	// dynamicCost on terminators.
	svc := ts.create("/services", map[string]any{"name": "gen-svc"})
	er := ts.create("/edge-routers", map[string]any{"name": "gen-er"})
	term := ts.create("/terminators", map[string]any{"service": svc, "router": er, "binding": "transport", "address": "tcp:x:1", "cost": 7})
	if got := ts.get("/terminators/" + term); got["dynamicCost"] != float64(7) {
		t.Fatalf("terminator: %v", got)
	}
}

// TestConfigDataChangeMovesTheOverridingIdentitysMarker: an identity's
// service-config override shows a config; a change of that config's data
// moves the identity's lastChangeAt (its tunneler must fetch the services
// again).
func TestConfigDataChangeMovesTheOverridingIdentitysMarker(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id, cl := ts.newClientIdentity("overrider", "ov")
	svc := ts.create("/services", map[string]any{"name": "ov-svc", "roleAttributes": []string{"ov"}})
	ts.create("/service-policies", map[string]any{"name": "ov-dial", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"#ov"}, "serviceRoles": []string{"#ov"}})
	cfg := ts.create("/configs", map[string]any{"name": "ov-cfg", "configTypeId": "f2dd2df0-9c04-4b84-a91e-71437ac229f1",
		"data": map[string]any{"hostname": "a.ziti", "port": 80}})
	if st, out := ts.do(http.MethodPost, mgmt("/identities/"+id+"/service-configs"), []any{map[string]any{"serviceId": svc, "configId": cfg}}); st != 200 {
		t.Fatalf("override: %d %v", st, out)
	}
	before := cl.lastChange()
	if st, out := ts.do(http.MethodPatch, mgmt("/configs/"+cfg), map[string]any{"data": map[string]any{"hostname": "b.ziti", "port": 81}}); st != 200 {
		t.Fatalf("config patch: %d %v", st, out)
	}
	if after := cl.lastChange(); !after.After(before) {
		t.Fatalf("lastChangeAt did not move when the override's config changed: %v → %v", before, after)
	}
}
