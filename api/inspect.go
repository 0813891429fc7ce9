package api

import (
	"encoding/json"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"edgectl/dataplane/fabricmgmt"
)

// Inspections, POST /fabric/v1/inspections (`ziti fabric inspect VALUE
// [REGEX]`): the routers connected to this node whose id or name appRegex
// matches are asked for requestedValues (dataplane/fabricmgmt/inspect.go),
// and this node and each other member whose id it matches answer those they
// have:
// "stackdump" (the node's goroutines), "connected-routers" and
// "connected-peers" (the cluster's members); they pass over the others, as
// OpenZiti's controllers do. The routers and the other members are asked
// at once. The answer is OpenZiti's InspectResponse, not in an envelope:
// success (no errors), errors ("id: error"), and values {appId, name,
// value}, a value that is a JSON object or array given as JSON.

// maxStackdump bounds the node's stack dump.
const maxStackdump = 16 << 20

func (s *Server) inspect(c *call) error {
	raw, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	var req struct {
		AppRegex        *string
		RequestedValues []string
	}
	if v, ok := raw["appRegex"]; ok {
		if err := json.Unmarshal(v, &req.AppRegex); err != nil {
			return invalidField("appRegex", "must be a string", string(v))
		}
	}
	if v, ok := raw["requestedValues"]; ok {
		if err := json.Unmarshal(v, &req.RequestedValues); err != nil {
			return invalidField("requestedValues", "must be a list of strings", string(v))
		}
	}
	if len(req.RequestedValues) == 0 {
		return invalidField("requestedValues", "is required: the values to inspect (links, stackdump, router-data-model, ...)", nil)
	}
	for _, v := range req.RequestedValues {
		if strings.TrimSpace(v) == "" {
			return invalidField("requestedValues", "holds an empty value", v)
		}
	}
	pattern := ""
	if req.AppRegex != nil {
		pattern = *req.AppRegex
	}
	match, err := regexp.Compile(pattern)
	if err != nil {
		return invalidField("appRegex", "is not a regular expression: "+err.Error(), pattern)
	}
	var values, peerValues []fabricmgmt.InspectValue
	var errs, peerErrs []string
	var wg sync.WaitGroup
	if s.Peers != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			peerValues, peerErrs = s.Peers.InspectPeers(c.r.Context(), match, req.RequestedValues)
		}()
	}
	if s.DataPlane != nil {
		values, errs = s.DataPlane.InspectRouters(c.r.Context(), match, req.RequestedValues)
	}
	if match.MatchString(s.Cluster.ID()) {
		values = append(s.InspectLocal(req.RequestedValues), values...)
	}
	wg.Wait()
	values, errs = append(values, peerValues...), append(errs, peerErrs...)
	out := make([]map[string]any, 0, len(values))
	for _, v := range values {
		var value any = v.Value
		if strings.HasPrefix(v.Value, "{") || strings.HasPrefix(v.Value, "[") {
			var parsed any
			if json.Unmarshal([]byte(v.Value), &parsed) == nil {
				value = parsed
			}
		}
		out = append(out, map[string]any{"appId": v.AppID, "name": v.Name, "value": value})
	}
	c.write(http.StatusOK, map[string]any{"success": len(errs) == 0, "errors": errs, "values": out})
	return nil
}

// InspectLocal is this node's own values of those named: stackdump,
// connected-routers and connected-peers; it passes over the others.
func (s *Server) InspectLocal(names []string) []fabricmgmt.InspectValue {
	id := s.Cluster.ID()
	var out []fabricmgmt.InspectValue
	for _, name := range names {
		var value string
		switch strings.ToLower(name) {
		case "stackdump":
			buf := make([]byte, 1<<20)
			for {
				n := runtime.Stack(buf, true)
				if n < len(buf) || len(buf) >= maxStackdump {
					value = string(buf[:n])
					break
				}
				buf = make([]byte, 2*len(buf))
			}
		case "connected-routers":
			if s.DataPlane == nil {
				continue
			}
			value = s.DataPlane.ConnectedRouters()
		case "connected-peers":
			members, err := s.Cluster.Members()
			if err != nil {
				continue
			}
			b, _ := json.Marshal(members)
			value = string(b)
		default:
			continue
		}
		out = append(out, fabricmgmt.InspectValue{AppID: id, Name: name, Value: value})
	}
	return out
}
