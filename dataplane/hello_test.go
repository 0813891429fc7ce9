package dataplane

import (
	"math/big"
	"testing"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"
)

// TestHelloAnswer_AController172WithItsCapabilities: the node answers a
// router's hello as an OpenZiti controller of release v1.7.2, its own
// release in the revision field, with the capabilities it serves.
func TestHelloAnswer_AController172WithItsCapabilities(t *testing.T) {
	m := New(Config{Store: store.New(), NodeID: "node-1", Version: "v0.2.0"})
	h := m.helloHeaders()
	if id, _ := h.String(ctrlchan.HeaderID); id != "node-1" {
		t.Errorf("id %q", id)
	}
	v := decodeVersionInfo(h[ctrlchan.HeaderHelloVersion])
	if v.Version != "v1.7.2" || v.Revision != "edgectl v0.2.0" {
		t.Errorf("version %+v", v)
	}
	caps := new(big.Int).SetBytes(h[wire.CapabilitiesHeader])
	for name, bit := range map[string]int{"the router data model": wire.CapRouterDataModel, "terminators (V2)": wire.CapCreateTerminatorV2,
		"circuits (V2)": wire.CapCreateCircuitV2, "links reported by their dialer only": wire.CapSingleRouterLinkSource} {
		if caps.Bit(bit) != 1 {
			t.Errorf("%s (bit %d) not advertised: %b", name, bit, caps)
		}
	}
}
