package dataplane

import (
	"io"
	stdlog "log"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Refusals are logged sampled, the way zap's sampler and syslog's "last
// message repeated N times" do it: in each interval (a minute) the first
// few refusals of one reason from one source (the peer's IP address) are
// logged at WARN, the rest are only counted, and when the interval ends one
// summary line per reason and source says how many were not logged. A
// connection storm of 200 refusals a second so writes a few lines a minute,
// not 12,000; the refused-routers metric still counts every one.
//
// The sources held are bounded: past maxSampledKeys in one interval, new
// sources share one key per reason ("other sources"), so a storm from many
// addresses cannot grow the table.

const (
	// sampledFirst refusals of a reason and source are logged per interval.
	sampledFirst = 5
	// defaultSampleInterval is Config.RefusalLogInterval's default.
	defaultSampleInterval = time.Minute
	maxSampledKeys        = 1024
	otherSources          = "other sources"
)

type sampleKey struct{ reason, source string }

// logSampler decides which refusals are logged and summarises the others.
type logSampler struct {
	log hclog.Logger
	// unlogged counts every refusal not logged (the metric).
	unlogged func()

	mu   sync.Mutex
	seen map[sampleKey]int // refusals this interval, by reason and source
}

func newLogSampler(log hclog.Logger, unlogged func()) *logSampler {
	return &logSampler{log: log, unlogged: unlogged, seen: map[sampleKey]int{}}
}

// sourceOf is the source a refusal is sampled by: the peer's IP address
// (its port changes with each connection).
func sourceOf(remote net.Addr) string {
	if remote == nil {
		return ""
	}
	s := remote.String()
	if host, _, err := net.SplitHostPort(s); err == nil {
		return host
	}
	return s
}

// warn logs msg at WARN with args when the refusal of reason from source
// is among the first of the interval; else it is only counted.
func (s *logSampler) warn(reason, source, msg string, args ...any) {
	s.at(hclog.Warn, reason, source, msg, args...)
}

// at is warn at level: the refusals of requests a client may make in good
// faith (an ended session, a dial with no terminator) are logged at INFO,
// sampled the same way.
func (s *logSampler) at(level hclog.Level, reason, source, msg string, args ...any) {
	s.mu.Lock()
	k := sampleKey{reason, source}
	if _, ok := s.seen[k]; !ok && len(s.seen) >= maxSampledKeys {
		k.source = otherSources
	}
	s.seen[k]++
	n := s.seen[k]
	s.mu.Unlock()
	if n > sampledFirst {
		s.unlogged()
		return
	}
	if n == sampledFirst {
		args = append(args, "note", "further refusals of this reason from this source are counted and summarised at the end of the interval")
	}
	s.log.Log(level, msg, args...)
}

// flush ends an interval: one WARN line per reason and source with
// refusals not logged, then a fresh count.
func (s *logSampler) flush(interval time.Duration) {
	s.mu.Lock()
	seen := s.seen
	s.seen = map[sampleKey]int{}
	s.mu.Unlock()
	for k, n := range seen {
		if n > sampledFirst {
			s.log.Warn("control-channel refusals not logged", "reason", k.reason, "source", k.source,
				"suppressed", n-sampledFirst, "total", n, "interval", interval)
		}
	}
}

// runSampler flushes the refusal log sampler every interval until the
// Manager stops.
func (m *Manager) runSampler() {
	t := time.NewTicker(m.cfg.RefusalLogInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			m.sampler.flush(m.cfg.RefusalLogInterval)
			return
		case <-t.C:
			m.sampler.flush(m.cfg.RefusalLogInterval)
		}
	}
}

// HTTPErrorLog is the API server's error log (http.Server.ErrorLog). Routers
// and clients share the API port, and a storm of connections that fail
// their TLS handshake (a scanner, a router with the wrong CA) makes net/http
// write one line each: those are sampled as the control channel's refusals
// are (reason tls_handshake, by source address) and counted in
// edgectl_tls_handshake_failures_total; the server's other lines go to log
// as they are.
func (m *Manager) HTTPErrorLog(log hclog.Logger) *stdlog.Logger {
	return stdlog.New(&httpErrorWriter{m: m, rest: log.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true})}, "", 0)
}

// handshakeErrorPrefix starts net/http's line for a failed TLS handshake.
const handshakeErrorPrefix = "http: TLS handshake error from "

type httpErrorWriter struct {
	m    *Manager
	rest io.Writer
}

func (w *httpErrorWriter) Write(p []byte) (int, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(p)), handshakeErrorPrefix)
	if !ok {
		return w.rest.Write(p)
	}
	addr, why, _ := strings.Cut(rest, ": ")
	source := addr
	if host, _, err := net.SplitHostPort(addr); err == nil {
		source = host
	}
	w.m.metrics.handshakeFailures.Inc()
	w.m.sampler.warn("tls_handshake", source, "TLS handshake failed", "remote", addr, "error", why)
	return len(p), nil
}
