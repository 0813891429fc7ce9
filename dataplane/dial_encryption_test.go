package dataplane

import (
	"testing"
	"time"

	"edgectl/dataplane/wire"
	"edgectl/store"
)

// TestDial_EncryptionRequiredWithoutAPublicKeyIsRefused: a service that
// requires end-to-end encryption is refused to a client that sent no
// public key (edge error EncryptionDataMissing, as OpenZiti's controller
// answers), and routed for one that sent it.
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
	n.addRouter("A")
	n.terminator("t1", "A")

	reply := n.dial("A")
	if reply.ContentType != wire.ErrorType {
		t.Fatalf("a dial with no public key was answered %d, not refused", reply.ContentType)
	}
	if code, _ := reply.Headers.Uint32(wire.ErrorCodeHeader); code != wire.ErrEncryptionDataMissing {
		t.Fatalf("refused with code %d (%s), want %d", code, reply.Body, wire.ErrEncryptionDataMissing)
	}

	m := n.dialRequest()
	m.Headers[wire.CreateCircuitPeerDataHeader] = wire.EncodeU32Map(map[uint32][]byte{wire.PublicKeyPeerData: make([]byte, 32)})
	circuitID(t, n.routers["A"].request(m, 20*time.Second))
}
