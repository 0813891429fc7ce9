package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"edgectl/store"
	"edgectl/store/filter"
)

// The event log (docs/api-events.md): GET /events lists the events the
// commands yielded, oldest first, with the list parameters and fromId.

func (s *Server) eventRoutes() []route {
	return []route{
		{managementAPI, get, "/events", "listEvents", "Event", admin, s.listEvents},
		{managementAPI, get, "/events/stream", "streamEvents", "Event", admin, s.streamEvents},
	}
}

// listEvents lists events in id order; fromId=N starts after event N.
func (s *Server) listEvents(c *call) error {
	lr, err := c.parseList(store.KindEvent.Fields, false)
	if err != nil {
		return err
	}
	var from int64
	if v := c.r.URL.Query().Get("fromId"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return badQuery("fromId", errors.New("must be an event id (a whole number of at least 0)"))
		}
		from = n
	}
	if oldest, lost := c.tx.EventsLost(from); from > 0 && lost {
		return &apiError{status: http.StatusGone, code: "EVENTS_COMPACTED",
			message: fmt.Sprintf("the events after %d are no longer kept: the oldest kept event is %d (read from fromId=%d)", from, oldest, oldest-1)}
	}
	src := func(fn func(store.Record) bool) {
		c.tx.EventsAfter(from, func(e *store.Event) bool { return fn(e) }) // a seek, not a scan from the oldest
	}
	return c.page(lr, src, -1, func(r store.Record) any { return store.EventView(r.(*store.Event)) })
}

// Event stream parameters.
const (
	streamPoll      = 200 * time.Millisecond // how often a caught-up stream looks for new events
	streamHeartbeat = 15 * time.Second       // a comment line keeps proxies from closing an idle stream
	streamBatch     = 500                    // events written per look at most
	streamBytes     = 64 << 10               // and about this many bytes: the most a stream holds in memory
	streamWriteWait = 10 * time.Second       // a client that takes longer to read a batch is disconnected
)

// streamEvents serves GET /events/stream as Server-Sent Events: each event
// as `id: N` and `data: {json}`, from after Last-Event-ID or ?fromId (else
// from now on), then new ones as they are applied. The stream reads the
// events from the model (the log keeps them), so it holds at most one batch
// in memory; a client too slow to take a batch in time is disconnected.
func (s *Server) streamEvents(c *call) error {
	// ?filter= takes the conditions of GET /events (not sort, skip or limit):
	// only the events that match are sent.
	q, err := filter.Compile(c.r.URL.Query().Get("filter"), store.KindEvent.Fields)
	if err != nil {
		return badQuery("filter", err)
	}
	_, skip := q.Skip()
	_, limit, _ := q.Limit()
	if q.HasSort() || skip || limit {
		return badQuery("filter", errors.New("a stream takes conditions only, not sort by, skip or limit"))
	}
	from, err := eventFrom(c, true, c.tx.Events().LastSeq)
	if err != nil {
		return err
	}
	if oldest, lost := c.tx.EventsLost(from); from > 0 && lost {
		return &apiError{status: http.StatusGone, code: "EVENTS_COMPACTED",
			message: fmt.Sprintf("the events after %d are no longer kept: the oldest kept event is %d", from, oldest)}
	}
	st := s.startStream(c)
	defer st.close()
	ctx := c.r.Context()
	for {
		tx := s.Store.Read()
		if oldest, lost := tx.EventsLost(from); from > 0 && lost {
			fmt.Fprintf(c.w, "event: error\ndata: {\"code\":\"EVENTS_COMPACTED\",\"message\":\"this stream fell behind the event log's retention: resume from %d\"}\n\n", oldest-1)
			_ = st.rc.Flush()
			return nil
		}
		st.batch.Reset()
		n, scanned, batchStart := 0, 0, from
		tx.EventsAfter(from, func(e *store.Event) bool {
			from = e.Seq
			scanned++
			if q.Match(e) {
				raw, err := json.Marshal(store.EventView(e))
				if err != nil {
					return false
				}
				fmt.Fprintf(&st.batch, "id: %d\ndata: %s\n\n", e.Seq, raw)
				n++
			}
			return n < streamBatch && scanned < 10*streamBatch && st.batch.Len() < streamBytes
		})
		if err := st.send(n, false); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				// Too slow: a last word, if the client reads at all, then the connection closes.
				_ = st.rc.SetWriteDeadline(time.Now().Add(time.Second))
				fmt.Fprintf(c.w, "event: error\ndata: {\"code\":\"TOO_SLOW\",\"message\":\"this client did not read the stream fast enough and is disconnected: resume with Last-Event-ID %d at the latest\"}\n\n", batchStart)
				_ = st.rc.Flush()
			}
			return nil
		}
		if n == streamBatch || scanned == 10*streamBatch || st.batch.Len() >= streamBytes {
			continue // more waiting: no pause
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(streamPoll):
		}
	}
}
