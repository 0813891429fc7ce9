package dataplane

import (
	"strings"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/pki"
	"edgectl/store"

	"google.golang.org/protobuf/encoding/protowire"
)

// bindSession gives the client Bind on every service (a service policy),
// makes a Bind session of it for "svc" and returns its token.
func (n *testNet) bindSession() string {
	n.t.Helper()
	mustWrite(n.t, n.s, func(tx *store.Tx) error {
		return tx.CreatePolicy(store.KindServicePolicy, &store.ServicePolicy{Base: store.Base{ID: "bind-all"}, Named: store.Named{Name: "bind-all"},
			Type: "Bind", Semantic: "AnyOf", IdentityRoles: []string{"#all"}, ServiceRoles: []string{"#all"}})
	})
	return n.sessionFor("bind", "svc", "Bind")
}

// sessionFor makes session id of the client's API session for service,
// of type typ, whether or not a policy grants it, and returns its token.
func (n *testNet) sessionFor(id, service, typ string) string {
	n.t.Helper()
	mustWrite(n.t, n.s, func(tx *store.Tx) error {
		return tx.Insert(store.KindSession, &store.Session{Base: store.Base{ID: id}, APISessionID: "as", IdentityID: "client", ServiceID: service, Type: typ})
	})
	now := time.Now()
	tok, err := pki.SignServiceAccess(n.key, "k1", pki.ServiceAccess{ServiceID: service, SessionID: id, APISessionID: "as",
		IdentityID: "client", Type: typ, IssuedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour)})
	if err != nil {
		n.t.Fatal(err)
	}
	return tok
}

type pb []byte

func (b pb) str(num protowire.Number, s string) pb {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func (b pb) uint(num protowire.Number, v uint64) pb {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// createTerminatorRequest is a router's CreateTerminatorV2Request for
// address, with the Bind session's and the API session's tokens, cost, and
// precedence required.
func createTerminatorRequest(address, session, apiSession string, cost uint64) *ctrlchan.Message {
	return ctrlchan.NewMessage(wire.CreateTerminatorV2RequestType, wire.EncodeCreateTerminatorV2(&wire.CreateTerminatorV2{
		Address: address, SessionToken: session, Cost: uint32(cost), Precedence: wire.PrecedenceRequired, APISessionToken: apiSession}))
}

// createTerminator asks the node for a terminator at address and returns
// the result code and text.
func createTerminator(t *testing.T, fr *fakeRouter, address, session, apiSession string, cost uint64) (uint64, string) {
	t.Helper()
	return createResult(t, fr.request(createTerminatorRequest(address, session, apiSession, cost), 5*time.Second))
}

// createResult reads a CreateTerminatorV2Response: its result and text.
func createResult(t *testing.T, r *ctrlchan.Message) (uint64, string) {
	t.Helper()
	if r.ContentType != wire.CreateTerminatorV2ResponseType {
		t.Fatalf("answered with content type %d", r.ContentType)
	}
	_, result, text, err := wire.DecodeCreateTerminatorV2Response(r.Body)
	if err != nil {
		t.Fatalf("the answer does not decode: %v", err)
	}
	return result, text
}

func TestTerminators_CreateUpdateHealthRemove(t *testing.T) {
	n := newTestNet(t)
	a := n.addRouter("A")
	bind := n.bindSession()
	if res, text := createTerminator(t, a, "addr-1", bind, n.apiSession, 7); res != wire.TerminatorCreated {
		t.Fatalf("create: %d %s", res, text)
	}
	term, err := store.GetAs[*store.Terminator](n.s.Read(), store.KindTerminator, "addr-1")
	if err != nil || term.RouterID != "A" || term.HostID != "client" || term.Cost != 7 || term.Precedence != "required" {
		t.Fatalf("terminator %+v %v", term, err)
	}
	for _, c := range []struct {
		name          string
		session, api  string
		address       string
		cost          uint64
		result        uint64
		textFragments string
	}{
		{"a Dial session", n.session, n.apiSession, "addr-2", 1, wire.TerminatorFailed, "not Bind"},
		{"no API session", bind, "nope", "addr-2", 1, wire.TerminatorInvalidSession, "no API session"},
		{"a bad token", "garbage", n.apiSession, "addr-2", 1, wire.TerminatorInvalidSession, "not valid"},
		{"a cost too high", bind, n.apiSession, "addr-2", 1 << 20, wire.TerminatorFailed, "invalid cost"},
		{"no address", bind, n.apiSession, "", 1, wire.TerminatorFailed, "could not be read"},
	} {
		if res, text := createTerminator(t, a, c.address, c.session, c.api, c.cost); res != c.result || !strings.Contains(text, c.textFragments) {
			t.Errorf("%s: %d %q, want %d %q", c.name, res, text, c.result, c.textFragments)
		}
	}

	// Update its cost and precedence.
	upd := pb(nil).str(1, bind).str(3, "addr-1").uint(4, 9).uint(5, 2).uint(6, 1).uint(7, 1).str(8, n.apiSession)
	if r := a.request(ctrlchan.NewMessage(wire.UpdateTerminatorRequestType, upd), 5*time.Second); r.ContentType != wire.UpdateTerminatorResponseType {
		t.Fatalf("update answered %d %s", r.ContentType, r.Body)
	}
	term, _ = store.GetAs[*store.Terminator](n.s.Read(), store.KindTerminator, "addr-1")
	if term.Cost != 9 || term.Precedence != "failed" {
		t.Fatalf("updated terminator %+v", term)
	}
	bad := pb(nil).str(1, bind).str(3, "addr-1").uint(4, 1<<20).uint(7, 1).str(8, n.apiSession)
	if r := a.request(ctrlchan.NewMessage(wire.UpdateTerminatorRequestType, bad), 5*time.Second); r.ContentType != wire.ErrorType {
		t.Fatalf("a cost too high answered %d", r.ContentType)
	}
	other := pb(nil).str(1, bind).str(3, "not-mine").str(8, n.apiSession)
	if r := a.request(ctrlchan.NewMessage(wire.UpdateTerminatorRequestType, other), 5*time.Second); r.ContentType != wire.ErrorType {
		t.Fatalf("an unknown terminator answered %d", r.ContentType)
	}
	// A health event is counted, not answered; then a barrier.
	a.send(ctrlchan.NewMessage(wire.HealthEventType, pb(nil).str(1, bind).str(3, "addr-1").uint(4, 1).str(5, n.apiSession)))
	a.barrier()

	// Remove it, then again (gone already: removed).
	rm := pb(nil).str(1, bind).str(3, "addr-1").str(4, n.apiSession)
	for i := 0; i < 2; i++ {
		if r := a.request(ctrlchan.NewMessage(wire.RemoveTerminatorRequestType, rm), 5*time.Second); r.ContentType != wire.RemoveTerminatorResponseType {
			t.Fatalf("remove %d answered %d %s", i, r.ContentType, r.Body)
		}
	}
	if n.s.Read().Exists(store.KindTerminator, "addr-1") {
		t.Fatal("the terminator was not removed")
	}
}

// hostOn has router fr create a terminator of the client's Bind session at
// each address, at cost 0.
func hostOn(t *testing.T, n *testNet, fr *fakeRouter, addrs ...string) {
	t.Helper()
	bind := n.bindSession()
	for _, addr := range addrs {
		if res, text := createTerminator(t, fr, addr, bind, n.apiSession, 0); res != wire.TerminatorCreated {
			t.Fatalf("create %s: %d %s", addr, res, text)
		}
	}
}

func TestTerminators_RemoveManyByTheRouter(t *testing.T) {
	n := newTestNet(t)
	a := n.addRouter("A")
	hostOn(t, n, a, "x", "y")
	r := a.request(ctrlchan.NewMessage(wire.RemoveTerminatorsRequestType, pb(nil).str(1, "x").str(1, "y")), 5*time.Second)
	if ok, text := r.Result(); !ok {
		t.Fatalf("remove: %s", text)
	}
	if n.s.Read().Exists(store.KindTerminator, "x") || n.s.Read().Exists(store.KindTerminator, "y") {
		t.Fatal("the terminators were not removed")
	}
	if r := a.request(ctrlchan.NewMessage(wire.RemoveTerminatorsRequestType, []byte{0xff}), 5*time.Second); func() bool { ok, _ := r.Result(); return ok }() {
		t.Fatal("an unreadable request succeeded")
	}
}

// A router that no longer has a terminator of its own refuses the route
// with an invalid-terminator code: the terminator is removed and the
// second attempt takes another.
func TestDial_AnInvalidTerminatorIsRemovedAndTheNextOneTried(t *testing.T) {
	n := newTestNet(t)
	a := n.addRouter("A")
	hostOn(t, n, a, "t-a", "t-b")
	first := ""
	a.setAnswer(func(id string, attempt uint32) routeReply {
		if attempt == 0 {
			first = id
			return routeReply{code: wire.RouteErrInvalidTerminator, reason: "no such terminator"}
		}
		return routeReply{ok: true}
	})
	id := circuitID(t, n.dial("A"))
	if id != first {
		t.Fatalf("circuit %s, first attempt %s", id, first)
	}
	poll(t, "the invalid terminator is removed", func() bool {
		return !n.s.Read().Exists(store.KindTerminator, "t-a") || !n.s.Read().Exists(store.KindTerminator, "t-b")
	})
	n.settled(id)
}

// A router's terminators are validated when it connects: those it no
// longer has are removed.
func TestTerminators_ValidatedOnConnect(t *testing.T) {
	n := newTestNet(t)
	a := n.addRouter("A")
	bind := n.bindSession()
	if res, _ := createTerminator(t, a, "gone", bind, n.apiSession, 0); res != wire.TerminatorCreated {
		t.Fatal("create")
	}
	a.leave()
	poll(t, "A leaves", func() bool { return n.m.router("A") == nil })
	delete(n.routers, "A")
	entry := pb(nil).str(1, "gone").msg(2, pb(nil).uint(1, 0).uint(2, 1).str(3, "the host left"))
	n.addRouterWith("A", func(fr *fakeRouter) {
		fr.replies[wire.ValidateTerminatorsV2RequestType] = func(*ctrlchan.Message) *ctrlchan.Message {
			return ctrlchan.NewMessage(wire.ValidateTerminatorsV2ResponseType, pb(nil).msg(1, entry))
		}
	})
	poll(t, "the terminator the router lost is removed", func() bool { return !n.s.Read().Exists(store.KindTerminator, "gone") })
}

func (b pb) msg(num protowire.Number, v []byte) pb {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// field is one field of a message as wire.Fields reads it: its varint
// value or its bytes.
type field struct {
	v   uint64
	raw []byte
}

// fieldsOf is what pb writes, read back: each field of message b by its
// number (the last of a repeated one).
func fieldsOf(b []byte) map[protowire.Number]field {
	out := map[protowire.Number]field{}
	_ = wire.Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		out[num] = field{v, raw}
		return nil
	})
	return out
}
