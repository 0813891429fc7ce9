package ziti

import (
	"testing"
	"time"

	"edgectl/dataplane/wire"

	"github.com/openziti/metrics"
	"github.com/openziti/metrics/metrics_pb"
	"google.golang.org/protobuf/proto"
)

// Usage (dataplane/wire/usage.go): what OpenZiti's usage registry (the
// router's) reports of a circuit's traffic, read by edgectl's decoder; and
// edgectl's encoding (the tests' router) read by OpenZiti's generated code.

type usageSource struct {
	id   string
	tags map[string]string
}

func (s usageSource) GetIntervalId() string      { return s.id }
func (s usageSource) GetTags() map[string]string { return s.tags }

type metricsHandler chan *metrics_pb.MetricsMessage

func (h metricsHandler) AcceptMetrics(m *metrics_pb.MetricsMessage) { h <- m }

func TestDecode_UsageFromOpenZitiRegistry(t *testing.T) {
	closed := make(chan struct{})
	defer close(closed)
	cfg := metrics.DefaultUsageRegistryConfig("router-a", closed)
	cfg.IntervalAgeThreshold = time.Nanosecond // the current interval is flushed too
	reg := metrics.NewUsageRegistry(cfg)
	h := make(metricsHandler, 16)
	reg.StartReporting(h, 50*time.Millisecond, 16) // as the router does, on a short interval
	counter := reg.UsageCounter("usage", time.Minute)
	tags := map[string]string{"clientId": "id-1", "serviceId": "svc-1", "hostId": "host-1"}
	now := time.Now()
	counter.Update(usageSource{"circuit-1", tags}, "ingress.rx", now, 1000)
	counter.Update(usageSource{"circuit-1", tags}, "ingress.rx", now, 24)
	counter.Update(usageSource{"circuit-1", tags}, "ingress.tx", now, 512)
	counter.Update(usageSource{"circuit-2", nil}, "fabric.tx", now, 7)
	var msg *metrics_pb.MetricsMessage
	deadline := time.After(10 * time.Second)
	for msg == nil || len(msg.UsageCounters) == 0 {
		select {
		case msg = <-h:
		case <-deadline:
			t.Fatal("OpenZiti's registry reported no usage")
		}
	}
	for _, m := range []proto.Message{msg, withUnknown(msg)} {
		src, counters, err := wire.DecodeUsage(marshal(t, m))
		want := []wire.UsageCounter{{IntervalStartUTC: now.Truncate(time.Minute).Unix(), IntervalLength: 60, Buckets: map[string]wire.UsageBucket{
			"circuit-1": {Values: map[string]uint64{"ingress.rx": 1024, "ingress.tx": 512}, Tags: tags},
			"circuit-2": {Values: map[string]uint64{"fabric.tx": 7}, Tags: map[string]string{}},
		}}}
		checkDecoded(t, "MetricsMessage usage", struct {
			Source   string
			Counters []wire.UsageCounter
		}{src, counters}, struct {
			Source   string
			Counters []wire.UsageCounter
		}{"router-a", want}, err)
	}
}

func TestEncode_UsageReadByOpenZiti(t *testing.T) {
	b := wire.EncodeUsage("router-b", []wire.UsageCounter{{IntervalStartUTC: 1737145920, IntervalLength: 1, Buckets: map[string]wire.UsageBucket{
		"c1": {Values: map[string]uint64{"egress.rx": 9, "egress.tx": 10}, Tags: map[string]string{"serviceId": "s"}},
	}}})
	var z metrics_pb.MetricsMessage
	if err := proto.Unmarshal(b, &z); err != nil {
		t.Fatal(err)
	}
	if z.SourceId != "router-b" || len(z.UsageCounters) != 1 {
		t.Fatalf("OpenZiti read %v", &z)
	}
	c := z.UsageCounters[0]
	if c.IntervalStartUTC != 1737145920 || c.IntervalLength != 1 || c.Buckets["c1"].Values["egress.tx"] != 10 ||
		c.Buckets["c1"].Values["egress.rx"] != 9 || c.Buckets["c1"].Tags["serviceId"] != "s" {
		t.Fatalf("OpenZiti read %v", c)
	}
}
