package wire

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// Usage: what routers count of the traffic of each circuit (OpenZiti's
// metrics UsageCounter, filled by the router's xgress metrics), sent in
// metrics_pb.MetricsMessage.usageCounters (11) every report interval:
// one counter per interval, its buckets by circuit id, each with its
// values by usage type ("ingress.rx", "ingress.tx", "egress.rx",
// "egress.tx", "fabric.rx", "fabric.tx") and the circuit's tags
// (clientId, hostId, serviceId).

// UsageCounter is metrics_pb.MetricsMessage.UsageCounter: intervalStartUTC
// 1 (seconds), intervalLength 2 (seconds), buckets 3 (by circuit id).
type UsageCounter struct {
	IntervalStartUTC int64
	IntervalLength   uint64
	Buckets          map[string]UsageBucket
}

// UsageBucket is metrics_pb.MetricsMessage.UsageBucket: values 1 (by
// usage type), tags 2.
type UsageBucket struct {
	Values map[string]uint64
	Tags   map[string]string
}

// DecodeUsage reads a metrics message's source (2) and its usage counters
// (11), leaving the other metrics.
func DecodeUsage(b []byte) (source string, counters []UsageCounter, err error) {
	buckets := 0
	err = Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		switch num {
		case 2:
			source = string(raw)
		case 11:
			c := UsageCounter{Buckets: map[string]UsageBucket{}}
			err := Fields(raw, func(num protowire.Number, v uint64, raw []byte) error {
				switch num {
				case 1:
					c.IntervalStartUTC = int64(v)
				case 2:
					c.IntervalLength = v
				case 3:
					if buckets++; buckets > MaxRepeated {
						return ErrTooMany
					}
					id, _, body, err := mapEntry(raw)
					if err != nil {
						return err
					}
					bucket, err := decodeUsageBucket(body)
					if err != nil {
						return err
					}
					c.Buckets[id] = bucket
				}
				return nil
			})
			if err != nil {
				return err
			}
			counters, err = appendBounded(counters, c)
			return err
		}
		return nil
	})
	return source, counters, err
}

func decodeUsageBucket(b []byte) (UsageBucket, error) {
	u := UsageBucket{Values: map[string]uint64{}, Tags: map[string]string{}}
	n := 0
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		if n++; n > MaxRepeated {
			return ErrTooMany
		}
		k, v, r, err := mapEntry(raw)
		if err != nil {
			return err
		}
		switch num {
		case 1:
			u.Values[k] += v
		case 2:
			u.Tags[k] = string(r)
		}
		return nil
	})
	return u, err
}

// EncodeUsage encodes a metrics message of source with the usage
// counters only (the tests' router).
func EncodeUsage(source string, counters []UsageCounter) []byte {
	b := buf(nil).str(2, source)
	for _, c := range counters {
		cb := buf(nil).uint(1, uint64(c.IntervalStartUTC)).uint(2, c.IntervalLength)
		for _, id := range sortedKeys(c.Buckets) {
			u := c.Buckets[id]
			ub := buf(nil)
			for _, k := range sortedKeys(u.Values) {
				ub = ub.msg(1, buf(nil).str(1, k).uint(2, u.Values[k]))
			}
			ub = ub.strMap(2, u.Tags)
			cb = cb.msg(3, buf(nil).str(1, id).msg(2, ub))
		}
		b = b.msg(11, cb)
	}
	return b
}
