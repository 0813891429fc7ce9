package dataplane

import (
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"
)

// TestDial_EncryptionRequiredWithoutAPublicKeyIsRefused: a service that
// requires end-to-end encryption is refused (edge error
// EncryptionDataMissing, as OpenZiti's controller answers) to a client
// that sent no public key, and when the host's terminator carries none
// (its route is taken back); with both keys it is routed.
func TestDial_EncryptionRequiredWithoutAPublicKeyIsRefused(t *testing.T) {
	n := newTestNet(t)
	mustWrite(t, n.s, func(tx *store.Tx) error {
		svc, err := store.GetAs[*store.Service](tx, store.KindService, "svc")
		if err != nil {
			return err
		}
		cp := *svc
		cp.EncryptionRequired = true
		return tx.Upsert(store.KindService, &cp)
	})
	a := n.addRouter("A")
	n.terminator("t1", "A")
	key := map[uint32][]byte{wire.PublicKeyPeerData: make([]byte, 32)}
	withKey := func() *ctrlchan.Message {
		m := n.dialRequest()
		m.Headers[wire.CreateCircuitPeerDataHeader] = wire.EncodeU32Map(key)
		return m
	}
	refusedForKey := func(what string, reply *ctrlchan.Message) {
		t.Helper()
		if reply.ContentType != wire.ErrorType {
			t.Fatalf("%s: the dial was answered %d, not refused", what, reply.ContentType)
		}
		if code, _ := reply.Headers.Uint32(wire.ErrorCodeHeader); code != wire.ErrEncryptionDataMissing {
			t.Fatalf("%s: refused with code %d (%s), want %d", what, code, reply.Body, wire.ErrEncryptionDataMissing)
		}
	}

	refusedForKey("no client key", n.dial("A"))
	if len(a.messages(wire.RouteType)) != 0 {
		t.Fatal("a dial refused for the client's key was routed")
	}

	refusedForKey("no host key", a.request(withKey(), 20*time.Second))
	if c := circuitOf(a.messages(wire.RouteType)[0]); a.holds(c) || len(n.m.Circuits()) != 0 {
		t.Fatalf("the refused circuit %s is still held (router: %v, node: %d circuits)", c, a.holds(c), len(n.m.Circuits()))
	}

	mustWrite(t, n.s, func(tx *store.Tx) error {
		term, err := store.GetAs[*store.Terminator](tx, store.KindTerminator, "t1")
		if err != nil {
			return err
		}
		cp := *term
		cp.PeerData = key
		return tx.Upsert(store.KindTerminator, &cp)
	})
	circuitID(t, a.request(withKey(), 20*time.Second))
}
