// Package ziti is an oracle test module: it checks edgectl's own
// implementation of OpenZiti's router control channel (edgectl/ctrlchan)
// and of the control-plane protobuf messages (edgectl/dataplane/wire)
// against OpenZiti's packages (github.com/openziti/channel/v4 and the
// generated ctrl_pb / edge_ctrl_pb of github.com/openziti/ziti).
//
// It is a module of its own so that edgectl does not depend on OpenZiti.
// Run it with:
//
//	cd integration/ziti && go test ./...
package ziti
