package store

import (
	"encoding/binary"
	"fmt"
)

// The "pick" index orders a service's terminators the way a dial chooses
// among them: by instance id, router, precedence rank, cost, id. A dial
// then reads, per router, the first terminator it may take instead of
// every terminator of the service (20,000 terminators made a pick cost
// 2.3 ms; see docs/performance.md).

// PrecedenceRank orders terminator precedences: required first, failed
// last, anything else (default, or none) between.
func PrecedenceRank(p string) int {
	switch p {
	case "required":
		return 0
	case "failed":
		return 2
	}
	return 1
}

// pickKey is the pick index's key prefix of the given fields (service,
// instance id, router), each ended by a 0 byte as ids never hold one.
func pickKey(fields ...string) []byte {
	n := 0
	for _, f := range fields {
		n += len(f) + 1
	}
	b := make([]byte, 0, n+9+32)
	for _, f := range fields {
		b = append(append(b, f...), 0)
	}
	return b
}

// terminatorPickIndex is the "pick" index. Its arguments are raw keys
// (pickKey), for prefix and lower-bound reads.
type terminatorPickIndex struct{}

func (terminatorPickIndex) FromObject(obj any) (bool, []byte, error) {
	t, ok := obj.(*Terminator)
	if !ok {
		return false, nil, fmt.Errorf("store: not a terminator: %T", obj)
	}
	b := pickKey(t.ServiceID, t.Identity, t.RouterID)
	b = append(b, byte(PrecedenceRank(t.Precedence)))
	// The cost with its sign bit flipped sorts as a signed number.
	b = binary.BigEndian.AppendUint64(b, uint64(int64(t.Cost))^1<<63)
	return true, append(append(b, t.ID...), 0), nil
}

func (terminatorPickIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("store: the pick index takes one key, got %d arguments", len(args))
	}
	b, ok := args[0].([]byte)
	if !ok {
		return nil, fmt.Errorf("store: the pick index takes a []byte key, not %T", args[0])
	}
	return b, nil
}

func (x terminatorPickIndex) PrefixFromArgs(args ...any) ([]byte, error) { return x.FromArgs(args...) }

// TerminatorRouters calls fn with the best terminator (precedence rank,
// cost, id) of each router that holds a terminator of service serviceID
// whose instance id is identity ("" for none), routers in id order, until
// fn returns false. It costs a seek per router, not a step per terminator.
func (tx *Tx) TerminatorRouters(serviceID, identity string, fn func(best *Terminator) bool) {
	from := pickKey(serviceID, identity)
	for {
		it, err := tx.txn.LowerBound(KindTerminator.Table, "pick", from)
		if err != nil {
			return
		}
		raw := it.Next()
		if raw == nil {
			return
		}
		t := raw.(*Terminator)
		if t.ServiceID != serviceID || t.Identity != identity || !fn(t) {
			return
		}
		// Past every key of this router: its 0 terminator made a 1.
		from = pickKey(serviceID, identity, t.RouterID)
		from[len(from)-1] = 1
	}
}

// RankedTerminators calls fn with the terminators of service serviceID,
// instance id identity and router routerID, best first (precedence rank,
// cost, id), until fn returns false.
func (tx *Tx) RankedTerminators(serviceID, identity, routerID string, fn func(*Terminator) bool) {
	it, err := tx.txn.Get(KindTerminator.Table, "pick_prefix", pickKey(serviceID, identity, routerID))
	if err != nil {
		return
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if !fn(raw.(*Terminator)) {
			return
		}
	}
}
