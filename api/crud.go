package api

import (
	"edgectl/fsm"
	"edgectl/store"
)

// updateHandler serves PUT (m = modePut) or PATCH of a kind whose body is a
// field list: the record must exist, the body is validated against the
// fields, and cmd is proposed with the patch. The FSM applies the patch to the
// record as it is at that point of the log.
func (s *Server) updateHandler(k *store.Kind, fields []field, cmd fsm.CommandType, m mode) func(c *call) error {
	return func(c *call) error {
		id := c.param("id")
		if !c.tx.Exists(k, id) {
			return notFound(k.Entity, id)
		}
		raw, err := decodeObject(c.r)
		if err != nil {
			return err
		}
		p, err := parseFields(raw, fields, m)
		if err != nil {
			return err
		}
		_, err = s.Writer.Do(c.r.Context(), cmd, fsm.Update{ID: id, Patch: p.patch, At: s.now()})
		return err
	}
}

// deleteHandler serves the DELETE of one record with cmd.
func (s *Server) deleteHandler(cmd fsm.CommandType) func(c *call) error {
	return func(c *call) error {
		_, err := s.Writer.Do(c.r.Context(), cmd, fsm.Delete{ID: c.param("id")})
		return err
	}
}
