package store

import "encoding/json"

// Controller is a node of the cluster as clients see it: its name and the
// URL of its APIs. Each node registers itself when it starts.
type Controller struct {
	Base
	Named
	APIURL      string `json:"apiUrl"`
	ClusterAddr string `json:"clusterAddr"`
	// Version is the node's release; CommandVersion the newest command
	// version its binary applies (every release publishes both).
	Version        string `json:"version,omitempty"`
	CommandVersion int    `json:"commandVersion,omitempty"`
	// JWK is the public key the node signs enrollment JWTs with.
	JWK json.RawMessage `json:"jwk,omitempty"`
}

// RecordName is the node's name.
func (r *Controller) RecordName() string { return r.Name }

// KindController holds the controller records.
var KindController = &Kind{Table: "controllers", Entity: "controller", Named: true,
	new: func() Record { return &Controller{} }, Fields: namedFields(nil)}

// Controller returns the record of node id, or nil.
func (tx *Tx) Controller(id string) *Controller {
	r := tx.First(KindController, "id", id)
	if r == nil {
		return nil
	}
	return r.(*Controller)
}

// Controllers calls fn for every controller record.
func (tx *Tx) Controllers(fn func(*Controller) bool) {
	tx.Each(KindController, "id", func(r Record) bool { return fn(r.(*Controller)) })
}

// RegisterController stores a node's record, replacing the one it had.
func (tx *Tx) RegisterController(c *Controller) error {
	if old := tx.Controller(c.ID); old != nil {
		c.CreatedAt = old.CreatedAt
		return tx.Replace(KindController, c)
	}
	return tx.Insert(KindController, c)
}

// RemoveController drops the record of a node that left the cluster.
func (tx *Tx) RemoveController(id string) error {
	if !tx.Exists(KindController, id) {
		return nil
	}
	return tx.Remove(KindController, id)
}
