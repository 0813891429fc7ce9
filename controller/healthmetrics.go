package controller

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"edgectl/policy"
	"edgectl/store"
)

// healthCollector reads, when /metrics is scraped, what the alert rules of
// deploy/prometheus watch: the members as this node sees them, the routers
// enrolled, and when this node's certificates end.
type healthCollector struct {
	n      *Node
	expiry map[string]time.Time
}

var (
	descMemberUp = prometheus.NewDesc("edgectl_cluster_member_up",
		"1 when a member of the cluster answered this node's last probe (this node itself included).", []string{"member"}, nil)
	descMemberLag = prometheus.NewDesc("edgectl_cluster_member_lag_entries",
		"Commands committed that a member had not applied when it last answered this node.", []string{"member"}, nil)
	descRoutersEnrolled = prometheus.NewDesc("edgectl_routers_enrolled",
		"Edge routers and routers that finished enrollment and are not disabled: each should hold a channel to every node.", nil, nil)
	descServicesUnhosted = prometheus.NewDesc("edgectl_services_unhosted",
		"Services a Dial policy grants to at least one identity that have no terminator: every dial of them fails (no host binds them).", nil, nil)
	descCertExpiry = prometheus.NewDesc("edgectl_certificate_expiry_timestamp_seconds",
		"When this node's certificates end (Unix seconds): cluster, api, root_ca, intermediate_ca.", []string{"certificate"}, nil)
)

func (c *healthCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMemberUp, descMemberLag, descRoutersEnrolled, descServicesUnhosted, descCertExpiry} {
		ch <- d
	}
}

func (c *healthCollector) Collect(ch chan<- prometheus.Metric) {
	if members, err := c.n.API.Members(); err == nil {
		for _, m := range members {
			up := 0.0
			if m.Up {
				up = 1
			}
			ch <- prometheus.MustNewConstMetric(descMemberUp, prometheus.GaugeValue, up, m.ID)
			if m.LagKnown {
				ch <- prometheus.MustNewConstMetric(descMemberLag, prometheus.GaugeValue, float64(m.Lag), m.ID)
			}
		}
	}
	tx := c.n.Store.Read()
	enrolled := 0
	tx.Each(store.KindEdgeRouter, "id", func(r store.Record) bool {
		if er := r.(*store.EdgeRouter); er.Fingerprint != nil && *er.Fingerprint != "" && !er.Disabled {
			enrolled++
		}
		return true
	})
	tx.Each(store.KindRouter, "id", func(r store.Record) bool {
		if rt := r.(*store.Router); rt.Fingerprint != nil && *rt.Fingerprint != "" && !rt.Disabled {
			enrolled++
		}
		return true
	})
	ch <- prometheus.MustNewConstMetric(descRoutersEnrolled, prometheus.GaugeValue, float64(enrolled))
	ch <- prometheus.MustNewConstMetric(descServicesUnhosted, prometheus.GaugeValue, float64(unhostedServices(tx)))
	for name, t := range c.expiry {
		ch <- prometheus.MustNewConstMetric(descCertExpiry, prometheus.GaugeValue, float64(t.Unix()), name)
	}
}

// unhostedServices counts the services some identity may dial (a Dial
// policy selects the service and at least one identity) that have no
// terminator: no host binds them, so each of those dials fails.
func unhostedServices(tx *store.Tx) int {
	n := 0
	tx.Each(store.KindService, "id", func(r store.Record) bool {
		id := r.GetID()
		hosted := false
		tx.Each(store.KindTerminator, "service", func(store.Record) bool { hosted = true; return false }, id)
		if !hosted && dialable(tx, id) {
			n++
		}
		return true
	})
	return n
}

// dialable says whether a Dial policy selects the service and an identity.
func dialable(tx *store.Tx, serviceID string) bool {
	found := false
	tx.EntityPolicies(store.RelServicePolicyService, serviceID, func(policyID string) bool {
		p, err := store.GetAs[*store.ServicePolicy](tx, store.KindServicePolicy, policyID)
		if err != nil || p.Type != policy.Dial {
			return true
		}
		tx.PolicyEntities(store.RelServicePolicyIdentity, policyID, func(string) bool { found = true; return false })
		return !found
	})
	return found
}
