package api

import (
	"encoding/json"
	"fmt"
	"strings"

	"edgectl/ctrlchan"
	"edgectl/dataplane/dpevent"
	"edgectl/dataplane/wire"
)

// The management channel's event stream, as `ziti fabric stream events`
// asks for it: this node's data-plane events in OpenZiti's formats
// (dpevent.OpenZiti), for the namespaces subscribed to. The other
// namespaces OpenZiti streams (entityChange, apiSession, metrics, ...)
// are taken and send nothing (docs/api-events.md).

// zitiStreamTypes are the subscription types this node streams, with
// OpenZiti's older names for them.
var zitiStreamTypes = map[string]string{
	"circuit": dpevent.Circuit, "fabric.circuits": dpevent.Circuit,
	"usage": dpevent.Usage, "fabric.usage": dpevent.Usage,
	"link": dpevent.Link, "fabric.links": dpevent.Link,
	"router": dpevent.Router, "fabric.routers": dpevent.Router,
	"terminator": dpevent.Terminator, "fabric.terminators": dpevent.Terminator,
}

type streamEventsRequest struct {
	Format        string `json:"format"`
	Subscriptions []struct {
		Type    string         `json:"type"`
		Options map[string]any `json:"options"`
	} `json:"subscriptions"`
}

// streamEvents answers a StreamEventsRequest and streams the events until
// the channel closes.
func (mc *mgmtChannel) streamEvents(req *ctrlchan.Message) {
	fail := func(text string) {
		m := ctrlchan.NewResult(false, text)
		m.SetReplyTo(req)
		mc.send(m)
	}
	var r streamEventsRequest
	if err := json.Unmarshal(req.Body, &r); err != nil {
		fail("the stream events request is not JSON: " + err.Error())
		return
	}
	if r.Format != "" && r.Format != "json" {
		fail(fmt.Sprintf("invalid format ['%s']: edgectl streams json", r.Format))
		return
	}
	log := mc.s.DataPlaneEvents
	if log == nil {
		fail("this node keeps no data-plane events (--data-plane-events=false)")
		return
	}
	want := map[string]bool{}
	usageVersion := 3
	for _, s := range r.Subscriptions {
		ns, ok := zitiStreamTypes[strings.TrimSpace(s.Type)]
		if !ok {
			continue
		}
		want[ns] = true
		if v, ok := s.Options["version"].(float64); ok && ns == dpevent.Usage && (v == 2 || v == 3) {
			usageVersion = int(v)
		}
	}
	from := log.Last()
	m := ctrlchan.NewResult(true, "success")
	m.SetReplyTo(req)
	if !mc.send(m) {
		return
	}
	for {
		changed := log.Changed()
		gone := false
		log.After(from, func(e *dpevent.Event) bool {
			from = e.ID
			ns := dpevent.OpenZitiNamespace(e)
			if !want[ns] {
				return true
			}
			for _, v := range dpevent.OpenZiti(e, usageVersion) {
				body, err := json.Marshal(v)
				if err != nil {
					continue
				}
				msg := ctrlchan.NewMessage(wire.StreamEventsEventType, body)
				msg.Headers.PutString(wire.EventTypeHeader, ns)
				if !mc.send(msg) {
					gone = true
					return false
				}
			}
			return true
		})
		if gone {
			return
		}
		select {
		case <-mc.ctx.Done():
			return
		case <-changed:
		}
	}
}
