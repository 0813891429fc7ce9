// Package webhook delivers events to the event subscriptions: the leader
// POSTs each subscription's matching events, in id order and at least once,
// signed with the subscription's secret, and records how far it got through
// the log (a replicated cursor), so a new leader resumes where the old one
// stopped.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"edgectl/fsm"
	"edgectl/store"
	"edgectl/store/filter"
)

// Delivery parameters.
const (
	BatchSize       = 100              // events per POST
	scanLimit       = 10_000           // events looked at per round when few match
	skipPersist     = 1_000            // passed-over events worth recording the cursor for
	postTimeout     = 10 * time.Second // one POST, connection included
	minBackoff      = time.Second
	maxBackoff      = 30 * time.Second
	errorRecordGap  = 30 * time.Second // a repeated error is recorded again at most this often
	SignatureHeader = "X-Edgectl-Signature"
)

// Deliverer runs the deliveries while this node leads.
type Deliverer struct {
	Store *store.Store
	// Propose writes a command through Raft (the node's Writer).
	Propose  func(ctx context.Context, t fsm.CommandType, payload any) error
	IsLeader func() bool
	// Endpoints are the cluster's listeners, which are never dialled.
	Endpoints func() *Endpoints
	Log       hclog.Logger
	UserAgent string
	// Poll is how often the leader looks for new events and subscriptions.
	Poll time.Duration

	mu      sync.Mutex
	workers map[string]context.CancelFunc
	stats   map[string]*counters
}

// Stats are one subscription's delivery counters on this node.
type Stats struct {
	Delivered, Failures uint64
}

type counters struct{ delivered, failures atomic.Uint64 }

// Run delivers until ctx ends. Only the leader delivers; a node that loses
// leadership stops its deliveries, and the new leader starts from the
// replicated cursors.
func (d *Deliverer) Run(ctx context.Context) {
	poll := d.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	d.mu.Lock()
	d.workers = map[string]context.CancelFunc{}
	d.stats = map[string]*counters{}
	d.mu.Unlock()
	t := time.NewTicker(poll)
	defer t.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer d.stopAll()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !d.IsLeader() {
			d.stopAll()
			continue
		}
		enabled := map[string]bool{}
		d.Store.Read().Each(store.KindEventSubscription, "id", func(r store.Record) bool {
			if s := r.(*store.EventSubscription); s.IsEnabled {
				enabled[s.ID] = true
			}
			return true
		})
		d.mu.Lock()
		for id, cancel := range d.workers {
			if !enabled[id] {
				cancel()
				delete(d.workers, id)
			}
		}
		for id := range enabled {
			if _, ok := d.workers[id]; ok {
				continue
			}
			wctx, cancel := context.WithCancel(ctx)
			d.workers[id] = cancel
			if d.stats[id] == nil {
				d.stats[id] = &counters{}
			}
			w := &worker{d: d, id: id, stats: d.stats[id], poll: poll}
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.run(wctx)
				d.mu.Lock()
				if d.workers[id] != nil && wctx.Err() == nil {
					delete(d.workers, id) // ended on its own (deleted, disabled): started again when due
				}
				d.mu.Unlock()
				cancel()
			}()
		}
		d.mu.Unlock()
	}
}

func (d *Deliverer) stopAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, cancel := range d.workers {
		cancel()
		delete(d.workers, id)
	}
}

// Active is the number of subscriptions this node is delivering to.
func (d *Deliverer) Active() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.workers)
}

// Snapshot returns the delivery counters by subscription id.
func (d *Deliverer) Snapshot() map[string]Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]Stats, len(d.stats))
	for id, s := range d.stats {
		out[id] = Stats{Delivered: s.delivered.Load(), Failures: s.failures.Load()}
	}
	return out
}

// worker delivers to one subscription.
type worker struct {
	d     *Deliverer
	id    string
	stats *counters
	poll  time.Duration

	cursor    int64 // how far this worker got (the replicated cursor may lag it by one proposal)
	client    *http.Client
	clientCA  string
	lastErr   string
	lastErrAt time.Time
}

func (w *worker) run(ctx context.Context) {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		wait, err := w.round(ctx)
		switch {
		case errors.Is(err, errGone):
			return
		case err != nil:
			w.stats.failures.Add(1)
			w.d.Log.Debug("event delivery failed", "subscription", w.id, "error", err)
			w.recordError(ctx, err)
			backoff = min(max(2*backoff, minBackoff), maxBackoff)
			wait = backoff/2 + rand.N(backoff/2+1) // jitter: receivers coming back are not hit by every leader at once
		default:
			backoff = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

var errGone = errors.New("subscription deleted or disabled")

// round delivers one batch, if any event is pending, and returns how long
// to wait before the next.
func (w *worker) round(ctx context.Context) (time.Duration, error) {
	tx := w.d.Store.Read()
	s, err := store.GetAs[*store.EventSubscription](tx, store.KindEventSubscription, w.id)
	if err != nil || !s.IsEnabled {
		return 0, errGone
	}
	w.cursor = max(w.cursor, s.Cursor)
	q, err := filter.Compile(s.Filter, store.KindEvent.Fields)
	if err != nil {
		return 0, fmt.Errorf("the filter no longer compiles: %v", err)
	}
	from := w.cursor
	var gap string
	if oldest, lost := tx.EventsLost(from); lost {
		gap = fmt.Sprintf("events %d to %d were removed by the event log's retention before they could be delivered", from+1, oldest-1)
		from = oldest - 1
	}
	var batch []map[string]any
	reached, scanned := from, 0
	tx.EventsAfter(from, func(e *store.Event) bool {
		scanned++
		reached = e.Seq
		if q.Match(e) {
			batch = append(batch, store.EventView(e))
		}
		return len(batch) < BatchSize && scanned < scanLimit
	})
	if gap != "" {
		w.d.Log.Warn("event subscription fell behind the retention", "subscription", s.Name, "detail", gap)
		if err := w.propose(ctx, from, gap); err != nil {
			return 0, err
		}
	}
	if len(batch) == 0 {
		if reached-w.cursor >= skipPersist {
			return 0, w.propose(ctx, reached, "")
		}
		if reached > w.cursor {
			w.cursor = reached // recorded with the next delivery
		}
		return w.poll, nil
	}
	if err := w.post(ctx, s, batch); err != nil {
		return 0, err
	}
	w.stats.delivered.Add(uint64(len(batch)))
	if err := w.propose(ctx, reached, ""); err != nil {
		return 0, err
	}
	if scanned >= scanLimit || len(batch) == BatchSize {
		return 0, nil // more may be waiting
	}
	return w.poll, nil
}

// propose records the cursor and the outcome (errText "" clears the error).
func (w *worker) propose(ctx context.Context, cursor int64, errText string) error {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.d.Propose(pctx, fsm.CmdEventSubscriptionDelivered, fsm.Delivered{ID: w.id, Cursor: cursor, Error: errText, At: time.Now().UTC()}); err != nil {
		return fmt.Errorf("recording the delivery: %w", err)
	}
	w.cursor = max(w.cursor, cursor)
	w.lastErr, w.lastErrAt = errText, time.Now()
	return nil
}

// recordError writes a failure to the subscription's lastError, at most
// every errorRecordGap for the same error (a receiver that is down would
// otherwise have every retry written through Raft).
func (w *worker) recordError(ctx context.Context, err error) {
	if text := err.Error(); text != w.lastErr || time.Since(w.lastErrAt) >= errorRecordGap {
		_ = w.propose(ctx, w.cursor, text)
	}
}

// post sends one batch; any answer but 2xx is a failure.
func (w *worker) post(ctx context.Context, s *store.EventSubscription, batch []map[string]any) error {
	return w.postWith(ctx, s, map[string]any{"events": batch}, nil)
}

// postWith POSTs payload with the extra headers.
func (w *worker) postWith(ctx context.Context, s *store.EventSubscription, payload any, headers map[string]string) error {
	client, err := w.httpClient(s)
	if err != nil {
		return err
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, postTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", w.d.UserAgent)
	req.Header.Set(SignatureHeader, Sign(s.Secret, body))
	req.Header.Set("X-Edgectl-Subscription", s.ID)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", s.URL, unwrapURLError(err))
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: the receiver answered %s: %s", s.URL, resp.Status, strings.TrimSpace(string(snippet)))
	}
	return nil
}

func unwrapURLError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// Sign is the signature header's value for body: HMAC-SHA256 under secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// httpClient is the client for the subscription's trust: its caPem when
// set, else the system roots. It never follows redirects and never dials
// the cluster's own listeners.
func (w *worker) httpClient(s *store.EventSubscription) (*http.Client, error) {
	ca := ""
	if s.CaPem != nil {
		ca = *s.CaPem
	}
	if w.client != nil && ca == w.clientCA {
		return w.client, nil
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(ca)) {
			return nil, errors.New("caPem holds no certificate")
		}
		tlsCfg.RootCAs = pool
	}
	dialer := &net.Dialer{Timeout: postTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		if ip := net.ParseIP(host); ip != nil && w.d.Endpoints != nil && w.d.Endpoints().Is(ip, port) {
			return fmt.Errorf("%s is an address of this controller cluster: events are not delivered to the controller itself", address)
		}
		return nil
	}}
	if w.client != nil {
		w.client.CloseIdleConnections()
	}
	w.client = &http.Client{
		Transport: &http.Transport{TLSClientConfig: tlsCfg, DialContext: dialer.DialContext, ForceAttemptHTTP2: true,
			MaxIdleConns: 2, IdleConnTimeout: time.Minute, TLSHandshakeTimeout: postTimeout, ResponseHeaderTimeout: postTimeout},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	w.clientCA = ca
	return w.client, nil
}

// Pending counts the events after the subscription's cursor that its
// filter matches.
func Pending(tx *store.Tx, s *store.EventSubscription) int64 {
	q, err := filter.Compile(s.Filter, store.KindEvent.Fields)
	if err != nil {
		return 0
	}
	from := s.Cursor
	if oldest, lost := tx.EventsLost(from); lost {
		from = oldest - 1
	}
	var n int64
	tx.EventsAfter(from, func(e *store.Event) bool {
		if q.Match(e) {
			n++
		}
		return true
	})
	return n
}
