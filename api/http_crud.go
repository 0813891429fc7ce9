package api

import (
	"edgectl/auth"
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

// newRecord validates a create body against fields and fills rec from it,
// with a fresh id and the request's time. It returns the validated body for
// handlers that use fields outside the record (such as enrollment).
func (s *Server) newRecord(c *call, rec store.Record, fields []field) (*parsed, error) {
	raw, err := decodeObject(c.r)
	if err != nil {
		return nil, err
	}
	p, err := parseFields(raw, fields, modeCreate)
	if err != nil {
		return nil, err
	}
	if err := fill(rec, p.patch); err != nil {
		return nil, err
	}
	now := s.now()
	b := store.BaseOf(rec)
	b.ID, b.CreatedAt, b.UpdatedAt = auth.NewID(), now, now
	return p, nil
}
