package controller

import (
	"context"
	"encoding/json"
	"fmt"

	"edgectl/dataplane/dpevent"
	"edgectl/webhook"
)

// Data-plane events (package dpevent, docs/api-events.md): this node's
// ring buffer, the file they are appended to, and their webhook
// deliveries. The API streams them (api/dataplaneevents.go, wsevents.go).

// Data-plane events file formats.
const (
	FormatEdgectl  = "edgectl"
	FormatOpenZiti = "openziti"
)

func (c *Config) validateDataPlaneEvents(set func(flag string, zero bool) bool) error {
	switch {
	case set("data-plane-events-format", c.DataPlaneEventsFormat == "") && c.DataPlaneEventsFormat != FormatEdgectl && c.DataPlaneEventsFormat != FormatOpenZiti:
		return fmt.Errorf("--data-plane-events-format %q: use edgectl or openziti", c.DataPlaneEventsFormat)
	case set("data-plane-event-retention-count", c.DataPlaneEventsCount == 0) && c.DataPlaneEventsCount < 1:
		return fmt.Errorf("--data-plane-event-retention-count %d: must be at least 1 (--data-plane-events=false turns them off)", c.DataPlaneEventsCount)
	case set("data-plane-event-retention", c.DataPlaneEventsMaxAge == 0) && c.DataPlaneEventsMaxAge <= 0:
		return fmt.Errorf("--data-plane-event-retention %s: must be more than 0 (--data-plane-events=false turns them off)", c.DataPlaneEventsMaxAge)
	case c.NoDataPlaneEvents && c.DataPlaneEventsFile != "":
		return fmt.Errorf("--data-plane-events-file %q: the data-plane events are off (--data-plane-events=false)", c.DataPlaneEventsFile)
	}
	return nil
}

// newDataPlaneEvents is this node's ring buffer (nil when they are off).
func (n *Node) newDataPlaneEvents() *dpevent.Log {
	if n.cfg.NoDataPlaneEvents {
		return nil
	}
	return dpevent.New(dpevent.Config{NodeID: n.Raft.ID(), Count: n.cfg.DataPlaneEventsCount, MaxAge: n.cfg.DataPlaneEventsMaxAge, Now: n.cfg.Now})
}

// startDataPlaneDelivery runs the webhook deliveries of this node's
// data-plane events until the node stops.
func (n *Node) startDataPlaneDelivery(ctx context.Context) {
	if n.dpEvents == nil || n.deliverer == nil {
		return
	}
	d := &webhook.DataPlaneDeliverer{D: n.deliverer, Events: n.dpEvents}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		d.Run(ctx)
	}()
}

// startDataPlaneEventsFile appends the data-plane events to
// --data-plane-events-file from now on, one JSON object a line (in
// OpenZiti's format, an event of a kind OpenZiti has none for is left
// out), rotated as the events file is.
func (n *Node) startDataPlaneEventsFile() error {
	if n.cfg.DataPlaneEventsFile == "" || n.dpEvents == nil {
		return nil
	}
	ef := &eventsFile{path: n.cfg.DataPlaneEventsFile, maxSize: n.cfg.EventsFileMaxSize, keep: n.cfg.EventsFileKeep}
	if err := ef.open(); err != nil {
		return fmt.Errorf("--data-plane-events-file: %w", err)
	}
	openziti := n.cfg.DataPlaneEventsFormat == FormatOpenZiti
	from := n.dpEvents.Last()
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer ef.close()
		for {
			changed := n.dpEvents.Changed()
			var werr error
			oldest, lost := n.dpEvents.After(from, func(e *dpevent.Event) bool {
				from = e.ID
				values := []any{e}
				if openziti {
					values = dpevent.OpenZiti(e, 3)
				}
				for _, v := range values {
					line, err := json.Marshal(v)
					if err == nil {
						err = ef.writeLine(append(line, '\n'))
					}
					if err != nil {
						werr = err
						return false
					}
				}
				return true
			})
			if lost {
				n.log.Warn("data-plane events file: events were dropped by the retention before they were written", "before", oldest)
			}
			if werr == nil {
				werr = ef.w.Flush()
			}
			if werr != nil {
				n.log.Error("data-plane events file: write failed", "path", ef.path, "error", werr)
			}
			select {
			case <-n.stopping:
				return
			case <-changed:
			}
		}
	}()
	return nil
}
