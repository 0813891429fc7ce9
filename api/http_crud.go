package api

import (
	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/store"
)

// The generic writes of a resource whose body is a field list. A resource
// that needs one check beyond its fields (a certificate to parse, a derived
// field to add) passes it as a prepare hook; the few writes that need more
// (a payload other than the record, a retry when the config type changed
// under them, fields that depend on the body's type) are written out in
// their resource's file on top of parseBody.

// prepareFunc runs on a validated body before it is proposed: it may refuse
// it (return a field error) or add derived fields to p.patch (p.set).
type prepareFunc func(c *call, p *parsed) error

// parseBody decodes the request's JSON object and validates it against fields.
func parseBody(c *call, fields []field, m mode) (*parsed, error) {
	raw, err := decodeObject(c.r)
	if err != nil {
		return nil, err
	}
	return parseFields(raw, fields, m)
}

// createHandler serves the POST of a kind: the body is validated against
// fields, prepare (when set) runs, and cmd is proposed with the new record.
// The answer is 201 with the record's id under path.
func (s *Server) createHandler(k *store.Kind, path string, fields []field, cmd fsm.CommandType, prepare prepareFunc) func(c *call) error {
	return func(c *call) error {
		rec := k.New()
		if _, err := s.newRecord(c, rec, fields, prepare); err != nil {
			return err
		}
		if _, err := s.Writer.Do(c.r.Context(), cmd, rec); err != nil {
			return err
		}
		c.created(path, rec.GetID())
		return nil
	}
}

// updateHandler serves PUT (m = modePut) or PATCH of a kind: the record must
// exist, the body is validated against the fields, prepare (when set) runs,
// and cmd is proposed with the patch. The FSM applies the patch to the
// record as it is at that point of the log.
func (s *Server) updateHandler(k *store.Kind, fields []field, cmd fsm.CommandType, m mode, prepare prepareFunc) func(c *call) error {
	return func(c *call) error {
		id := c.param("id")
		if !c.tx.Exists(k, id) {
			return notFound(k.Entity, id)
		}
		p, err := parseBody(c, fields, m)
		if err != nil {
			return err
		}
		if prepare != nil {
			if err := prepare(c, p); err != nil {
				return err
			}
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

// newRecord validates a create body against fields, runs prepare (when
// set) and fills rec from it, with a fresh id and the request's time. It
// returns the validated body for handlers that use fields outside the
// record (such as enrollment).
func (s *Server) newRecord(c *call, rec store.Record, fields []field, prepare prepareFunc) (*parsed, error) {
	p, err := parseBody(c, fields, modeCreate)
	if err != nil {
		return nil, err
	}
	if prepare != nil {
		if err := prepare(c, p); err != nil {
			return nil, err
		}
	}
	if err := fill(rec, p.patch); err != nil {
		return nil, err
	}
	now := s.now()
	b := store.BaseOf(rec)
	b.ID, b.CreatedAt, b.UpdatedAt = auth.NewID(), now, now
	return p, nil
}
