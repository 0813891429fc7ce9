package api

import (
	"context"
	"encoding/asn1"
	"encoding/base64"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"time"

	"edgectl/cluster"
	"edgectl/pki"
	"edgectl/store"
)

// versionInfo is the Version information of the spec.
func (s *Server) versionInfo() map[string]any {
	base := s.cfg.AdvertiseURL
	apis := map[string]any{
		"edge-client": map[string]any{"v1": map[string]any{"apiBaseUrls": []string{base + ClientPrefix}, "path": ClientPrefix, "version": "v1"}},
		// OpenZiti lists the Client API under "edge" too; ZAC looks for it there.
		"edge":            map[string]any{"v1": map[string]any{"apiBaseUrls": []string{base + ClientPrefix}, "path": ClientPrefix, "version": "v1"}},
		"edge-management": map[string]any{"v1": map[string]any{"apiBaseUrls": []string{base + ManagementPrefix}, "path": ManagementPrefix, "version": "v1"}},
		"fabric":          map[string]any{"v1": map[string]any{"apiBaseUrls": []string{base + FabricPrefix}, "path": FabricPrefix, "version": "v1"}},
	}
	return map[string]any{
		"apiVersions":    apis,
		"buildDate":      s.cfg.BuildDate,
		"revision":       s.cfg.Revision,
		"runtimeVersion": runtime.Version(),
		"version":        s.cfg.Version,
	}
}

func (s *Server) getVersion(c *call) error {
	c.ok(s.versionInfo())
	return nil
}

// specs are the API documents this node serves.
var specs = []struct{ id, name string }{
	{"edge-client", "Edge Client API"},
	{"edge-management", "Edge Management API"},
}

// specsLoadedAt is when this process loaded its API documents: the
// createdAt and updatedAt of the Spec resources (BaseEntity plus name).
var specsLoadedAt = time.Now().UTC()

func specView(id, name string) map[string]any {
	return map[string]any{"_links": map[string]any{"self": map[string]string{"href": "./specs/" + id},
		"spec": map[string]string{"href": "./specs/" + id + "/spec"}}, "id": id, "name": name,
		"createdAt": specsLoadedAt, "updatedAt": specsLoadedAt, "tags": map[string]any{}}
}

func (s *Server) listSpecs(c *call) error {
	out := []any{}
	for _, sp := range specs {
		out = append(out, specView(sp.id, sp.name))
	}
	c.okMeta(out, map[string]any{"pagination": map[string]any{"limit": len(out), "offset": 0, "totalCount": len(out)}})
	return nil
}

func (s *Server) getSpec(c *call) error {
	for _, sp := range specs {
		if sp.id == c.param("id") {
			c.ok(specView(sp.id, sp.name))
			return nil
		}
	}
	return notFound("spec", c.param("id"))
}

func (s *Server) getSpecBody(c *call) error {
	id := c.param("id")
	switch id {
	case "edge-client":
		c.ok(s.openAPI(clientAPI))
	case "edge-management":
		c.ok(s.openAPI(managementAPI))
	default:
		return notFound("spec", id)
	}
	return nil
}

// summary counts the records of every kind.
func (s *Server) summary(c *call) error {
	out := map[string]int{}
	for _, k := range store.AllKinds {
		switch k {
		case store.KindSetting, store.KindJoinToken, store.KindCertExtension:
			continue // bookkeeping, not resources
		}
		out[k.Table] = c.tx.Count(k)
	}
	c.ok(out)
	return nil
}

// wellKnownCACerts serves the CA bundle for EST (RFC 7030): a base64 PKCS#7
// certs-only structure, or PEM when the client asks for application/x-pem-file.
func (s *Server) wellKnownCACerts(c *call) error {
	a, err := s.authority(c.tx)
	if err != nil {
		return err
	}
	c.wrote = true
	if strings.Contains(c.r.Header.Get("Accept"), "application/x-pem-file") {
		c.w.Header().Set("Content-Type", "application/x-pem-file")
		_, _ = c.w.Write(a.BundlePEM())
		return nil
	}
	certs, err := pki.ParseCertsPEM(a.BundlePEM())
	if err != nil {
		return err
	}
	var ders [][]byte
	for _, cert := range certs {
		ders = append(ders, cert.Raw)
	}
	p7, err := certsOnlyPKCS7(ders)
	if err != nil {
		return err
	}
	c.w.Header().Set("Content-Type", "application/pkcs7-mime")
	c.w.Header().Set("Content-Transfer-Encoding", "base64")
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write([]byte(base64.StdEncoding.EncodeToString(p7)))
	return nil
}

// certsOnlyPKCS7 encodes a degenerate PKCS#7 SignedData holding certificates only.
func certsOnlyPKCS7(ders [][]byte) ([]byte, error) {
	var certs []asn1.RawValue
	for _, d := range ders {
		certs = append(certs, asn1.RawValue{FullBytes: d})
	}
	type contentInfo struct {
		ContentType asn1.ObjectIdentifier
	}
	type signedData struct {
		Version          int
		DigestAlgorithms asn1.RawValue
		ContentInfo      contentInfo
		Certificates     []asn1.RawValue `asn1:"optional,tag:0"`
		SignerInfos      asn1.RawValue
	}
	emptySet := asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSet, IsCompound: true}
	sd, err := asn1.Marshal(signedData{
		Version: 1, DigestAlgorithms: emptySet,
		ContentInfo:  contentInfo{ContentType: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}},
		Certificates: certs, SignerInfos: emptySet,
	})
	if err != nil {
		return nil, err
	}
	// ContentInfo ::= SEQUENCE { contentType, content [0] EXPLICIT ANY }.
	// The [0] wrapper is spelled out: encoding/asn1 writes a RawValue's
	// FullBytes as they are, ignoring an "explicit" tag on the field.
	type outer struct {
		ContentType asn1.ObjectIdentifier
		Content     asn1.RawValue
	}
	return asn1.Marshal(outer{ContentType: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2},
		Content: asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: sd}})
}

// listControllers lists the members of the cluster.
func (s *Server) listControllers(c *call) error { return s.listMemberViews(c, nil) }

// listMemberViews answers every member of the cluster in the controller
// view, to which add (when set) may add what its operation shows.
func (s *Server) listMemberViews(c *call, add func(m cluster.Member, st cluster.Stats, v map[string]any)) error {
	members, err := s.Cluster.Members()
	if err != nil {
		return err
	}
	if slices.ContainsFunc(members, func(m cluster.Member) bool { return c.tx.Controller(m.ID) == nil }) {
		// A joining node's record is committed before its membership, but
		// this node may see the membership a moment before it applies the
		// record: a member is not listed without its address.
		ctx, cancel := context.WithTimeout(c.r.Context(), time.Second)
		if _, _, ok := s.Cluster.CaughtUp(ctx); ok {
			c.snapshot()
		}
		cancel()
	}
	st := s.Cluster.Stats()
	out := []any{}
	for _, m := range members {
		v := s.controllerView(c.tx, m, st)
		if add != nil {
			add(m, st, v)
		}
		out = append(out, v)
	}
	c.okMeta(out, map[string]any{"pagination": map[string]any{"limit": len(out), "offset": 0, "totalCount": len(out)}})
	return nil
}

// controllerView is a cluster member as /controllers shows it. The API
// addresses come from the controller records each node keeps in the model.
func (s *Server) controllerView(tx *store.Tx, m cluster.Member, st cluster.Stats) map[string]any {
	v := map[string]any{
		"_links": selfLinks("controllers", m.ID), "id": m.ID, "name": m.ID, "address": m.Address,
		"isLeader": m.IsLeader, "isVoter": m.IsVoter, "apiAddresses": map[string]any{},
	}
	online, applied, known := s.Peers.PeerStatus(m.ID)
	v["isOnline"] = online
	if known {
		// lastAppliedIndex: the member's when it last answered (a member
		// that stopped answering keeps its last one); lag: commands
		// committed (as far as this node knows) that it had not applied then.
		v["lastAppliedIndex"] = applied
		v["lag"] = uint64(0)
		if target := s.Cluster.CommitTarget(); target > applied {
			v["lag"] = target - applied
		}
	}
	// A member without a record yet, or one whose binary predates command
	// versions, applies version 1.
	v["version"], v["commandVersion"] = "unknown", 1
	if ctrl := tx.Controller(m.ID); ctrl != nil {
		if ctrl.Version != "" {
			v["version"] = ctrl.Version
		}
		v["commandVersion"] = max(ctrl.CommandVersion, 1)
		v["name"] = ctrl.Name
		v["apiAddresses"] = apiAddresses(ctrl.APIURL)
		v["createdAt"], v["updatedAt"] = ctrl.CreatedAt, ctrl.UpdatedAt
	}
	return v
}

func apiAddresses(url string) map[string]any {
	return map[string]any{
		"edge-client":     []any{map[string]string{"url": url + ClientPrefix, "version": "v1"}},
		"edge-management": []any{map[string]string{"url": url + ManagementPrefix, "version": "v1"}},
	}
}

// infoRoutes are the informational operations.
func (s *Server) infoRoutes() []route {
	return []route{
		// Informational
		{bothAPIs, get, "/", "listRoot", "Informational", public, s.getVersion},
		{bothAPIs, get, "/version", "listVersion", "Informational", public, s.getVersion},
		{bothAPIs, get, "/specs", "listSpecs", "Informational", public, s.listSpecs},
		{bothAPIs, get, "/specs/:id", "detailSpec", "Informational", public, s.getSpec},
		{bothAPIs, get, "/specs/:id/spec", "detailSpecBody", "Informational", public, s.getSpecBody},
		{bothAPIs, get, "/.well-known/est/cacerts", "listWellKnownCas", "Well Known", public, s.wellKnownCACerts},
		{managementAPI, get, "/summary", "listSummary", "Informational", admin, s.summary},
		{managementAPI, get, "/health-history", "listHealthHistory", "Informational", admin, s.getHealthHistory},
		{bothAPIs, get, "/controllers", "listControllers", "Controllers", full, s.listControllers},
		{bothAPIs, get, "/enumerated-capabilities", "listEnumeratedCapabilities", "Informational", public, s.enumeratedCapabilities},
		{clientAPI, get, "/protocols", "listProtocols", "Informational", public, s.listProtocols},
	}
}

// enumeratedCapabilities names what this controller supports beyond the base APIs.
func (s *Server) enumeratedCapabilities(c *call) error {
	c.ok([]string{"HA_CONTROLLER"})
	return nil
}
