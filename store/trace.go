package store

import "time"

// TraceSpec turns tracing of an identity's data flow on or off until a time.
// The controller keeps it replicated; routers that carry the identity's
// traffic read it from the identity.
type TraceSpec struct {
	Enabled  bool      `json:"enabled"`
	TraceID  string    `json:"traceId"`
	Channels []string  `json:"channels"`
	Until    time.Time `json:"until"`
}

// SetTrace stores an identity's trace spec.
func (tx *Tx) SetTrace(id string, spec *TraceSpec, at time.Time) error {
	i, err := GetAs[*Identity](tx, KindIdentity, id)
	if err != nil {
		return err
	}
	n := *i
	n.Trace, n.UpdatedAt = spec, at
	return tx.Replace(KindIdentity, &n)
}
