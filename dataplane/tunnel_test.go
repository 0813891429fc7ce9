package dataplane

import (
	"strings"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"

	"google.golang.org/protobuf/encoding/protowire"
)

// routerIdentity gives router id an identity of type Router (its tunneler's).
func (n *testNet) routerIdentity(id string) {
	n.t.Helper()
	mustWrite(n.t, n.s, func(tx *store.Tx) error {
		return tx.Insert(store.KindIdentity, &store.Identity{Base: store.Base{ID: id}, Named: store.Named{Name: id}, TypeID: store.IdentityTypeRouter})
	})
}

// servicePolicy adds (or, with no identity roles, removes) a service policy
// of type typ giving identityRoles "svc".
func (n *testNet) servicePolicy(id, typ string, identityRoles ...string) {
	n.t.Helper()
	mustWrite(n.t, n.s, func(tx *store.Tx) error {
		if tx.Exists(store.KindServicePolicy, id) {
			if err := tx.Remove(store.KindServicePolicy, id); err != nil {
				return err
			}
		}
		if len(identityRoles) == 0 {
			return nil
		}
		return tx.Insert(store.KindServicePolicy, &store.ServicePolicy{Base: store.Base{ID: id}, Named: store.Named{Name: id},
			Type: typ, Semantic: "AnyOf", IdentityRoles: identityRoles, ServiceRoles: []string{"@svc"}})
	})
}

// createTunnelTerminator asks for a tunnel terminator of "svc" at address
// and returns the answer's fields: terminator id, start time, result, text.
func createTunnelTerminator(t *testing.T, fr *fakeRouter, address string, cost uint64) (string, int64, uint64, string) {
	t.Helper()
	body := pb(nil).str(1, "svc").str(2, address).uint(4, cost).uint(5, 1).uint(8, 1765100000123)
	r := fr.request(ctrlchan.NewMessage(wire.CreateTunnelTerminatorRequestV2Type, body), 5*time.Second)
	if r.ContentType != wire.CreateTunnelTerminatorResponseV2Type {
		t.Fatalf("answered with content type %d: %s", r.ContentType, r.Body)
	}
	f := fieldsOf(r.Body)
	return string(f[1].raw), int64(f[2].v), f[3].v, string(f[4].raw)
}

// TestTunnel_TerminatorFollowsTheBindPolicy: a router's tunneler gets a
// terminator (binding tunnel, hosted by the router's identity) only while
// a Bind policy gives its identity the service; a router without an
// identity of type Router is told tunneling is not enabled.
func TestTunnel_TerminatorFollowsTheBindPolicy(t *testing.T) {
	n := newTestNet(t)
	plain := n.addRouter("P")
	if _, _, res, text := createTunnelTerminator(t, plain, "t-p", 0); res != wire.TerminatorFailed || !strings.Contains(text, "tunneling not enabled") {
		t.Fatalf("a router without a Router identity: %d %q", res, text)
	}

	tr := n.addRouter("T")
	n.routerIdentity("T")
	if _, _, res, text := createTunnelTerminator(t, tr, "t-1", 0); res != wire.TerminatorFailed || !strings.Contains(text, "may not Bind") {
		t.Fatalf("no Bind policy: %d %q", res, text)
	}
	n.servicePolicy("dial", "Dial", "@T")
	if _, _, res, text := createTunnelTerminator(t, tr, "t-1", 0); res != wire.TerminatorFailed || !strings.Contains(text, "may not Bind") {
		t.Fatalf("a Dial policy only: %d %q", res, text)
	}
	n.servicePolicy("bind", "Bind", "@T")
	id, start, res, text := createTunnelTerminator(t, tr, "t-1", 3)
	if res != wire.TerminatorCreated || id != "t-1" || start != 1765100000123 {
		t.Fatalf("with a Bind policy: %q %d %d %q", id, start, res, text)
	}
	term, err := store.GetAs[*store.Terminator](n.s.Read(), store.KindTerminator, "t-1")
	if err != nil || term.Binding != "tunnel" || term.RouterID != "T" || term.HostID != "T" || term.ServiceID != "svc" ||
		term.Cost != 3 || term.Precedence != "required" || !term.IsSystem {
		t.Fatalf("terminator %+v %v", term, err)
	}
	// Asked again (a retry): the same terminator, no conflict.
	if _, _, res, text := createTunnelTerminator(t, tr, "t-1", 3); res != wire.TerminatorCreated {
		t.Fatalf("asked again: %d %q", res, text)
	}
	if _, _, res, text := createTunnelTerminator(t, tr, "t-2", 1<<20); res != wire.TerminatorFailed || !strings.Contains(text, "invalid cost") {
		t.Fatalf("a cost too high: %d %q", res, text)
	}
	// Another router cannot take the id.
	n.routerIdentity("P")
	n.servicePolicy("bind", "Bind", "@T", "@P")
	if _, _, res, _ := createTunnelTerminator(t, plain, "t-1", 0); res == wire.TerminatorCreated {
		t.Fatal("router P took router T's terminator id")
	}

	// Update: its own terminator only, cost bounded.
	upd := pb(nil).str(1, "t-1").uint(2, 9).uint(3, 2).uint(4, 1).uint(5, 1)
	if r := tr.request(ctrlchan.NewMessage(wire.UpdateTunnelTerminatorRequestType, upd), 5*time.Second); r.ContentType != wire.UpdateTunnelTerminatorResponseType {
		t.Fatalf("update answered %d %s", r.ContentType, r.Body)
	}
	term, _ = store.GetAs[*store.Terminator](n.s.Read(), store.KindTerminator, "t-1")
	if term.Cost != 9 || term.Precedence != "failed" {
		t.Fatalf("updated terminator %+v", term)
	}
	for _, c := range []struct {
		name string
		fr   *fakeRouter
		body []byte
		code uint32
	}{
		{"a cost too high", tr, pb(nil).str(1, "t-1").uint(2, 1<<20).uint(5, 1), wire.ErrInvalidCost},
		{"an unknown terminator", tr, pb(nil).str(1, "nope").uint(5, 1), wire.ErrInvalidTerminator},
		{"another router's", plain, pb(nil).str(1, "t-1").uint(2, 1).uint(5, 1), wire.ErrInvalidTerminator},
	} {
		r := c.fr.request(ctrlchan.NewMessage(wire.UpdateTunnelTerminatorRequestType, c.body), 5*time.Second)
		if code, _ := r.Headers.Uint32(wire.ErrorCodeHeader); r.ContentType != wire.ErrorType || code != c.code {
			t.Errorf("%s: answered %d code %d %s, want an error of code %d", c.name, r.ContentType, code, r.Body, c.code)
		}
	}
	// A health event is counted, not answered.
	before := len(tr.messages(wire.ErrorType))
	he := ctrlchan.NewMessage(wire.TunnelHealthEventType, nil)
	he.Headers.PutString(wire.TerminatorIDHeader, "t-1")
	he.Headers.PutBool(wire.CheckPassedHeader, true)
	tr.send(he)
	tr.barrier()
	if got := tr.messages(wire.ErrorType); len(got) != before {
		t.Fatalf("the health event was answered: %s", got[len(got)-1].Body)
	}
}

// tunnelDial dials "svc" by name through router fr's tunneler.
func tunnelDial(fr *fakeRouter) *ctrlchan.Message {
	body := pb(nil).str(1, "svc").msg(3, pb(nil).uint(1, 3).str(2, "initiator key"))
	return fr.request(ctrlchan.NewMessage(wire.CreateTunnelCircuitV2RequestType, body), 20*time.Second)
}

// TestTunnel_DialFollowsTheDialPolicy: a router's tunneler dials a service
// by name while a Dial policy gives its identity the service: the answer
// names the circuit, its ingress address and the tags; the circuit's
// identity is the router's. Without the policy, or with no such service,
// the answer is an edge error of code invalid service.
func TestTunnel_DialFollowsTheDialPolicy(t *testing.T) {
	n := newTestNet(t)
	tr := n.addRouter("T")
	n.routerIdentity("T")
	n.terminator("host-1", "T")
	expectRefused := func(what string, code uint32) {
		t.Helper()
		r := tunnelDial(tr)
		if got, _ := r.Headers.Uint32(wire.ErrorCodeHeader); r.ContentType != wire.ErrorType || got != code {
			t.Fatalf("%s: answered %d code %d %s, want an error of code %d", what, r.ContentType, got, r.Body, code)
		}
	}
	expectRefused("no Dial policy", wire.ErrInvalidService)
	n.servicePolicy("bind", "Bind", "@T")
	expectRefused("a Bind policy only", wire.ErrInvalidService)
	n.servicePolicy("dial", "Dial", "@T")
	r := tunnelDial(tr)
	if r.ContentType != wire.CreateTunnelCircuitV2ResponseType {
		t.Fatalf("answered %d %s", r.ContentType, r.Body)
	}
	tags := map[string]string{}
	_ = wire.Fields(r.Body, func(num protowire.Number, _ uint64, raw []byte) error {
		if num == 4 { // map<string,string>: an entry a field
			entry := fieldsOf(raw)
			tags[string(entry[1].raw)] = string(entry[2].raw)
		}
		return nil
	})
	answer := fieldsOf(r.Body)
	circuit, address := string(answer[1].raw), string(answer[2].raw)
	if circuit == "" || address == "" || tags["serviceId"] != "svc" || tags["clientId"] != "T" {
		t.Fatalf("answer: circuit %q address %q tags %v", circuit, address, tags)
	}
	var c *Circuit
	for _, ci := range n.m.Circuits() {
		if ci.ID == circuit {
			c = ci
		}
	}
	if c == nil || c.IdentityID != "T" || c.ServiceID != "svc" || c.TerminatorID != "host-1" || c.SessionID != "" {
		t.Fatalf("the circuit: %+v", c)
	}

	n.servicePolicy("dial", "Dial")
	expectRefused("the Dial policy gone", wire.ErrInvalidService)
	plain := n.addRouter("P")
	r = tunnelDial(plain)
	if code, _ := r.Headers.Uint32(wire.ErrorCodeHeader); r.ContentType != wire.ErrorType || code != wire.ErrTunnelingNotEnabled {
		t.Fatalf("a router without a Router identity: %d code %d %s", r.ContentType, code, r.Body)
	}
}

// TestTunnel_AHostThatLostItsBindIsNotDialed: a router tunneler's terminator
// whose identity no longer may Bind the service is not picked by a dial,
// before its router removes it; with the grant back it is again.
func TestTunnel_AHostThatLostItsBindIsNotDialed(t *testing.T) {
	n := newTestNet(t)
	tr := n.addRouter("T")
	n.routerIdentity("T")
	n.servicePolicy("dial", "Dial", "@client") // the client's session outlives the Bind changes
	n.servicePolicy("bind", "Bind", "@T")
	if _, _, res, text := createTunnelTerminator(t, tr, "t-1", 0); res != wire.TerminatorCreated {
		t.Fatalf("create: %d %q", res, text)
	}
	circuitID(t, n.dial("T"))
	n.servicePolicy("bind", "Bind")
	if !n.s.Read().Exists(store.KindTerminator, "t-1") {
		t.Fatal("the terminator went with the grant: its router removes it")
	}
	if text := refused(t, n.dial("T")); !strings.Contains(text, "terminator") {
		t.Fatalf("a dial with the host's grant gone: %q", text)
	}
	n.servicePolicy("bind", "Bind", "@T")
	circuitID(t, n.dial("T"))
}
