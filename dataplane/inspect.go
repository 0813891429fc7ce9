package dataplane

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
)

// Inspections (`ziti fabric inspect VALUE [REGEX]`, POST
// /fabric/v1/inspections): the routers connected to this node whose id or
// name the regex matches are asked for the values (ctrl_pb InspectRequest),
// as OpenZiti's controller asks them: at most validateParallel at a time,
// all within inspectTimeout.

// inspectTimeout bounds the wait for the routers' answers.
const inspectTimeout = 10 * time.Second

// InspectValue is one value of one router (or node): its id, the value's
// name, and the value as the router gave it (JSON, usually).
type InspectValue struct {
	AppID, Name, Value string
}

// InspectRouters asks the matching routers for values; it returns their
// values and their errors ("id: error"), each sorted.
func (m *Manager) InspectRouters(ctx context.Context, match *regexp.Regexp, values []string) ([]InspectValue, []string) {
	tx := m.cfg.Store.Read()
	var targets []*Router
	for _, r := range m.connectedWhere(nil) {
		if match.MatchString(r.ID) || match.MatchString(routerName(tx, r.ID)) {
			targets = append(targets, r)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	var mu sync.Mutex
	var out []InspectValue
	var errs []string
	each(targets, func(r *Router) {
		reply, err := m.request(ctx, r, ctrlchan.NewMessage(wire.InspectRequestType, wire.InspectRequest(values...)))
		var resp wire.InspectResponse
		if err == nil {
			resp, err = wire.DecodeInspectResponse(reply.Body)
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, r.ID+": "+err.Error())
			return
		}
		for _, e := range resp.Errors {
			errs = append(errs, r.ID+": "+e)
		}
		for _, name := range slices.Sorted(maps.Keys(resp.Values)) {
			out = append(out, InspectValue{AppID: r.ID, Name: name, Value: resp.Values[name]})
		}
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].AppID < out[j].AppID })
	sort.Strings(errs)
	return out, errs
}

// ConnectedRouters is this node's "connected-routers" inspection value:
// each connected router's id, name, version and connect time, as OpenZiti's
// controller gives it.
func (m *Manager) ConnectedRouters() string {
	tx := m.cfg.Store.Read()
	out := []map[string]any{}
	for _, r := range m.connectedWhere(nil) {
		out = append(out, map[string]any{"Id": r.ID, "Name": routerName(tx, r.ID), "Version": r.Version.Version,
			"ConnectTime": r.ConnectedAt.Format(time.RFC3339)})
	}
	slices.SortFunc(out, func(a, b map[string]any) int { return strings.Compare(a["Id"].(string), b["Id"].(string)) })
	b, _ := json.Marshal(out)
	return string(b)
}
