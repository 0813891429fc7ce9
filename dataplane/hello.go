package dataplane

import (
	"math/big"
	"runtime"
	"strings"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
)

// VersionInfo is what a hello's version header carries:
// "version|revision|buildDate|os|arch".
type VersionInfo struct {
	Version, Revision, BuildDate, OS, Arch string
}

func decodeVersionInfo(b []byte) VersionInfo {
	p := strings.SplitN(string(b), "|", 5)
	for len(p) < 5 {
		p = append(p, "")
	}
	return VersionInfo{p[0], p[1], p[2], p[3], p[4]}
}

func (v VersionInfo) encode() []byte {
	return []byte(strings.Join([]string{v.Version, v.Revision, v.BuildDate, v.OS, v.Arch}, "|"))
}

// ProtocolLevel is the OpenZiti controller release whose router protocol
// this node speaks, sent as the version in its hello: routers compare it
// with the releases that introduced a behaviour (link management from
// 0.30.0, interface reports from 1.6.3). edgectl's own release goes in the
// revision field. docs/openziti.md.
const ProtocolLevel = "v1.7.2"

// capabilities is the mask this node advertises: the router data model,
// terminators (V2), circuits (V2), and links reported by the router that
// dialed them only.
// A router restarts itself when the data model bit changes between two
// connections, so it is never taken back.
func capabilities() *big.Int {
	c := new(big.Int).SetBit(new(big.Int), wire.CapRouterDataModel, 1)
	c.SetBit(c, wire.CapCreateCircuitV2, 1)
	c.SetBit(c, wire.CapSingleRouterLinkSource, 1)
	return c.SetBit(c, wire.CapCreateTerminatorV2, 1)
}

// helloHeaders are the headers of this node's answer to a router's hello:
// its id, its version line and its capabilities.
func (m *Manager) helloHeaders() ctrlchan.Headers {
	v := VersionInfo{Version: ProtocolLevel, Revision: "edgectl " + m.cfg.Version, BuildDate: "", OS: runtime.GOOS, Arch: runtime.GOARCH}
	h := ctrlchan.Headers{}
	h.PutString(ctrlchan.HeaderID, m.cfg.NodeID)
	h[ctrlchan.HeaderHelloVersion] = v.encode()
	h[wire.CapabilitiesHeader] = capabilities().Bytes()
	return h
}
