package dataplane

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"
)

// TestTerminators_AStormIsAnsweredBusyAndRetriedNoneLost: while Raft is
// slow, a router's 20 creates meet a node that takes 4 at once: 4 wait
// for their write, the other 16 are answered busy at once (not queued),
// and the router's retries, as OpenZiti's routers make them, bring every
// one of the 20 in; the bound is free again after.
func TestTerminators_AStormIsAnsweredBusyAndRetriedNoneLost(t *testing.T) {
	n := newTestNet(t, func(c *Config) { c.MaxTerminatorCreates = 4 })
	a := n.addRouter("A")
	bind := n.bindSession()

	n.proposer.hold.Lock() // Raft stalls
	release := sync.OnceFunc(n.proposer.hold.Unlock)
	defer release()
	waiting := map[string]<-chan *ctrlchan.Message{}
	for i := range 20 {
		id := fmt.Sprintf("storm-%02d", i)
		waiting[id] = a.ask(createTerminatorRequest(id, bind, n.apiSession, 1))
	}
	// The node answers busy at once beyond its bound, while its writes wait.
	var busy []string
	pollUntil(10*time.Second, func() bool {
		for id, w := range waiting {
			select {
			case r := <-w:
				res, text := createResult(t, r)
				if res != wire.TerminatorBusy || !strings.Contains(text, "busy") {
					t.Fatalf("%s answered %d %q while Raft stalls, want busy", id, res, text)
				}
				busy = append(busy, id)
				delete(waiting, id)
			default:
			}
		}
		return len(busy) >= 16
	})
	if len(busy) != 16 || len(waiting) != 4 {
		t.Fatalf("%d answered busy, %d waiting: want 16 and the bound, 4", len(busy), len(waiting))
	}
	if got := n.m.creates.Load(); got != 4 {
		t.Fatalf("%d creates under way, want 4", got)
	}
	if got := n.refusedCount(reqCreateTerminator, whyBusy); got != 16 {
		t.Fatalf("refused busy counted %v, want 16", got)
	}
	release()

	// The 4 that waited are made; the router retries the busy ones.
	for id, w := range waiting {
		select {
		case r := <-w:
			if res, text := createResult(t, r); res != wire.TerminatorCreated {
				t.Fatalf("%s: %d %q", id, res, text)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no answer after Raft went on", id)
		}
	}
	for _, id := range busy {
		if res, text := createResult(t, a.request(createTerminatorRequest(id, bind, n.apiSession, 1), 10*time.Second)); res != wire.TerminatorCreated {
			t.Fatalf("the retry of %s: %d %q", id, res, text)
		}
	}
	tx := n.s.Read()
	for i := range 20 {
		id := fmt.Sprintf("storm-%02d", i)
		if term, err := store.GetAs[*store.Terminator](tx, store.KindTerminator, id); err != nil || term.RouterID != "A" {
			t.Fatalf("terminator %s after the storm: %+v %v", id, term, err)
		}
	}
	poll(t, "the bound freed", func() bool { return n.m.creates.Load() == 0 })
}

// TestTerminators_ARouterTunnelersCreateSharesTheBound: the router
// tunneler's creates count against the same bound, and are answered busy
// with their own response (id and start time kept, for the router to
// match and retry); an SDK host's create behind them is busy too.
func TestTerminators_ARouterTunnelersCreateSharesTheBound(t *testing.T) {
	n := newTestNet(t, func(c *Config) { c.MaxTerminatorCreates = 1 })
	tr := n.addRouter("T")
	n.routerIdentity("T")
	n.servicePolicy("bind", "Bind", "@T")
	bind := n.bindSession()

	n.proposer.hold.Lock() // Raft stalls
	release := sync.OnceFunc(n.proposer.hold.Unlock)
	defer release()
	first := tr.ask(ctrlchan.NewMessage(wire.CreateTunnelTerminatorRequestV2Type,
		pb(nil).str(1, "svc").str(2, "t-1").uint(4, 0).uint(5, 1).uint(8, 1765100000123)))
	poll(t, "the first create under way", func() bool { return n.m.creates.Load() == 1 })
	if id, start, res, text := createTunnelTerminator(t, tr, "t-2", 0); res != wire.TerminatorBusy || id != "t-2" || start != 1765100000123 || !strings.Contains(text, "busy") {
		t.Fatalf("a tunnel create over the bound: %q %d %d %q, want busy", id, start, res, text)
	}
	if res, text := createTerminator(t, tr, "sdk-1", bind, n.apiSession, 1); res != wire.TerminatorBusy {
		t.Fatalf("an SDK host's create over the bound: %d %q, want busy", res, text)
	}
	release()
	select {
	case r := <-first:
		if result := fieldsOf(r.Body)[3].v; r.ContentType != wire.CreateTunnelTerminatorResponseV2Type || result != wire.TerminatorCreated {
			t.Fatalf("the first create: content type %d, result %d", r.ContentType, result)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first create: no answer after Raft went on")
	}
	poll(t, "the bound freed", func() bool { return n.m.creates.Load() == 0 })
	if _, _, res, text := createTunnelTerminator(t, tr, "t-2", 0); res != wire.TerminatorCreated {
		t.Fatalf("the retry of t-2: %d %q", res, text)
	}
	// Its slot is given back just after its answer is sent.
	poll(t, "the bound freed again", func() bool { return n.m.creates.Load() == 0 })
	if res, text := createTerminator(t, tr, "sdk-1", bind, n.apiSession, 1); res != wire.TerminatorCreated {
		t.Fatalf("the retry of sdk-1: %d %q", res, text)
	}
	for _, id := range []string{"t-1", "t-2", "sdk-1"} {
		if !n.s.Read().Exists(store.KindTerminator, id) {
			t.Fatalf("terminator %s missing", id)
		}
	}
}
