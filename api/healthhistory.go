package api

import (
	"context"
	"sync"
	"time"
)

// The node's health over the last hour, for the console's overview charts:
// a sample every healthEvery, the last healthSamples kept in memory (the node
// keeps no other history of these: they are what it sees now, sampled).
const (
	healthEvery   = 30 * time.Second
	healthSamples = 120
)

// healthSample is what the node saw at one moment: its applied and commit
// indexes, the members up and the largest lag among them, the routers with
// a channel to it.
type healthSample struct {
	At               time.Time `json:"at"`
	AppliedIndex     uint64    `json:"appliedIndex"`
	CommitIndex      uint64    `json:"commitIndex"`
	MembersUp        int       `json:"membersUp"`
	Members          int       `json:"members"`
	MaxLag           uint64    `json:"maxLag"`
	RoutersConnected int       `json:"routersConnected"`
}

// healthRing holds the samples, oldest first.
type healthRing struct {
	mu      sync.Mutex
	samples []healthSample
}

func (r *healthRing) add(s healthSample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, s)
	if len(r.samples) > healthSamples {
		r.samples = r.samples[len(r.samples)-healthSamples:]
	}
}

func (r *healthRing) all() []healthSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]healthSample{}, r.samples...)
}

// SampleHealth records a health sample now and every healthEvery until ctx
// ends (the node runs it for its lifetime).
func (s *Server) SampleHealth(ctx context.Context) {
	t := time.NewTicker(healthEvery)
	defer t.Stop()
	for {
		s.health.add(s.sampleHealth())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *Server) sampleHealth() healthSample {
	out := healthSample{At: s.now().UTC()}
	if s.Cluster != nil {
		st := s.Cluster.Stats()
		out.AppliedIndex, out.CommitIndex = st.AppliedIndex, st.CommitIndex
		if members, err := s.Cluster.Members(); err == nil {
			target := s.Cluster.CommitTarget()
			out.Members = len(members)
			for _, m := range members {
				if m.ID == s.Cluster.ID() {
					out.MembersUp++
					continue
				}
				if s.Peers == nil {
					continue
				}
				online, applied, known := s.Peers.PeerStatus(m.ID)
				if online {
					out.MembersUp++
				}
				if known && target > applied {
					out.MaxLag = max(out.MaxLag, target-applied)
				}
			}
		}
	}
	if s.Routers != nil {
		out.RoutersConnected = len(s.Routers.Connected())
	}
	return out
}

// getHealthHistory answers the samples of the last hour (GET /health-history,
// an edgectl extension).
func (s *Server) getHealthHistory(c *call) error {
	samples := s.health.all()
	c.okMeta(samples, map[string]any{"pagination": map[string]any{"limit": len(samples), "offset": 0, "totalCount": len(samples)},
		"intervalSeconds": int(healthEvery.Seconds())})
	return nil
}
