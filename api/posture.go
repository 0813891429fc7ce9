package api

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"edgectl/fsm"
	"edgectl/policy"
	"edgectl/store"
)

// postureResponseBody is one posture response as clients send it.
type postureResponseBody struct {
	ID                 *string  `json:"id"`
	TypeID             *string  `json:"typeId"`
	Type               *string  `json:"type"`
	Version            *string  `json:"version"`
	Build              *string  `json:"build"`
	MacAddresses       []string `json:"macAddresses"`
	Domain             *string  `json:"domain"`
	Path               *string  `json:"path"`
	IsRunning          *bool    `json:"isRunning"`
	Hash               *string  `json:"hash"`
	SignerFingerprints []string `json:"signerFingerprints"`
	Unlocked           *bool    `json:"unlocked"`
	Woken              *bool    `json:"woken"`
}

// responseTypes maps the accepted typeId spellings to response types.
var responseTypes = map[string]string{
	"os": policy.CheckOS, "postureresponseoscreate": policy.CheckOS, "postureresponseoperatingsystemcreate": policy.CheckOS,
	"mac": policy.CheckMAC, "postureresponsemaccreate": policy.CheckMAC, "postureresponsemacaddresscreate": policy.CheckMAC,
	"domain": policy.CheckDomain, "postureresponsedomaincreate": policy.CheckDomain,
	"process": policy.CheckProcess, "postureresponseprocesscreate": policy.CheckProcess,
	"endpoint_state": store.PostureEndpointState, "endpointstate": store.PostureEndpointState,
	"postureresponseendpointstatecreate": store.PostureEndpointState, "unlocked": store.PostureEndpointState, "woken": store.PostureEndpointState,
}

// validateResponse checks one response and converts it; prefix names its place in a bulk body.
func validateResponse(tx *store.Tx, b *postureResponseBody, prefix string) (store.PostureResponse, error) {
	var r store.PostureResponse
	if b.TypeID == nil || *b.TypeID == "" {
		return r, invalidField(prefix+"typeId", "is required: OS, MAC, DOMAIN, PROCESS or ENDPOINT_STATE", nil)
	}
	typ, ok := responseTypes[strings.ToLower(*b.TypeID)]
	if !ok {
		return r, invalidField(prefix+"typeId", "must be OS, MAC, DOMAIN, PROCESS or ENDPOINT_STATE", *b.TypeID)
	}
	r.TypeID = typ
	if typ != store.PostureEndpointState {
		if b.ID == nil || *b.ID == "" {
			return r, invalidField(prefix+"id", "is required: the id of the posture query (check) answered", nil)
		}
		pc, err := store.GetAs[*store.PostureCheck](tx, store.KindPostureCheck, *b.ID)
		if err != nil {
			return r, invalidField(prefix+"id", "no posture check with this id", *b.ID)
		}
		if policy.ResponseOf(pc.TypeID) != typ {
			return r, invalidField(prefix+"typeId", fmt.Sprintf("posture check %s is of type %s", pc.ID, pc.TypeID), *b.TypeID)
		}
		r.CheckID = pc.ID
	}
	switch typ {
	case policy.CheckOS:
		if b.Type == nil || *b.Type == "" {
			return r, invalidField(prefix+"type", "is required for an OS response", nil)
		}
		if b.Version == nil || *b.Version == "" {
			return r, invalidField(prefix+"version", "is required for an OS response", nil)
		}
		r.OSType, r.OSVersion = *b.Type, *b.Version
		if b.Build != nil {
			r.OSBuild = *b.Build
		}
	case policy.CheckMAC:
		if b.MacAddresses == nil {
			return r, invalidField(prefix+"macAddresses", "is required for a MAC response", nil)
		}
		for i, m := range b.MacAddresses {
			if len(m) > 64 || strings.TrimSpace(m) == "" {
				return r, invalidField(fmt.Sprintf("%smacAddresses[%d]", prefix, i), "must be a hardware address", m)
			}
		}
		r.MacAddresses = b.MacAddresses
	case policy.CheckDomain:
		if b.Domain == nil {
			return r, invalidField(prefix+"domain", "is required for a DOMAIN response", nil)
		}
		r.Domain = *b.Domain
	case policy.CheckProcess:
		if b.Path == nil || *b.Path == "" {
			return r, invalidField(prefix+"path", "is required for a PROCESS response", nil)
		}
		if b.IsRunning == nil {
			return r, invalidField(prefix+"isRunning", "is required for a PROCESS response", nil)
		}
		r.Path, r.IsRunning, r.SignerFingerprints = *b.Path, *b.IsRunning, b.SignerFingerprints
		if b.Hash != nil {
			r.Hash = *b.Hash
		}
	case store.PostureEndpointState:
		if b.Unlocked == nil && b.Woken == nil {
			return r, invalidField(prefix+"unlocked", "an endpoint state response needs unlocked or woken", nil)
		}
		r.Unlocked = b.Unlocked != nil && *b.Unlocked
		r.Woken = b.Woken != nil && *b.Woken
	}
	return r, nil
}

// postureResponse takes one posture response (Client API).
func (s *Server) postureResponse(c *call) error {
	var b postureResponseBody
	if err := decodeInto(c.r, &b); err != nil {
		return err
	}
	r, err := validateResponse(c.tx, &b, "")
	if err != nil {
		return err
	}
	return s.applyResponses(c, []store.PostureResponse{r}, http.StatusCreated)
}

// postureResponseBulk takes several responses at once.
func (s *Server) postureResponseBulk(c *call) error {
	raw, err := readBody(c.r, maxBody)
	if err != nil {
		return err
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return badBody("the request body must be a JSON array of posture responses")
	}
	var bodies []postureResponseBody
	if err := unmarshalField("", raw, &bodies); err != nil {
		return err
	}
	if len(bodies) == 0 {
		return invalidField("body", "at least one posture response is required", nil)
	}
	if len(bodies) > 100 {
		return invalidField("body", "at most 100 posture responses at once", len(bodies))
	}
	var rs []store.PostureResponse
	for i := range bodies {
		r, err := validateResponse(c.tx, &bodies[i], fmt.Sprintf("[%d].", i))
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	return s.applyResponses(c, rs, http.StatusOK)
}

// applyResponses replicates the responses and answers the services they affect.
func (s *Server) applyResponses(c *call, rs []store.PostureResponse, status int) error {
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdPostureResponses, fsm.PostureResponses{APISessionID: c.session.ID, Responses: rs}); err != nil {
		return err
	}
	tx := s.Store.Read()
	types := map[string]bool{}
	for _, r := range rs {
		types[r.TypeID] = true
	}
	services := []any{}
	visible := visibleServices(tx, c.identity.ID)
	for i := range visible.Len() {
		grants := visible.At(i)
		svc, err := store.GetAs[*store.Service](tx, store.KindService, visible.ID(i))
		if err != nil {
			continue
		}
		affected, queryType := false, ""
		timeout, remaining := int64(-1), int64(-1)
		for _, g := range grants {
			for _, id := range g.Checks {
				res, pc := s.evaluate(tx, c.session, id)
				if pc == nil {
					continue
				}
				if !types[policy.ResponseOf(pc.TypeID)] {
					continue
				}
				affected, queryType = true, pc.TypeID
				if res.Timeout >= 0 && (timeout < 0 || res.TimeoutRemaining < remaining) {
					timeout, remaining = res.Timeout, res.TimeoutRemaining
				}
			}
		}
		if affected {
			services = append(services, map[string]any{"id": svc.ID, "name": svc.Name, "postureQueryType": queryType,
				"timeout": timeout, "timeoutRemaining": remaining})
		}
	}
	c.write(status, map[string]any{"data": map[string]any{"services": services}, "meta": meta(nil)})
	return nil
}

// identityPostureData shows an identity's posture data (Management).
func (s *Server) identityPostureData(c *call) error {
	id := c.param("id") // an existing identity (ofExistingRecords)
	out := map[string]any{"apiSessionPostureData": map[string]any{}, "processes": []any{}}
	perSession := out["apiSessionPostureData"].(map[string]any)
	all := c.tx.IdentityPostureData(id)
	for i, pd := range all {
		as, err := store.GetAs[*store.APISession](c.tx, store.KindAPISession, pd.ID)
		if err != nil {
			continue
		}
		in := c.tx.PostureInput(as)
		perSession[pd.ID] = map[string]any{
			"endpointState": map[string]any{"unlockedAt": pd.UnlockedAt, "wokenAt": pd.WokenAt},
			"mfa": map[string]any{"apiSessionId": as.ID, "passedAt": as.LastMfaAt, "passedMfa": in.MFA.PassedMfa,
				"passedOnUnlock": in.MFA.PassedOnUnlock, "passedOnWake": in.MFA.PassedOnWake},
			"sdkInfo": as.SdkInfo,
		}
		if i > 0 {
			continue // the newest session's reports are the identity's current posture
		}
		if pd.OS != nil {
			out["os"] = map[string]any{"lastUpdatedAt": pd.OS.LastUpdatedAt, "postureCheckId": pd.OS.PostureCheckID, "timedOut": false,
				"type": pd.OS.Type, "version": pd.OS.Version, "build": pd.OS.Build}
		}
		if pd.MAC != nil {
			out["mac"] = map[string]any{"lastUpdatedAt": pd.MAC.LastUpdatedAt, "postureCheckId": pd.MAC.PostureCheckID, "timedOut": false,
				"addresses": pd.MAC.Addresses}
		}
		if pd.Domain != nil {
			out["domain"] = map[string]any{"lastUpdatedAt": pd.Domain.LastUpdatedAt, "postureCheckId": pd.Domain.PostureCheckID, "timedOut": false,
				"domain": pd.Domain.Domain}
		}
		procs := []any{}
		for _, p := range pd.Processes {
			procs = append(procs, map[string]any{"lastUpdatedAt": p.LastUpdatedAt, "postureCheckId": p.PostureCheckID, "timedOut": false,
				"path": p.Path, "isRunning": p.IsRunning, "binaryHash": p.Hash, "signerFingerprints": nonNilStrings(p.SignerFingerprints)})
		}
		out["processes"] = procs
	}
	c.ok(out)
	return nil
}

// postureDataRoutes are the posture responses and the posture data they build.
func (s *Server) postureDataRoutes() []route {
	return []route{
		{clientAPI, post, "/posture-response", "createPostureResponse", "Posture Checks", full, s.postureResponse},
		{clientAPI, post, "/posture-response-bulk", "createPostureResponseBulk", "Posture Checks", full, s.postureResponseBulk},
		{managementAPI, get, "/identities/:id/posture-data", "getIdentityPostureData", "Identity", admin, s.identityPostureData},
	}
}
