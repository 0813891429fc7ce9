package integration

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The traffic of TestDataPlaneChaos: open streams and new dials through
// the dialing client's proxy.

// stream is one open connection through the proxy that sends a numbered
// line every 100 ms and reads it back.
type stream struct {
	id     int
	svc    int
	conn   net.Conn
	opened time.Time
	done   chan struct{}
	echoed atomic.Int64 // when a line last came back (UnixNano)
	// set before done closes
	sent    int
	ended   time.Time
	err     error
	changed bool // bytes came back other than sent
	hung    bool // a line did not come back within 15 s, and the stream did not end
	retired bool // closed by the test
}

// streams are the test's open streams and those that ended.
type streams struct {
	mu   sync.Mutex
	all  []*stream
	next int
}

// open dials a new stream of service svc through addr (trying for 30 s)
// and starts it.
func (ss *streams) open(svc int, addr string) error {
	var c net.Conn
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, err = net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
			if err = echoOn(c, "hello"); err == nil {
				break
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no new stream of service %d echoed within 30 s: %w", svc, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ss.mu.Lock()
	s := &stream{id: ss.next, svc: svc, conn: c, opened: time.Now(), done: make(chan struct{})}
	ss.next++
	ss.all = append(ss.all, s)
	ss.mu.Unlock()
	go s.run()
	return nil
}

// run sends "s<id> <seq>\n" every 100 ms and checks each comes back in
// order, unchanged, within 15 s.
func (s *stream) run() {
	defer close(s.done)
	r := bufio.NewReader(s.conn)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for seq := 0; ; seq++ {
		<-tick.C
		line := fmt.Sprintf("s%d %08d\n", s.id, seq)
		_ = s.conn.SetDeadline(time.Now().Add(15 * time.Second))
		if _, err := io.WriteString(s.conn, line); err != nil {
			s.ended, s.err = time.Now(), err
			return
		}
		got, err := r.ReadString('\n')
		if err != nil {
			var ne net.Error
			s.ended, s.err, s.hung = time.Now(), err, errors.As(err, &ne) && ne.Timeout()
			return
		}
		if got != line {
			s.ended, s.err, s.changed = time.Now(), fmt.Errorf("sent %q, read back %q", line, got), true
			return
		}
		s.sent = seq + 1
		s.echoed.Store(time.Now().UnixNano())
	}
}

// stalled are the streams still open that have echoed nothing since from.
func (ss *streams) stalled(from time.Time) []*stream {
	var out []*stream
	for _, s := range ss.live() {
		if s.echoed.Load() < from.UnixNano() {
			out = append(out, s)
		}
	}
	return out
}

// live are the streams still running.
func (ss *streams) live() []*stream {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out []*stream
	for _, s := range ss.all {
		select {
		case <-s.done:
		default:
			out = append(out, s)
		}
	}
	return out
}

// endedSince are the streams that ended (not closed by the test) at or after from.
func (ss *streams) endedSince(from time.Time) []*stream {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out []*stream
	for _, s := range ss.all {
		select {
		case <-s.done:
			if !s.retired && !s.ended.Before(from) {
				out = append(out, s)
			}
		default:
		}
	}
	return out
}

// retire closes s on purpose.
func (ss *streams) retire(s *stream) {
	ss.mu.Lock()
	s.retired = true
	ss.mu.Unlock()
	s.conn.Close()
	<-s.done
}

func (ss *streams) closeAll() {
	for _, s := range ss.live() {
		ss.retire(s)
	}
}

// dial is one new connection: when it started and ended, and whether its
// bytes came back.
type dial struct {
	svc        int
	start, end time.Time
	ok         bool
}

// dialer dials each service at its interval (at most 20 dials in flight
// each), one short echo per dial.
type dialer struct {
	mu    sync.Mutex
	dials []dial
	quit  chan struct{}
	wg    sync.WaitGroup
}

func startDialer(addrs [2]string, every [2]time.Duration) *dialer {
	dl := &dialer{quit: make(chan struct{})}
	for svc, addr := range addrs {
		dl.wg.Go(func() {
			slots := make(chan struct{}, 20)
			tick := time.NewTicker(every[svc])
			defer tick.Stop()
			for {
				select {
				case <-dl.quit:
					return
				case <-tick.C:
				}
				select {
				case slots <- struct{}{}:
				default:
					continue // 20 in flight: this tick's dial is skipped
				}
				dl.wg.Go(func() {
					defer func() { <-slots }()
					d := dial{svc: svc, start: time.Now()}
					d.ok = echoOnce(addr, []byte(fmt.Sprintf("dial %d %d", svc, d.start.UnixNano()))) == nil
					d.end = time.Now()
					dl.mu.Lock()
					dl.dials = append(dl.dials, d)
					dl.mu.Unlock()
				})
			}
		})
	}
	return dl
}

func (dl *dialer) stop() {
	select {
	case <-dl.quit:
	default:
		close(dl.quit)
	}
	dl.wg.Wait()
}

// firstOK is the end of the first successful dial of svc started at or
// after from (zero if none yet).
func (dl *dialer) firstOK(svc int, from time.Time) time.Time {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	var first time.Time
	for _, d := range dl.dials {
		if d.svc == svc && d.ok && !d.start.Before(from) && (first.IsZero() || d.end.Before(first)) {
			first = d.end
		}
	}
	return first
}

// durations are the median and the longest time a successful dial of svc
// that ended in [from, to) took.
func (dl *dialer) durations(svc int, from, to time.Time) (p50, worst time.Duration) {
	dl.mu.Lock()
	var ds []time.Duration
	for _, d := range dl.dials {
		if d.svc == svc && d.ok && !d.end.Before(from) && d.end.Before(to) {
			ds = append(ds, d.end.Sub(d.start))
		}
	}
	dl.mu.Unlock()
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)-1]
}

// counts are the dials of svc that ended in [from, to): succeeded, failed.
func (dl *dialer) counts(svc int, from, to time.Time) (ok, failed int) {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	for _, d := range dl.dials {
		if d.svc == svc && !d.end.Before(from) && d.end.Before(to) {
			if d.ok {
				ok++
			} else {
				failed++
			}
		}
	}
	return ok, failed
}
