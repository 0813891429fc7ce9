package api

import (
	"encoding/json"
	"net/url"

	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
	"edgectl/store/filter"
)

// urlDecoder returns a fCustom decoder of an absolute URL; httpsOnly refuses http.
func urlDecoder(name string, httpsOnly bool) func(json.RawMessage) (any, error) {
	return func(raw json.RawMessage) (any, error) {
		var s string
		if err := unmarshalField(name, raw, &s); err != nil {
			return nil, err
		}
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || (u.Scheme != "https" && (httpsOnly || u.Scheme != "http")) {
			if httpsOnly {
				return nil, invalidField(name, "must be an absolute https URL", s)
			}
			return nil, invalidField(name, "must be an absolute http or https URL", s)
		}
		return s, nil
	}
}

// emptyIsNull makes the decoder of an optional string field take "" as null.
func emptyIsNull(dec func(json.RawMessage) (any, error)) func(json.RawMessage) (any, error) {
	return func(raw json.RawMessage) (any, error) {
		if string(raw) == `""` {
			return nil, nil
		}
		return dec(raw)
	}
}

// decodeSignerCert accepts a PEM certificate.
func decodeSignerCert(raw json.RawMessage) (any, error) {
	var s string
	if err := unmarshalField("certPem", raw, &s); err != nil {
		return nil, err
	}
	if _, err := parseCertField("certPem", s); err != nil {
		return nil, err
	}
	return s, nil
}

// extJWTSignerFields are the writable fields of an external JWT signer.
// Exactly one of certPem and jwksEndpoint must end up set; the store checks
// that on the merged record, so PATCH cannot break it.
var extJWTSignerFields = []field{
	{name: "name", kind: fString, required: true, min: 1, max: 255},
	{name: "enabled", kind: fBool, required: true, ui: fieldUI{value: true}},
	{name: "issuer", kind: fString, required: true, min: 1, max: 1024},
	{name: "audience", kind: fString, required: true, nullable: true, min: 1, max: 1024},
	{name: "certPem", kind: fCustom, nullable: true, custom: decodeSignerCert, ui: fieldUI{input: "pem"}},
	{name: "jwksEndpoint", kind: fCustom, nullable: true, custom: urlDecoder("jwksEndpoint", true)},
	{name: "kid", kind: fString, nullable: true, min: 1, max: 1024},
	{name: "claimsProperty", kind: fString, nullable: true, min: 1, max: 255, def: "sub"},
	{name: "useExternalId", kind: fBool, nullable: true, def: false},
	// Generated clients send "" for an unset URL: it means null.
	{name: "externalAuthUrl", kind: fCustom, nullable: true, custom: emptyIsNull(urlDecoder("externalAuthUrl", false))},
	tagsField,
}

// signerCertPatch adds the fields derived from certPem to a patch whenever
// certPem is part of it (null clears them).
func signerCertPatch(_ *call, p *parsed) error {
	if _, ok := p.patch["certPem"]; !ok {
		return nil
	}
	derived := map[string]any{"fingerprint": nil, "commonName": nil, "notBefore": nil, "notAfter": nil}
	if s, ok := p.values["certPem"].(string); ok {
		cert, err := firstCert(s)
		if err != nil {
			return invalidField("certPem", err.Error(), nil)
		}
		derived = map[string]any{"fingerprint": pki.Fingerprint(cert), "commonName": cert.Subject.CommonName,
			"notBefore": cert.NotBefore.UTC(), "notAfter": cert.NotAfter.UTC()}
	}
	for k, v := range derived {
		if err := p.set(k, v); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) createExtJWTSigner(c *call) error {
	return s.createHandler(store.KindExternalJWTSigner, "external-jwt-signers", extJWTSignerFields, fsm.CmdExtJWTSignerCreate, signerCertPatch)(c)
}

func (s *Server) updateExtJWTSigner(m mode) func(c *call) error {
	return s.updateHandler(store.KindExternalJWTSigner, extJWTSignerFields, fsm.CmdExtJWTSignerUpdate, m, signerCertPatch)
}

func (s *Server) deleteExtJWTSigner(c *call) error {
	_, err := s.Writer.Do(c.r.Context(), fsm.CmdExtJWTSignerDelete, fsm.Delete{ID: c.param("id")})
	return err
}

func (s *Server) getExtJWTSigner(c *call) error {
	sg, err := store.GetAs[*store.ExternalJWTSigner](c.tx, store.KindExternalJWTSigner, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(extJWTSignerView(sg))
	return nil
}

func (s *Server) listExtJWTSigners(c *call) error {
	return c.listKind(store.KindExternalJWTSigner, false, func(r store.Record) any {
		return extJWTSignerView(r.(*store.ExternalJWTSigner))
	})
}

// clientSignerFields are the filterable fields of the public Client API
// list: only those it shows, so a filter cannot probe the hidden ones.
var clientSignerFields = func() *filter.Schema {
	all := store.KindExternalJWTSigner.Fields
	out := &filter.Schema{Fields: map[string]filter.Field{}, Prefixes: all.Prefixes}
	for _, name := range []string{"id", "name", "createdAt", "updatedAt", "externalAuthUrl"} {
		out.Fields[name] = all.Fields[name]
	}
	return out
}()

// listClientExtJWTSigners is the Client API list: public, so a client can
// find the identity provider to get a JWT from before it has a session. It
// shows only what a client needs to start a login.
func (s *Server) listClientExtJWTSigners(c *call) error {
	lr, err := c.parseList(clientSignerFields, false)
	if err != nil {
		return err
	}
	k := store.KindExternalJWTSigner
	return c.page(lr, kindSource(c.tx, k), c.tx.Count(k), func(r store.Record) any {
		sg := r.(*store.ExternalJWTSigner)
		v := namedRecordView(sg, "external-jwt-signers", sg.Tags)
		v["externalAuthUrl"] = sg.ExternalAuthURL
		return v
	})
}

// extJWTSignerView is a signer as the Management API shows it.
func extJWTSignerView(sg *store.ExternalJWTSigner) map[string]any {
	v := namedRecordView(sg, "external-jwt-signers", sg.Tags)
	v["enabled"], v["issuer"], v["audience"], v["certPem"] = sg.Enabled, sg.Issuer, sg.Audience, sg.CertPem
	v["jwksEndpoint"], v["kid"], v["claimsProperty"] = sg.JwksEndpoint, sg.Kid, sg.ClaimsProperty
	v["useExternalId"], v["externalAuthUrl"] = sg.UseExternalID, sg.ExternalAuthURL
	v["fingerprint"], v["commonName"], v["notBefore"], v["notAfter"] = sg.Fingerprint, sg.CommonName, sg.NotBefore, sg.NotAfter
	return v
}

// extJWTSignerRoutes are the external JWT signer operations; the Client API list is public so clients can find the IdP before they log in.
func (s *Server) extJWTSignerRoutes() []route {
	return append(crudRoutes("/external-jwt-signers", "ExternalJwtSigner", "ExternalJwtSigners", "External JWT Signer", crudOps{list: s.listExtJWTSigners, create: s.createExtJWTSigner, detail: s.getExtJWTSigner, update: s.updateExtJWTSigner, del: s.deleteExtJWTSigner}),
		// External JWT signers; the Client API list is public so clients can find the IdP before they log in.
		route{clientAPI, get, "/external-jwt-signers", "listExternalJwtSigners", "External JWT Signer", public, s.listClientExtJWTSigners},
	)
}
