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

// MemberHealth is one member as this node sees it: up (this node itself,
// or it answered its last probe), and its lag (commands committed that it
// had not applied when it last answered) when known.
type MemberHealth struct {
	ID       string
	Up       bool
	Lag      uint64
	LagKnown bool
}

// Members is every member's health as this node sees it (for the health
// history and the node's metrics).
func (s *Server) Members() ([]MemberHealth, error) {
	members, err := s.Cluster.Members()
	if err != nil {
		return nil, err
	}
	target := s.Cluster.CommitTarget()
	out := make([]MemberHealth, 0, len(members))
	for _, m := range members {
		h := MemberHealth{ID: m.ID}
		applied, known := uint64(0), false
		if m.ID == s.Cluster.ID() {
			h.Up, applied, known = true, s.Cluster.AppliedIndex(), true
		} else if s.Peers != nil {
			h.Up, applied, known = s.Peers.PeerStatus(m.ID)
		}
		if known {
			h.LagKnown = true
			if target > applied {
				h.Lag = target - applied
			}
		}
		out = append(out, h)
	}
	return out, nil
}

func (s *Server) sampleHealth() healthSample {
	out := healthSample{At: s.now().UTC()}
	if s.Cluster != nil {
		st := s.Cluster.Stats()
		out.AppliedIndex, out.CommitIndex = st.AppliedIndex, st.CommitIndex
		if members, err := s.Members(); err == nil {
			out.Members = len(members)
			for _, m := range members {
				if m.Up {
					out.MembersUp++
				}
				out.MaxLag = max(out.MaxLag, m.Lag)
			}
		}
	}
	if s.DataPlane != nil {
		out.RoutersConnected = len(s.DataPlane.Connected())
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
