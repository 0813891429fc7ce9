package controller

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"regexp"
	"sort"
	"sync"
	"time"

	"edgectl/dataplane/fabricmgmt"
)

// Inspections of the other members (`ziti fabric inspect VALUE [REGEX]`,
// api/inspect.go): the node asked sends the values to each other member
// whose id the regex matches, over the cluster port, and each answers with
// its own (api.Server.InspectLocal), as OpenZiti's controllers ask their
// peers. Routers are asked by the node asked only: each router is connected
// to every node.

// rpcInspect is the cluster RPC that asks a member for its own values.
const rpcInspect = "edgectl.inspect"

// inspectTimeout bounds the wait for the other members (OpenZiti's).
const inspectTimeout = 10 * time.Second

// registerInspect answers the other members' inspections.
func (n *Node) registerInspect() {
	n.Raft.RegisterRPC(rpcInspect, func(_ context.Context, _ *x509.Certificate, req []byte) ([]byte, error) {
		var names []string
		if err := json.Unmarshal(req, &names); err != nil {
			return nil, err
		}
		return json.Marshal(n.API.InspectLocal(names))
	})
}

// InspectPeers asks each other member whose id match matches for its own
// values of names; errors are "id: error".
func (n *Node) InspectPeers(ctx context.Context, match *regexp.Regexp, names []string) ([]fabricmgmt.InspectValue, []string) {
	ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	body, _ := json.Marshal(names)
	var mu sync.Mutex
	var values []fabricmgmt.InspectValue
	var errs []string
	err := n.eachPeer(func(id, addr string) {
		if !match.MatchString(id) {
			return
		}
		out, err := n.Raft.CallRPC(ctx, addr, rpcInspect, body)
		var vs []fabricmgmt.InspectValue
		if err == nil {
			err = json.Unmarshal(out, &vs)
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, id+": "+err.Error())
			return
		}
		values = append(values, vs...)
	})
	if err != nil {
		errs = append(errs, n.Raft.ID()+": the other members are not known: "+err.Error())
	}
	sort.SliceStable(values, func(i, j int) bool { return values[i].AppID < values[j].AppID })
	sort.Strings(errs)
	return values, errs
}
