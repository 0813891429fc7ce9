package api

// Speed-tuned: a session's JSON, with each edge router's entry cached per
// router record version (frags).
//
// Guarded by
//
//	speed:       go test -run '^$' -bench 'Sessions_Create' ./api/
//	correctness: TestSessionAnswerSameBytesAsMapView, TestSessionAnswerFollowsRouterChanges (./api/)
//
// A change must keep: the bytes of the map view this replaced (sorted
// keys); a cached entry depends only on what its key holds (the router
// record, online, sync status).

import (
	"edgectl/dataplane"
	"encoding/json"

	"edgectl/policy"
	"edgectl/store"
)

// The JSON of a session (Session detail in the spec). A session names every
// edge router it may use, often a hundred or more; each router's entry
// depends only on the router's record, so it is encoded once per record
// version (frags, as for services) and copied into every answer. The rest
// is encoded per session. Keys are in encoding/json's order for the map
// view this replaces (sorted), so the bytes are what they were.

// sessionRouterKey keys a router's session entry in frags, apart from any
// other fragment of the same record.
type sessionRouterKey struct {
	er     *store.EdgeRouter
	online bool
	sync   string
}

// sessionRouterFragOf is the entry of an edge router in a session's edgeRouters.
func sessionRouterFragOf(er *store.EdgeRouter, live dataplane.Status) ([]byte, error) {
	v, err := frags.get(sessionRouterKey{er, live.Online, live.SyncStatus}, func() (any, error) {
		return json.Marshal(struct {
			AppData            map[string]any    `json:"appData"`
			Cost               int               `json:"cost"`
			Disabled           bool              `json:"disabled"`
			Hostname           string            `json:"hostname"`
			IsOnline           bool              `json:"isOnline"`
			Name               string            `json:"name"`
			NoTraversal        bool              `json:"noTraversal"`
			SupportedProtocols map[string]string `json:"supportedProtocols"`
			SyncStatus         string            `json:"syncStatus"`
			URLs               map[string]string `json:"urls"`
		}{objOrEmpty(er.AppData), er.Cost, er.Disabled, er.Hostname, live.Online, er.Name, er.NoTraversal,
			strMapOrEmpty(er.SupportedProtocols), live.SyncStatus, strMapOrEmpty(er.SupportedProtocols)})
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// sessionJSON is a session view that encodes itself: the value list and
// detail answers hand to encoding/json.
type sessionJSON struct {
	s     *Server
	tx    *store.Tx
	sess  *store.Session
	token string // only in the answer to a create
}

// MarshalJSON encodes the session view.
func (v sessionJSON) MarshalJSON() ([]byte, error) {
	return v.s.appendSession(nil, v.tx, v.sess, v.token)
}

// appendSession appends the session view: the session, the edge routers the
// identity may use for its service, and token when not empty.
func (s *Server) appendSession(dst []byte, tx *store.Tx, sess *store.Session, token string) ([]byte, error) {
	head, err := json.Marshal(struct {
		Links        selfLink       `json:"_links"`
		APISession   map[string]any `json:"apiSession"`
		APISessionID string         `json:"apiSessionId"`
		CreatedAt    string         `json:"createdAt"`
	}{linkTo("sessions", sess.ID), s.entityRef(tx, store.KindAPISession, "api-sessions", sess.APISessionID),
		sess.APISessionID, jsonTime(sess.CreatedAt)})
	if err != nil {
		return nil, err
	}
	dst = append(dst, head[:len(head)-1]...)
	dst = append(dst, `,"edgeRouters":[`...)
	n := 0
	for _, id := range policy.SessionEdgeRouters(tx, sess.IdentityID, sess.ServiceID) {
		r, ok := tx.Lookup(store.KindEdgeRouter, id)
		if !ok {
			continue
		}
		frag, err := sessionRouterFragOf(r.(*store.EdgeRouter), s.routerLive(id))
		if err != nil {
			return nil, err
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, frag...)
		n++
	}
	tail, err := json.Marshal(struct {
		ID         string         `json:"id"`
		IdentityID string         `json:"identityId"`
		Service    map[string]any `json:"service"`
		ServiceID  string         `json:"serviceId"`
		Tags       map[string]any `json:"tags"`
		Token      string         `json:"token,omitempty"`
		Type       string         `json:"type"`
		UpdatedAt  string         `json:"updatedAt"`
	}{sess.ID, sess.IdentityID, s.entityRef(tx, store.KindService, "services", sess.ServiceID), sess.ServiceID,
		tagsOrEmpty(sess.Tags), token, sess.Type, jsonTime(sess.UpdatedAt)})
	if err != nil {
		return nil, err
	}
	dst = append(dst, "],"...)
	return append(dst, tail[1:]...), nil
}

// writeSession answers status with the envelope of one session view.
func (s *Server) writeSession(c *call, status int, tx *store.Tx, sess *store.Session, token string) error {
	buf := getJSONBuf()
	defer putJSONBuf(buf)
	b := append((*buf)[:0], `{"data":`...)
	b, err := s.appendSession(b, tx, sess, token)
	if err != nil {
		return err
	}
	b = append(b, ',')
	b = appendMetaVersions(b)
	b = append(b, "}}\n"...)
	*buf = b
	c.writeJSONBytes(status, b)
	return nil
}
