package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"edgectl/store"
)

// The event log (docs/api-events.md): GET /events lists the events the
// commands yielded, oldest first, with the list parameters and fromId.

func (s *Server) eventRoutes() []route {
	return []route{
		{managementAPI, get, "/events", "listEvents", "Event", admin, s.listEvents},
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
	if oldest := c.tx.OldestEventSeq(); from > 0 && oldest > 0 && from < oldest-1 {
		return &apiError{status: http.StatusGone, code: "EVENTS_COMPACTED",
			message: fmt.Sprintf("the events after %d are no longer kept: the oldest kept event is %d (read from fromId=%d)", from, oldest, oldest-1)}
	}
	src := func(fn func(store.Record) bool) {
		c.tx.Each(store.KindEvent, "id", func(r store.Record) bool {
			if r.(*store.Event).Seq <= from {
				return true
			}
			return fn(r)
		})
	}
	return c.page(lr, src, -1, func(r store.Record) any { return eventView(r.(*store.Event)) })
}

// eventView is an event as the API shows it: its id is the sequence number.
func eventView(e *store.Event) map[string]any {
	v := map[string]any{"id": e.Seq, "index": e.Index, "at": e.CreatedAt, "namespace": e.Namespace, "action": e.Action,
		"entityType": e.EntityType, "entityId": e.EntityID, "entityName": e.EntityName, "actor": e.Actor,
		"changedFields": e.ChangedFields, "before": e.Before, "after": e.After}
	if e.ChangedFields == nil {
		v["changedFields"] = []string{}
	}
	for _, k := range []string{"before", "after"} {
		if raw, _ := v[k].(json.RawMessage); len(raw) == 0 {
			v[k] = nil
		}
	}
	return v
}
