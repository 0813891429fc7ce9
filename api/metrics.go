package api

import (
	"net/http"
	"strconv"
	"time"

	"edgectl/store"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the Prometheus metrics of one node: requests per operation and
// their latency, the Raft state, and the number of records of every kind.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// loginFailures counts failed logins by what became of them: counted
	// (by a lockout policy), recorded (for the audit trail only,
	// auditFailure), not_recorded (throttled, or the cluster could not take
	// the command), unknown_username.
	loginFailures *prometheus.CounterVec
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edgectl_http_requests_total", Help: "API requests by API, operation and status code.",
		}, []string{"api", "operation", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "edgectl_http_request_duration_seconds", Help: "API request latency by API and operation.",
			Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"api", "operation"}),
		loginFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edgectl_login_failures_total", Help: "Failed logins this node took: counted by a lockout policy, recorded in the audit trail only, not_recorded (throttled), unknown_username.",
		}, []string{"result"}),
	}
	for _, r := range []string{"counted", "recorded", "not_recorded", "unknown_username"} {
		m.loginFailures.WithLabelValues(r) // exported from the start, for alert rules and dashboards
	}
	m.reg.MustRegister(m.requests, m.latency, m.loginFailures, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&stateCollector{s: s},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edgectl_event_stream_subscribers", Help: "Open GET /events/stream connections on this node."},
			func() float64 { return float64(s.streams.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "edgectl_event_stream_disconnects_total", Help: "Event streams this node closed because the client read too slowly."},
			func() float64 { return float64(s.streamsDropped.Load()) }))
	return m
}

// RegisterCollector adds metrics the node keeps outside the API (event
// counts, webhook deliveries) to /metrics.
func (s *Server) RegisterCollector(c prometheus.Collector) { s.metrics.reg.MustRegister(c) }

// observe records one served request.
func (m *metrics) observe(a apiKind, op string, code int, took time.Duration) {
	name := "client"
	if a == managementAPI {
		name = "management"
	}
	m.requests.WithLabelValues(name, op, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(name, op).Observe(took.Seconds())
}

// MetricsHandler serves the metrics in the Prometheus text format.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})
}

// stateCollector reads the Raft state and record counts when scraped.
type stateCollector struct{ s *Server }

var (
	descRaft = prometheus.NewDesc("edgectl_raft_index", "Raft indexes of this node (last log, commit, applied, last snapshot).",
		[]string{"kind"}, nil)
	descTerm    = prometheus.NewDesc("edgectl_raft_term", "Current Raft term of this node.", nil, nil)
	descLeader  = prometheus.NewDesc("edgectl_raft_is_leader", "1 when this node is the Raft leader.", nil, nil)
	descRecords = prometheus.NewDesc("edgectl_records", "Records in the model by kind.", []string{"kind"}, nil)

	descSnapWriting = prometheus.NewDesc("edgectl_raft_snapshots_writing",
		"Raft snapshots being written by this node now (taken, or installed from the leader).", nil, nil)
	descSnapWritten = prometheus.NewDesc("edgectl_raft_snapshots_written_total",
		"Raft snapshots this node wrote since it started (taken, or installed from the leader).", nil, nil)
	descForwarded = prometheus.NewDesc("edgectl_raft_forwarded_writes_total",
		"Writes this node forwarded to the leader since it started, by how this node came to have applied them before "+
			"answering: already (when the leader answered), ahead (of raft, as soon as this node's log held the entry) or "+
			"waited (for raft).", []string{"how"}, nil)
	descAnswered = prometheus.NewDesc("edgectl_raft_forwarded_answers_total",
		"Writes this node forwarded to the leader since it started, by when the leader answered: at commit (the result "+
			"being this node's own apply's) or after the leader's own apply (with its result: this node far behind).", []string{"when"}, nil)
	descCommitAnswers = prometheus.NewDesc("edgectl_raft_commit_answers_total",
		"Forwarded writes this node answered at commit as the leader since it started, by who sent the answer: raft's "+
			"apply goroutine with the commit, or the request's handler (the connection was busy, or its peer slow to "+
			"acknowledge what it was sent).", []string{"sent_by"}, nil)
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descRaft
	ch <- descTerm
	ch <- descLeader
	ch <- descRecords
	ch <- descSnapWriting
	ch <- descSnapWritten
	ch <- descForwarded
	ch <- descAnswered
	ch <- descCommitAnswers
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	if c.s.Cluster != nil {
		st := c.s.Cluster.Stats()
		for kind, v := range map[string]uint64{"last_log": st.LastLogIndex, "commit": st.CommitIndex,
			"applied": st.AppliedIndex, "last_snapshot": st.LastSnapshotIndex} {
			ch <- prometheus.MustNewConstMetric(descRaft, prometheus.GaugeValue, float64(v), kind)
		}
		ch <- prometheus.MustNewConstMetric(descTerm, prometheus.GaugeValue, float64(st.Term))
		leader := 0.0
		if st.State == "Leader" {
			leader = 1
		}
		ch <- prometheus.MustNewConstMetric(descLeader, prometheus.GaugeValue, leader)
		ch <- prometheus.MustNewConstMetric(descSnapWriting, prometheus.GaugeValue, float64(st.SnapshotsWriting))
		ch <- prometheus.MustNewConstMetric(descSnapWritten, prometheus.CounterValue, float64(st.SnapshotsWritten))
		for how, v := range map[string]uint64{"already": st.ForwardedApplied, "ahead": st.ForwardedAhead, "waited": st.ForwardedWaited} {
			ch <- prometheus.MustNewConstMetric(descForwarded, prometheus.CounterValue, float64(v), how)
		}
		for when, v := range map[string]uint64{"commit": st.ForwardedAtCommit, "applied": st.ForwardedAfterApply} {
			ch <- prometheus.MustNewConstMetric(descAnswered, prometheus.CounterValue, float64(v), when)
		}
		for by, v := range map[string]uint64{"commit": st.CommitAnswersSentWithCommit, "handler": st.CommitAnswersSentByHandler} {
			ch <- prometheus.MustNewConstMetric(descCommitAnswers, prometheus.CounterValue, float64(v), by)
		}
	}
	tx := c.s.Store.Read()
	for _, k := range store.AllKinds {
		ch <- prometheus.MustNewConstMetric(descRecords, prometheus.GaugeValue, float64(tx.Count(k)), k.Table)
	}
}
