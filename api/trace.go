package api

import (
	"time"

	"edgectl/fsm"
	"edgectl/store"
)

// traceBody is the trace request.
type traceBody struct {
	Channels []string `json:"channels"`
	Duration *string  `json:"duration"`
	Enabled  *bool    `json:"enabled"`
	TraceID  *string  `json:"traceId"`
}

// maxTrace bounds how long tracing may be turned on at once.
const maxTrace = 24 * time.Hour

// traceIdentity turns tracing of an identity's data flow on (for a duration,
// default ten minutes) or off.
func (s *Server) traceIdentity(c *call) error {
	id := c.param("id")
	if !c.tx.Exists(store.KindIdentity, id) {
		return notFound("identity", id)
	}
	var b traceBody
	if err := decodeInto(c.r, &b); err != nil {
		return err
	}
	if b.Enabled == nil {
		return invalidField("enabled", "is required", nil)
	}
	d := 10 * time.Minute
	if b.Duration != nil && *b.Duration != "" {
		var err error
		if d, err = time.ParseDuration(*b.Duration); err != nil || d <= 0 || d > maxTrace {
			return invalidField("duration", "must be a duration such as 10m, greater than 0 and at most 24h", *b.Duration)
		}
	}
	for i, ch := range b.Channels {
		if ch == "" {
			return invalidField("channels", "channel names must not be empty", i)
		}
	}
	now := s.now()
	spec := &store.TraceSpec{Enabled: *b.Enabled, Channels: nonNilStrings(b.Channels)}
	if b.TraceID != nil && *b.TraceID != "" {
		spec.TraceID = *b.TraceID
	} else if spec.Enabled {
		spec.TraceID = newUUID()
	}
	if spec.Enabled {
		spec.Until = now.Add(d)
	} else {
		spec.Until = now
	}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdIdentityTrace, fsm.Trace{ID: id, Spec: spec, At: now}); err != nil {
		return err
	}
	c.ok(map[string]any{"enabled": spec.Enabled, "traceId": spec.TraceID, "until": spec.Until})
	return nil
}

// enumeratedCapabilities names what this controller supports beyond the base APIs.
func (s *Server) enumeratedCapabilities(c *call) error {
	c.ok([]string{"HA_CONTROLLER"})
	return nil
}
