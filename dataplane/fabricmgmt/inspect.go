package fabricmgmt

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"sort"
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
func InspectRouters(ctx context.Context, dp DataPlane, match *regexp.Regexp, values []string) ([]InspectValue, []string) {
	tx := dp.Model()
	var targets []string
	for _, id := range dp.Routers() {
		if match.MatchString(id) || match.MatchString(RouterName(tx, id)) {
			targets = append(targets, id)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	var mu sync.Mutex
	var out []InspectValue
	var errs []string
	each(targets, func(id string) {
		reply, err := dp.Request(ctx, id, ctrlchan.NewMessage(wire.InspectRequestType, wire.InspectRequest(values...)))
		var resp wire.InspectResponse
		if err == nil {
			resp, err = wire.DecodeInspectResponse(reply.Body)
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, id+": "+err.Error())
			return
		}
		for _, e := range resp.Errors {
			errs = append(errs, id+": "+e)
		}
		for _, name := range slices.Sorted(maps.Keys(resp.Values)) {
			out = append(out, InspectValue{AppID: id, Name: name, Value: resp.Values[name]})
		}
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].AppID < out[j].AppID })
	sort.Strings(errs)
	return out, errs
}
