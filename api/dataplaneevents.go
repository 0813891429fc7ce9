package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"edgectl/dataplane/dpevent"
	"edgectl/store/filter"
)

// Data-plane events (docs/api-events.md, "Data-plane events"): this
// node's, from its ring buffer (never the log): GET /data-plane-events
// lists those kept, GET /data-plane-events/stream streams them as
// Server-Sent Events as the audit stream does.

func (s *Server) dataPlaneEventRoutes() []route {
	return []route{
		{managementAPI, get, "/data-plane-events", "listDataPlaneEvents", "Event", admin, s.listDataPlaneEvents},
		{managementAPI, get, "/data-plane-events/stream", "streamDataPlaneEvents", "Event", admin, s.streamDataPlaneEvents},
	}
}

// dpListMax bounds a page of data-plane events.
const dpListMax = 1000

// eventFrom reads fromId, or Last-Event-ID then fromId for a stream (def
// when neither): where a list or a stream of events (audit or data-plane)
// resumes.
func eventFrom(c *call, header bool, def int64) (int64, error) {
	vals := []string{c.r.URL.Query().Get("fromId")}
	if header {
		vals = []string{c.r.Header.Get("Last-Event-ID"), vals[0]}
	}
	for _, v := range vals {
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, badQuery("fromId", errors.New("must be an event id (a whole number of at least 0)"))
		}
		return n, nil
	}
	return def, nil
}

// dataPlaneQuery is this node's data-plane event log (404 when it keeps
// none) and the request's compiled filter.
func (s *Server) dataPlaneQuery(c *call) (*dpevent.Log, *filter.Query, error) {
	if s.DataPlaneEvents == nil {
		return nil, nil, &apiError{status: http.StatusNotFound, code: "NOT_FOUND", message: "this node keeps no data-plane events (--data-plane-events=false)"}
	}
	q, err := dpevent.Compile(c.r.URL.Query().Get("filter"))
	if err != nil {
		return nil, nil, badQuery("filter", err)
	}
	return s.DataPlaneEvents, q, nil
}

// listDataPlaneEvents lists the kept events after fromId (default: every
// one kept) that match filter, oldest first, limit (100, at most 1000) at
// a time.
func (s *Server) listDataPlaneEvents(c *call) error {
	log, q, err := s.dataPlaneQuery(c)
	if err != nil {
		return err
	}
	from, err := eventFrom(c, false, 0)
	if err != nil {
		return err
	}
	limit := 100
	if v := c.r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > dpListMax {
			return badQuery("limit", fmt.Errorf("must be a whole number from 1 to %d", dpListMax))
		}
		limit = n
	}
	out := []*dpevent.Event{}
	oldest, _ := log.After(from, func(e *dpevent.Event) bool {
		if q.Match(e) {
			out = append(out, e)
		}
		return len(out) < limit
	})
	c.okMeta(out, map[string]any{"nodeId": log.NodeID(), "oldestId": oldest, "lastId": log.Last()})
	return nil
}

// streamDataPlaneEvents serves the events after Last-Event-ID or fromId
// (else from now on) that match filter, then each new one as it is
// recorded. A resume point older than what is kept gets an `event: lost`
// naming the oldest kept id first (the ring buffer moved on: no 410, the
// stream goes on with what is kept). A client too slow to take a batch in
// streamWriteWait is disconnected, as on the audit stream.
func (s *Server) streamDataPlaneEvents(c *call) error {
	log, q, err := s.dataPlaneQuery(c)
	if err != nil {
		return err
	}
	from, err := eventFrom(c, true, log.Last())
	if err != nil {
		return err
	}
	st := s.startStream(c)
	defer st.close()
	ctx := c.r.Context()
	for {
		changed := log.Changed()
		st.batch.Reset()
		n, start := 0, from
		oldest, lost := log.After(from, func(e *dpevent.Event) bool {
			from = e.ID
			if q.Match(e) {
				raw, err := json.Marshal(e)
				if err != nil {
					return false
				}
				fmt.Fprintf(&st.batch, "id: %d\ndata: %s\n\n", e.ID, raw)
				n++
			}
			return n < streamBatch && st.batch.Len() < streamBytes
		})
		if lost {
			fmt.Fprintf(c.w, "event: lost\ndata: {\"oldestId\":%d,\"message\":\"the events after %d are no longer kept on this node\"}\n\n", oldest, start)
			from = max(from, oldest-1)
		}
		if st.send(n, lost) != nil {
			return nil
		}
		if n == streamBatch || st.batch.Len() >= streamBytes {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-time.After(streamHeartbeat):
		}
	}
}
