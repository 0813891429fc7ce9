package dataplane

import (
	"strings"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"
)

// Cluster membership reaches routers as UpdateCtrlAddresses: the
// control-channel address of every node ("tls:host:port" of its API URL).
// The router dials the new ones, drops the removed ones and rewrites its
// endpoints file; it takes a list only with an index above the last one it
// took (this node's applied index when it sends).
//
// The list is pushed when membership changes, not on every connection: a
// router's list is otherwise its operator's (the enrollment JWT names every
// node; a config may name fewer on purpose). A one-node cluster sends none:
// the address a router was configured with may be one the node does not
// advertise (a DNS name, a port mapping), and it is the only one.

// ctrlAddresses are the control-channel addresses of the cluster's nodes.
func ctrlAddresses(tx *store.Tx) []string {
	var out []string
	tx.Controllers(func(c *store.Controller) bool {
		if c.APIURL != "" {
			out = append(out, "tls:"+strings.TrimPrefix(c.APIURL, "https://"))
		}
		return true
	})
	return out
}

// ctrlAddressesMessage is the message to send routers now, or nil (one node).
func (m *Manager) ctrlAddressesMessage() *ctrlchan.Message {
	applied, _ := m.cfg.AppliedIndex()
	addrs := ctrlAddresses(m.cfg.Store.Read())
	if len(addrs) < 2 {
		return nil
	}
	leader := m.cfg.IsLeader != nil && m.cfg.IsLeader()
	return ctrlchan.NewMessage(wire.UpdateCtrlAddressesType, wire.UpdateCtrlAddresses(addrs, applied, leader))
}
