package store

import "edgectl/store/internal/order"

// The names the tests of the list orders used when the orders were made in
// this package (they are now in store/internal/order).
const (
	deltaFrom     = order.DeltaFrom
	deltaShare    = order.DeltaShare
	deltaNestFrom = order.DeltaNestFrom
	deltaTopMost  = order.DeltaTopMost
)

func compareNamed(a, b Record) int { return order.Compare(a, b) }

func newNames(recs []Record) *Names { return order.NewNames(recs) }
