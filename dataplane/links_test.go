package dataplane

import (
	"math"
	"reflect"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestLinks_ReportReplacesOnlyOnANewerIteration(t *testing.T) {
	var tab links
	t0, t1 := time.Unix(100, 0), time.Unix(200, 0)
	if !tab.report("A", wire.RouterLink{ID: "l", DestRouterID: "B", Protocol: "tls", DialAddress: "tls:b:1", Iteration: 2}, t0) {
		t.Fatal("a new link changed nothing")
	}
	want := Link{ID: "l", SrcRouterID: "A", DstRouterID: "B", Protocol: "tls", DialAddress: "tls:b:1", Iteration: 2, StaticCost: 1,
		SrcLatency: initialLinkLatency, DstLatency: initialLinkLatency, ReportedAt: t0}
	if got := tab.all(); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("links %+v, want %+v", got, want)
	}
	tab.latency("A", "l", time.Millisecond)
	// The same or an older iteration: nothing changes (not even the measured latency).
	for _, it := range []uint32{2, 1, 0} {
		if tab.report("C", wire.RouterLink{ID: "l", DestRouterID: "D", Iteration: it}, t1) {
			t.Errorf("iteration %d replaced iteration 2", it)
		}
	}
	if got := tab.all(); len(got) != 1 || got[0].SrcRouterID != "A" || got[0].SrcLatency != time.Millisecond || got[0].ReportedAt != t0 {
		t.Fatalf("after stale reports: %+v", got)
	}
	// A newer one replaces it, afresh.
	if !tab.report("B", wire.RouterLink{ID: "l", DestRouterID: "A", Protocol: "tls", DialAddress: "tls:a:1", Iteration: 3}, t1) {
		t.Fatal("a newer iteration changed nothing")
	}
	want = Link{ID: "l", SrcRouterID: "B", DstRouterID: "A", Protocol: "tls", DialAddress: "tls:a:1", Iteration: 3, StaticCost: 1,
		SrcLatency: initialLinkLatency, DstLatency: initialLinkLatency, ReportedAt: t1}
	if got := tab.all(); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("links %+v, want %+v", got, want)
	}
}

func TestLinks_FaultIgnoresAStaleIteration(t *testing.T) {
	for _, c := range []struct {
		link, fault uint32
		removed     bool
	}{
		{5, 4, false}, // a fault of an older dial of the link
		{5, 5, true},
		{5, 6, true},
		{5, 0, true}, // a router that does not know the iteration (a Route naming a link it lacks)
		{0, 4, true},
		{0, 0, true},
	} {
		var tab links
		tab.report("A", wire.RouterLink{ID: "l", DestRouterID: "B", Iteration: c.link}, time.Unix(1, 0))
		got := tab.fault("l", c.fault)
		if (got != nil) != c.removed || (len(tab.all()) == 0) != c.removed {
			t.Errorf("link iteration %d, fault iteration %d: removed %v (table %v), want %v", c.link, c.fault, got, tab.all(), c.removed)
		}
		if got != nil && (got.ID != "l" || got.Iteration != c.link) {
			t.Errorf("fault returned %+v", got)
		}
	}
	var tab links
	if tab.fault("unknown", 1) != nil {
		t.Fatal("an unknown link was removed")
	}
}

func TestLinks_RemoveFromTakesOnlyTheLinksTheRouterDialed(t *testing.T) {
	var tab links
	now := time.Unix(1, 0)
	tab.report("A", wire.RouterLink{ID: "ab", DestRouterID: "B", Iteration: 1}, now)
	tab.report("A", wire.RouterLink{ID: "ac", DestRouterID: "C", Iteration: 1}, now)
	tab.report("B", wire.RouterLink{ID: "ba", DestRouterID: "A", Iteration: 1}, now)
	tab.report("C", wire.RouterLink{ID: "cb", DestRouterID: "B", Iteration: 1}, now)
	gone := tab.removeFrom("A")
	ids := map[string]bool{}
	for _, l := range gone {
		ids[l.ID] = true
	}
	if len(gone) != 2 || !ids["ab"] || !ids["ac"] {
		t.Fatalf("removed %v, want ab and ac", ids)
	}
	var left []string
	for _, l := range tab.all() {
		left = append(left, l.ID)
	}
	if len(left) != 2 || left[0] != "ba" || left[1] != "cb" {
		t.Fatalf("left %v, want [ba cb]", left)
	}
	if got := tab.removeFrom("D"); len(got) != 0 {
		t.Fatalf("a router without links removed %v", got)
	}
}

func TestLinks_LatencySetsTheEndOfTheRouterThatMeasuredIt(t *testing.T) {
	var tab links
	tab.report("A", wire.RouterLink{ID: "l", DestRouterID: "B", Iteration: 1}, time.Unix(1, 0))
	tab.latency("A", "l", 3*time.Millisecond)
	if l := tab.all()[0]; l.SrcLatency != 3*time.Millisecond || l.DstLatency != initialLinkLatency {
		t.Fatalf("after A's measure: src %v dst %v", l.SrcLatency, l.DstLatency)
	}
	tab.latency("B", "l", 7*time.Millisecond)
	if l := tab.all()[0]; l.SrcLatency != 3*time.Millisecond || l.DstLatency != 7*time.Millisecond {
		t.Fatalf("after B's measure: src %v dst %v", l.SrcLatency, l.DstLatency)
	}
	// A router at neither end, or an unknown link, changes nothing.
	tab.latency("C", "l", time.Hour)
	tab.latency("A", "other", time.Hour)
	if l := tab.all(); len(l) != 1 || l[0].SrcLatency != 3*time.Millisecond || l[0].DstLatency != 7*time.Millisecond {
		t.Fatalf("after strangers' measures: %+v", l)
	}
}

func TestLinkCost_StaticPlusEachEndsMilliseconds(t *testing.T) {
	for _, c := range []struct {
		l    Link
		want int
	}{
		{Link{StaticCost: 1, SrcLatency: initialLinkLatency, DstLatency: initialLinkLatency}, 130001},
		{Link{StaticCost: 1, SrcLatency: 2500 * time.Microsecond, DstLatency: 1999 * time.Microsecond}, 1 + 2 + 1},
		{Link{StaticCost: 4}, 4},
		{Link{StaticCost: 1, SrcLatency: 999 * time.Microsecond, DstLatency: 40 * time.Millisecond}, 41},
	} {
		if got := c.l.Cost(); got != c.want {
			t.Errorf("cost of %+v = %d, want %d", c.l, got, c.want)
		}
	}
}

func TestVerifiedRouter_OnlyTheEnrolledFingerprint(t *testing.T) {
	s := store.New()
	tx := s.Write()
	fp := "0123456789abcdef0123456789abcdef01234567"
	base := func(id string) store.Base {
		return store.Base{ID: id, CreatedAt: time.Unix(1, 0), UpdatedAt: time.Unix(1, 0)}
	}
	for _, r := range []store.Record{
		&store.Router{Base: base("fabric"), Named: store.Named{Name: "fabric"}, RouterEnrollment: store.RouterEnrollment{IsVerified: true, Fingerprint: &fp}},
		&store.Router{Base: base("unenrolled"), Named: store.Named{Name: "unenrolled"}},
	} {
		if err := tx.Insert(store.KindRouter, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Insert(store.KindEdgeRouter, &store.EdgeRouter{Base: base("edge"), Named: store.Named{Name: "edge"},
		RouterEnrollment: store.RouterEnrollment{IsVerified: true, Fingerprint: &fp}}); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	read := s.Read()
	for _, c := range []struct {
		id  string
		fps []string
		ok  bool
	}{
		{"fabric", []string{"ffff", fp}, true},
		{"edge", []string{fp}, true},
		{"edge", []string{"01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67"}, true},
		{"fabric", []string{"ffff"}, false},
		{"fabric", nil, false},
		{"unenrolled", []string{fp}, false},
		{"nobody", []string{fp}, false},
	} {
		if ok, why := verifiedRouter(read, c.id, c.fps); ok != c.ok || (!ok && why == "") {
			t.Errorf("router %s with %v: %v %q, want %v", c.id, c.fps, ok, why, c.ok)
		}
	}
}

// metricsBody is a metrics_pb.MetricsMessage of source with histograms of these means.
func metricsBody(source string, means map[string]float64) []byte {
	b := pb(nil).str(2, source)
	for name, mean := range means {
		h := protowire.AppendFixed64(protowire.AppendTag(nil, 3, protowire.Fixed64Type), math.Float64bits(mean))
		b = b.msg(8, pb(nil).str(1, name).msg(2, h))
	}
	return b
}

func TestLinkMetrics_RoundTripPlusQueueTimeAtTheReportersEnd(t *testing.T) {
	m := New(Config{Store: store.New()})
	m.links.report("A", wire.RouterLink{ID: "l1", DestRouterID: "B", Iteration: 1}, time.Unix(1, 0))
	m.links.report("B", wire.RouterLink{ID: "l2", DestRouterID: "C", Iteration: 1}, time.Unix(1, 0))
	// A dialed l1: its measure is the src end's; B's of l1 the dst end's.
	m.linkMetrics(&Router{ID: "A"}, ctrlchan.NewMessage(wire.MetricsType, metricsBody("A", map[string]float64{
		"link.l1.latency": 3_400_000, "link.l1.queue_time": 1_700_000.5, "link.l2.latency": 99e9, "other.latency": 1, "link.l9.latency": 1})))
	m.linkMetrics(&Router{ID: "B"}, ctrlchan.NewMessage(wire.MetricsType, metricsBody("B", map[string]float64{
		"link.l1.latency": 2_000_000, "link.l1.queue_time_other": 5e9, "link.l2.queue_time": 7e9})))
	ls := m.Links()
	if ls[0].SrcLatency != 5_100_000 || ls[0].DstLatency != 2_000_000 || ls[0].Cost() != 1+5+2 {
		t.Errorf("l1: src %v dst %v cost %d", ls[0].SrcLatency, ls[0].DstLatency, ls[0].Cost())
	}
	// l2's src is B, which reported no latency of it (a queue time alone is no measure); A is at neither end.
	if ls[1].SrcLatency != initialLinkLatency || ls[1].DstLatency != initialLinkLatency {
		t.Errorf("l2: src %v dst %v", ls[1].SrcLatency, ls[1].DstLatency)
	}
}

// A link's connections are those of its routers' newest report for its
// current iteration.
func TestLinks_ConnStateTakesTheNewestOfTheCurrentIteration(t *testing.T) {
	var tab links
	conns := func(addr string) []wire.LinkConn {
		return []wire.LinkConn{{Type: "payload", LocalAddr: addr, RemoteAddr: "b"}}
	}
	tab.report("A", wire.RouterLink{ID: "l", DestRouterID: "B", Iteration: 2,
		ConnState: &wire.LinkConnState{StateIteration: 3, Conns: conns("first")}}, time.Unix(1, 0))
	for _, u := range []wire.LinkStateUpdate{
		{LinkID: "l", Iteration: 2, ConnState: &wire.LinkConnState{StateIteration: 2, Conns: conns("older")}},
		{LinkID: "l", Iteration: 1, ConnState: &wire.LinkConnState{StateIteration: 9, Conns: conns("old link")}},
		{LinkID: "other", Iteration: 2, ConnState: &wire.LinkConnState{StateIteration: 9, Conns: conns("other")}},
		{LinkID: "l", Iteration: 2},
	} {
		tab.connState(u)
	}
	if got := tab.all()[0].Conns; !reflect.DeepEqual(got, conns("first")) {
		t.Fatalf("connections %+v after stale updates", got)
	}
	tab.connState(wire.LinkStateUpdate{LinkID: "l", Iteration: 2, ConnState: &wire.LinkConnState{StateIteration: 4, Conns: conns("new")}})
	if got := tab.all()[0]; !reflect.DeepEqual(got.Conns, conns("new")) || got.StateIteration != 4 {
		t.Fatalf("connections %+v (state %d), want the new ones", got.Conns, got.StateIteration)
	}
}

// An operator's change applies to a known link only; it lasts through
// reports of the link's iteration (its router reconnected), a newer
// iteration starts afresh (as under OpenZiti's controller), and so does a
// fault.
func TestLinks_ChangeLastsForTheLinksIteration(t *testing.T) {
	var tab links
	cost, down := 40, true
	if _, what := tab.change("l", nil, LinkChange{StaticCost: &cost}); what != linkUnknown {
		t.Fatalf("an unknown link: %s", what)
	}
	tab.report("A", wire.RouterLink{ID: "l", DestRouterID: "B", Iteration: 1}, time.Unix(1, 0))
	if l, what := tab.change("l", nil, LinkChange{StaticCost: &cost}); what != LinkChanged || l.StaticCost != 40 || l.Down {
		t.Fatalf("static cost change: %+v %s", l, what)
	}
	if l, _ := tab.change("l", nil, LinkChange{Down: &down}); l.StaticCost != 40 || !l.Down {
		t.Fatalf("down change: %+v", l)
	}
	// Its router left this node and came back: the same iteration, the same change.
	tab.removeFrom("A")
	tab.report("A", wire.RouterLink{ID: "l", DestRouterID: "B", Iteration: 1}, time.Unix(2, 0))
	if got := tab.all(); len(got) != 1 || got[0].StaticCost != 40 || !got[0].Down {
		t.Fatalf("reported again: %+v", got)
	}
	// Dialed again: a newer iteration starts afresh.
	tab.report("A", wire.RouterLink{ID: "l", DestRouterID: "B", Iteration: 2}, time.Unix(3, 0))
	if got := tab.all(); got[0].Iteration != 2 || got[0].StaticCost != 1 || got[0].Down {
		t.Fatalf("after a newer iteration: %+v", got)
	}
	// So does a link that faulted and is reported again.
	tab.change("l", nil, LinkChange{Down: &down})
	tab.fault("l", 2)
	tab.report("A", wire.RouterLink{ID: "l", DestRouterID: "B", Iteration: 2}, time.Unix(4, 0))
	if got := tab.all(); got[0].Down {
		t.Fatalf("after a fault: %+v", got)
	}
	if len(tab.set) != 0 {
		t.Fatalf("changes kept of links gone: %v", tab.set)
	}
}

// Another node's change of a link: made when the link here is of its
// iteration, kept for later when the link is not here yet (or of an older
// iteration), refused when the link here is newer.
func TestLinks_ChangeFromAnotherNode(t *testing.T) {
	var tab links
	cost := 7
	it := func(i uint32) *uint32 { return &i }
	if _, what := tab.change("l", it(3), LinkChange{StaticCost: &cost}); what != linkKept {
		t.Fatalf("a link not here yet: %s", what)
	}
	tab.report("A", wire.RouterLink{ID: "l", DestRouterID: "B", Iteration: 3}, time.Unix(1, 0))
	if got := tab.all(); got[0].StaticCost != 7 {
		t.Fatalf("the link reported after the change: %+v", got)
	}
	if _, what := tab.change("l", it(2), LinkChange{StaticCost: &cost}); what != linkNewer {
		t.Fatalf("a change of an older iteration: %s", what)
	}
	if l, what := tab.change("l", it(3), LinkChange{StaticCost: new(int)}); what != LinkChanged || l.StaticCost != 0 {
		t.Fatalf("a change of its iteration: %+v %s", l, what)
	}
	if _, what := tab.change("l", it(4), LinkChange{StaticCost: &cost}); what != linkKept {
		t.Fatalf("a change of a newer iteration: %s", what)
	}
	tab.report("A", wire.RouterLink{ID: "l", DestRouterID: "B", Iteration: 4}, time.Unix(2, 0))
	if got := tab.all(); got[0].StaticCost != 7 || len(tab.set) != 1 {
		t.Fatalf("iteration 4 reported: %+v, kept %v", got, tab.set)
	}
}

func TestManager_UpdateAndRemoveLinks(t *testing.T) {
	m := New(Config{Store: store.New()})
	cost := 5
	if _, err := m.UpdateLink("nope", LinkChange{StaticCost: &cost}); err != ErrNoLink {
		t.Fatalf("UpdateLink of an unknown link: %v", err)
	}
	m.RemoveLink("nope") // no router to tell
	m.links.report("A", wire.RouterLink{ID: "l", DestRouterID: "B", Iteration: 1}, time.Unix(1, 0))
	if l, err := m.UpdateLink("l", LinkChange{StaticCost: &cost}); err != nil || l.StaticCost != 5 {
		t.Fatalf("UpdateLink: %+v %v", l, err)
	}
	if what := m.ApplyLinkChange("l", 1, LinkChange{StaticCost: &cost}); what != LinkChanged {
		t.Fatalf("ApplyLinkChange: %s", what)
	}
	if m.RemoveLink("l"); len(m.Links()) != 0 {
		t.Fatalf("RemoveLink: links %v", m.Links())
	}
}
