package controller

import (
	"github.com/prometheus/client_golang/prometheus"

	"edgectl/store"
)

// eventCollector reads the event counts and the webhook state when /metrics
// is scraped.
type eventCollector struct{ n *Node }

var (
	descEventsEmitted = prometheus.NewDesc("edgectl_events_total",
		"Events this node's state machine recorded since the process started, by namespace.", []string{"namespace"}, nil)
	descEventsLast = prometheus.NewDesc("edgectl_events_last_id", "The id of the newest event in the log.", nil, nil)
	descSubLag     = prometheus.NewDesc("edgectl_event_subscription_lag_events",
		"Events recorded after a subscription's delivery cursor (its filter not applied).", []string{"subscription"}, nil)
	descSubFailing = prometheus.NewDesc("edgectl_event_subscription_failing",
		"1 when a subscription's last delivery attempt failed.", []string{"subscription"}, nil)
	descDeliveries = prometheus.NewDesc("edgectl_event_deliveries_total",
		"Events this node delivered to a subscription as leader, and failed delivery attempts.", []string{"subscription", "result"}, nil)
	descDelivering = prometheus.NewDesc("edgectl_event_subscriptions_delivering",
		"Subscriptions this node is delivering to (non-zero on the leader only).", nil, nil)
)

func (c *eventCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descEventsEmitted, descEventsLast, descSubLag, descSubFailing, descDeliveries, descDelivering} {
		ch <- d
	}
}

func (c *eventCollector) Collect(ch chan<- prometheus.Metric) {
	for ns, v := range c.n.FSM.EventsEmitted() {
		ch <- prometheus.MustNewConstMetric(descEventsEmitted, prometheus.CounterValue, float64(v), ns)
	}
	tx := c.n.Store.Read()
	last := tx.Events().LastSeq
	ch <- prometheus.MustNewConstMetric(descEventsLast, prometheus.GaugeValue, float64(last))
	names := map[string]string{}
	tx.Each(store.KindEventSubscription, "id", func(r store.Record) bool {
		s := r.(*store.EventSubscription)
		names[s.ID] = s.Name
		ch <- prometheus.MustNewConstMetric(descSubLag, prometheus.GaugeValue, float64(max(last-s.Cursor, 0)), s.Name)
		failing := 0.0
		if s.LastError != nil {
			failing = 1
		}
		ch <- prometheus.MustNewConstMetric(descSubFailing, prometheus.GaugeValue, failing, s.Name)
		return true
	})
	if d := c.n.deliverer; d != nil {
		ch <- prometheus.MustNewConstMetric(descDelivering, prometheus.GaugeValue, float64(d.Active()))
		for id, st := range d.Snapshot() {
			name, ok := names[id]
			if !ok {
				continue // deleted
			}
			ch <- prometheus.MustNewConstMetric(descDeliveries, prometheus.CounterValue, float64(st.Delivered), name, "delivered")
			ch <- prometheus.MustNewConstMetric(descDeliveries, prometheus.CounterValue, float64(st.Failures), name, "failed")
		}
	}
}
