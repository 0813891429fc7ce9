package order

// What the store's tests look at: the shape of an order (a root, a delta
// over one, a delta over a delta) and of a name column, and the limits
// that decide it. The store's own code does not use these.

import "index/suffixarray"

// The limits of deltas, for the store's tests to size their tables
// (next.go says what each is).
const (
	DeltaFrom     = deltaFrom
	DeltaShare    = deltaShare
	DeltaNestFrom = deltaNestFrom
	DeltaTopMost  = deltaTopMost
)

// Compare orders two records as a name index does (name, NUL, id, NUL).
func Compare[R Record](a, b R) int { return compareNamed(a, b) }

// Base is the order c is kept as a delta over, or nil for a root.
func (c *List[R]) Base() *List[R] {
	if c.d == nil {
		return nil
	}
	return c.d.root
}

// Changes is the number of changes c holds over its base (0 for a root).
func (c *List[R]) Changes() int {
	if c.d == nil {
		return 0
	}
	return c.d.size()
}

// Root is the order whose slice c is read through: c itself for a root.
func (c *List[R]) Root() *List[R] { return c.root() }

// Base is the column n is read through, or nil when it holds its names.
func (n *Names) Base() *Names { return n.root }

// HasSuffixArray reports whether n's suffix array is built.
func (n *Names) HasSuffixArray() bool { return n.sa.Load() != nil }

// BuildSuffixArray builds n's suffix array now, in the caller's goroutine.
// n must hold its names (Base nil).
func (n *Names) BuildSuffixArray() { n.sa.Store(suffixarray.New([]byte(n.blob))) }

// Packed is n made into a column that holds its names: the names packed
// into one string, where each ends, and the count of each byte.
func (n *Names) Packed() (blob string, ends []int, count [256]int32) {
	m := n.materialize()
	return m.blob, m.ends, m.count
}

// ByteCounts is the count of each byte in n's names.
func (n *Names) ByteCounts() [256]int32 { return n.count }
