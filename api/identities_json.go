package api

// Speed-tuned: the identity list and detail answers, written by hand.
//
// Guarded by
//
//	speed:       go test -run '^$' -bench 'ListIdentities' ./api/
//	correctness: TestAppendIdentity_SameBytesAsTheView, TestListIdentities_SameAnswerAsTheGenericList (./api/)
//
// A change must keep: appendIdentity writes the bytes encoding/json writes
// for identityView; a field added to identityView must be added here (the
// test sets every optional part, so it fails until it is).

import (
	"encoding/json"
	"net/http"
	"time"

	"edgectl/store"
)

// The identity list answer written by hand. Building identityView for every
// item (ten links, two refs, maps) and encoding it by reflection was most of
// the bytes a list request allocated, and that garbage set how often the
// node collected its heap; a collection on two CPUs delays the requests that
// run during it by milliseconds. appendIdentity writes exactly the bytes
// encoding/json writes for identityView (identities_json_test.go compares
// them over identities with every optional part set).

// listIdentities serves GET /identities.
func (s *Server) listIdentities(c *call) error {
	lr, src, err := c.kindList(store.KindIdentity, true)
	if err != nil {
		return err
	}
	recs, count, limit := lr.pick(src, c.tx.Count(store.KindIdentity))
	now := s.now()
	buf := getJSONBuf()
	defer putJSONBuf(buf)
	b := append((*buf)[:0], `{"data":[`...)
	for i, r := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = s.appendIdentity(b, c.tx, r.(*store.Identity), now); err != nil {
			return err
		}
	}
	b = append(b, "],"...)
	b = appendListMeta(b, lr, limit, count)
	*buf = append(b, "}\n"...)
	c.writeJSONBytes(http.StatusOK, *buf)
	return nil
}

// identityLinkPaths are the _links of an identity in view order, as
// (key, path after ./identities/ID).
var identityLinkPaths = [...][2]string{
	{"self", ""}, {"authenticators", "/authenticators"}, {"enrollments", "/enrollments"},
	{"edge-routers", "/edge-routers"}, {"service-policies", "/service-policies"}, {"services", "/services"},
	{"edge-router-policies", "/edge-router-policies"}, {"service-configs", "/service-configs"},
	{"failed-service-requests", "/failed-service-requests"}, {"posture-data", "/posture-data"},
}

// appendIdentity appends identityViewAt(tx, i, now) as JSON.
func (s *Server) appendIdentity(dst []byte, tx *store.Tx, i *store.Identity, now time.Time) ([]byte, error) {
	var err error
	dst = append(dst, `{"_links":{`...)
	for n, l := range identityLinkPaths {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, l[0]...)
		dst = append(dst, `":{"href":"./identities/`...)
		dst = appendJSONInner(dst, i.ID)
		dst = append(dst, l[1]...)
		dst = append(dst, `"}`...)
	}
	dst = append(dst, `},"id":`...)
	dst = appendJSONString(dst, i.ID)
	dst = append(dst, `,"createdAt":`...)
	dst = appendJSONTime(dst, i.CreatedAt)
	dst = append(dst, `,"updatedAt":`...)
	dst = appendJSONTime(dst, i.UpdatedAt)
	dst = append(dst, `,"tags":`...)
	if dst, err = appendJSONObject(dst, i.Tags, len(i.Tags)); err != nil {
		return nil, err
	}
	dst = append(dst, `,"name":`...)
	dst = appendJSONString(dst, i.Name)
	dst = append(dst, `,"type":`...)
	dst = appendRef(dst, tx, store.KindIdentityType, "identity-types", i.TypeID)
	dst = append(dst, `,"typeId":`...)
	dst = appendJSONString(dst, i.TypeID)
	dst = append(dst, `,"isAdmin":`...)
	dst = appendJSONBool(dst, i.IsAdmin)
	dst = append(dst, `,"isDefaultAdmin":`...)
	dst = appendJSONBool(dst, i.IsDefaultAdmin)
	dst = append(dst, `,"appData":`...)
	if dst, err = appendJSONObject(dst, i.AppData, len(i.AppData)); err != nil {
		return nil, err
	}
	dst = append(dst, `,"authPolicy":`...)
	dst = appendRef(dst, tx, store.KindAuthPolicy, "auth-policies", i.AuthPolicyID)
	dst = append(dst, `,"authPolicyId":`...)
	dst = appendJSONString(dst, i.AuthPolicyID)
	dst = append(dst, `,"authenticators":`...)
	auths := identityAuthenticators(tx, i.ID)
	if dst, err = appendJSONObject(dst, auths, len(auths)); err != nil {
		return nil, err
	}
	dst = append(dst, `,"defaultHostingCost":`...)
	dst = appendJSONInt(dst, int64(i.DefaultHostingCost))
	dst = append(dst, `,"defaultHostingPrecedence":`...)
	dst = appendJSONString(dst, i.DefaultHostingPrecedence)
	dst = append(dst, `,"serviceHostingCosts":`...)
	if dst, err = appendJSONObject(dst, i.ServiceHostingCosts, len(i.ServiceHostingCosts)); err != nil {
		return nil, err
	}
	dst = append(dst, `,"serviceHostingPrecedences":`...)
	if dst, err = appendJSONObject(dst, i.ServiceHostingPrecedences, len(i.ServiceHostingPrecedences)); err != nil {
		return nil, err
	}
	dst = append(dst, `,"disabled":`...)
	dst = appendJSONBool(dst, identityDisabled(i, now))
	dst = append(dst, `,"disabledAt":`...)
	if dst, err = appendJSONOptional(dst, i.DisabledAt); err != nil {
		return nil, err
	}
	dst = append(dst, `,"disabledUntil":`...)
	if dst, err = appendJSONOptional(dst, i.DisabledUntil); err != nil {
		return nil, err
	}
	dst = append(dst, `,"enrollment":`...)
	enrollments := identityEnrollments(tx, i.ID)
	if dst, err = appendJSONObject(dst, enrollments, len(enrollments)); err != nil {
		return nil, err
	}
	dst = append(dst, `,"envInfo":`...)
	if dst, err = appendJSONOptional(dst, i.EnvInfo); err != nil {
		return nil, err
	}
	dst = append(dst, `,"sdkInfo":`...)
	if dst, err = appendJSONOptional(dst, i.SdkInfo); err != nil {
		return nil, err
	}
	dst = append(dst, `,"externalId":`...)
	if i.ExternalID == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendJSONString(dst, *i.ExternalID)
	}
	dst = append(dst, `,"hasApiSession":`...)
	dst = appendJSONBool(dst, tx.First(store.KindAPISession, "identity", i.ID) != nil)
	dst = append(dst, `,"hasEdgeRouterConnection":false,"isMfaEnabled":`...)
	dst = appendJSONBool(dst, mfaEnabled(tx, i.ID))
	dst = append(dst, `,"roleAttributes":`...)
	dst = appendJSONStrings(dst, i.RoleAttributes)
	return append(dst, '}'), nil
}

// appendRef appends the typed EntityRef of typedRef, or null without an id.
func appendRef(dst []byte, tx *store.Tx, k *store.Kind, path, id string) []byte {
	if id == "" {
		return append(dst, "null"...)
	}
	name := ""
	if rec, err := tx.Get(k, id); err == nil {
		name = rec.RecordName()
	}
	dst = append(dst, `{"_links":{"self":{"href":"./`...)
	dst = append(dst, path...)
	dst = append(dst, '/')
	dst = appendJSONInner(dst, id)
	dst = append(dst, `"}},"entity":`...)
	dst = appendJSONString(dst, path)
	dst = append(dst, `,"id":`...)
	dst = appendJSONString(dst, id)
	dst = append(dst, `,"name":`...)
	dst = appendJSONString(dst, name)
	return append(dst, '}')
}

// appendJSONInner appends s as the inside of a JSON string, for values
// written within a longer string (an id in an href). encoding/json escapes
// character by character, so this is the same as escaping the whole string.
func appendJSONInner(dst []byte, s string) []byte {
	n := len(dst)
	dst = appendJSONString(dst, s)
	// Drop the quotes appendJSONString wrote around s.
	copy(dst[n:], dst[n+1:len(dst)-1])
	return dst[:len(dst)-2]
}

// appendJSONTime appends a time as jsonTime formats it, without the string.
func appendJSONTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

// appendJSONObject appends a map the view shows as {} when empty or nil.
func appendJSONObject(dst []byte, m any, n int) ([]byte, error) {
	if n == 0 {
		return append(dst, "{}"...), nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append(dst, raw...), nil
}

// appendJSONOptional appends a pointer field: null when nil, else its JSON.
func appendJSONOptional[T any](dst []byte, p *T) ([]byte, error) {
	if p == nil {
		return append(dst, "null"...), nil
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return append(dst, raw...), nil
}
