package api

import (
	"encoding/json"
	"net/http"

	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
	"edgectl/store/filter"
	"edgectl/webhook"
)

// Event subscriptions (webhooks, docs/api-events.md): the leader POSTs the
// events a subscription's filter matches to its https URL, signed with its
// secret. The secret is write-only; the delivery state is read-only.

// decodeEventFilter accepts the filter language of GET /events.
func decodeEventFilter(raw json.RawMessage) (any, error) {
	var s string
	if err := unmarshalField("filter", raw, &s); err != nil {
		return nil, err
	}
	if _, err := filter.Compile(s, store.KindEvent.Fields); err != nil {
		return nil, invalidField("filter", "is not a valid event filter: "+err.Error(), s)
	}
	return s, nil
}

// decodeCABundle accepts a PEM bundle of one or more certificates.
func decodeCABundle(raw json.RawMessage) (any, error) {
	var s string
	if err := unmarshalField("caPem", raw, &s); err != nil {
		return nil, err
	}
	if _, err := pki.ParseCertsPEM([]byte(s)); err != nil {
		return nil, invalidField("caPem", "must be a PEM bundle of one or more certificates: "+err.Error(), nil)
	}
	return s, nil
}

// eventSubscriptionFields are the writable fields. The secret is required
// on create; a PUT without it keeps the one stored (it is never shown, so a
// client cannot send it back).
var eventSubscriptionFields = []field{
	{name: "name", kind: fString, required: true, min: 1, max: 255},
	{name: "url", kind: fCustom, required: true, custom: urlDecoder("url", true), ui: fieldUI{placeholder: "https://"}},
	{name: "filter", kind: fCustom, nullable: true, def: "", custom: decodeEventFilter},
	{name: "secret", kind: fString, min: 16, max: 1024, ui: fieldUI{input: "password", help: "at least 16 characters; never shown again"}},
	{name: "caPem", kind: fCustom, nullable: true, custom: emptyIsNull(decodeCABundle), ui: fieldUI{input: "pem"}},
	{name: "isEnabled", kind: fBool, nullable: true, def: true},
	tagsField,
}

// checkSubscription: a secret on create, and a URL that is not the
// controller's own.
func (s *Server) checkSubscription(c *call, p *parsed) error {
	if v, ok := p.values["secret"]; c.r.Method == http.MethodPost && (!ok || v == nil) {
		return invalidField("secret", "is required: the receiver checks each delivery's signature with it (16 characters or more)", nil)
	}
	if v, ok := p.patch["secret"]; ok && string(v) == "null" {
		delete(p.patch, "secret") // PUT without a secret keeps it
	}
	if u, ok := p.values["url"].(string); ok {
		if err := webhook.ClusterEndpoints(c.tx, s.cfg.ListenAddrs...).CheckURL(u); err != nil {
			return invalidField("url", err.Error(), u)
		}
	}
	return nil
}

func (s *Server) eventSubscriptionRoutes() []route {
	k := store.KindEventSubscription
	return crudRoutes("/event-subscriptions", "EventSubscription", "EventSubscriptions", "Event Subscription", crudOps{
		list: func(c *call) error {
			return c.listKind(k, false, func(r store.Record) any { return eventSubscriptionView(c.tx, r.(*store.EventSubscription)) })
		},
		create: s.createHandler(k, "event-subscriptions", eventSubscriptionFields, fsm.CmdEventSubscriptionCreate, s.checkSubscription),
		detail: func(c *call) error {
			sub, err := store.GetAs[*store.EventSubscription](c.tx, k, c.param("id"))
			if err != nil {
				return err
			}
			c.ok(eventSubscriptionView(c.tx, sub))
			return nil
		},
		update: func(m mode) func(c *call) error {
			return s.updateHandler(k, eventSubscriptionFields, fsm.CmdEventSubscriptionUpdate, m, s.checkSubscription)
		},
		del: s.deleteHandler(fsm.CmdEventSubscriptionDelete),
	})
}

// eventSubscriptionView shows a subscription without its secret, with its
// delivery state; pending counts the matching events not delivered yet.
func eventSubscriptionView(tx *store.Tx, sub *store.EventSubscription) map[string]any {
	v := namedRecordView(sub, "event-subscriptions", sub.Tags)
	v["url"], v["filter"], v["caPem"], v["isEnabled"] = sub.URL, sub.Filter, sub.CaPem, sub.IsEnabled
	v["lastDeliveredId"], v["lastError"], v["lastErrorAt"] = sub.Cursor, sub.LastError, sub.LastErrorAt
	v["pending"] = webhook.Pending(tx, sub)
	return v
}
