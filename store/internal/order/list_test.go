package order

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestList_DeltaReadsAsItsSlice: an order kept as a delta over a root, and
// one kept as a delta over that (a middle entry), read every way (At,
// Each and an early stop, runs of the base, Slice, the name column), give
// the records of the base without the gone ones and with the fresh ones,
// sorted as the name index sorts them.
func TestList_DeltaReadsAsItsSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	seq := 0
	newRec := func() *rec {
		seq++
		return &rec{id: fmt.Sprintf("id-%05d", seq), name: fmt.Sprintf("n-%04d", rng.IntN(5000))} // names repeat: the id orders them
	}
	// over makes a delta over base: some of its records gone, some fresh,
	// and returns it with the order it must read as.
	over := func(base *List[*rec]) (*List[*rec], []*rec) {
		all := base.Slice()
		d := &delta[*rec]{root: base}
		var want []*rec
		for i, r := range all {
			if rng.IntN(6) == 0 {
				d.gone = append(d.gone, i)
				continue
			}
			want = append(want, r)
		}
		for range rng.IntN(300) {
			r := newRec()
			d.fresh = append(d.fresh, r)
			want = append(want, r)
		}
		slices.SortFunc(d.fresh, compareNamed[*rec])
		for _, r := range d.fresh {
			d.at = append(d.at, base.place(r))
		}
		slices.SortFunc(want, compareNamed[*rec])
		return &List[*rec]{d: d}, want
	}
	check := func(what string, c *List[*rec], want []*rec) {
		t.Helper()
		if c.Len() != len(want) {
			t.Fatalf("%s: %d records, want %d", what, c.Len(), len(want))
		}
		for i, r := range want {
			if c.At(i) != r {
				t.Fatalf("%s: record %d is %s, want %s", what, i, c.At(i).id, r.id)
			}
		}
		var each []*rec
		c.Each(func(r *rec) bool { each = append(each, r); return true })
		if !slices.Equal(each, want) {
			t.Fatalf("%s: Each differs", what)
		}
		if len(want) > 0 {
			stop, n := 1+rng.IntN(len(want)), 0
			c.Each(func(*rec) bool { n++; return n < stop })
			if n != stop {
				t.Fatalf("%s: Each went on after false", what)
			}
			i := rng.IntN(len(want))
			j := i + rng.IntN(len(want)-i+1)
			var run []*rec
			c.eachIn(i, j, func(r *rec) bool { run = append(run, r); return true })
			if !slices.Equal(run, want[i:j]) {
				t.Fatalf("%s: records %d..%d differ", what, i, j)
			}
		}
		col := c.Names()
		for i, r := range want {
			if col.At(i) != r.name {
				t.Fatalf("%s: name %d is %q, want %q", what, i, col.At(i), r.name)
			}
		}
		if !slices.Equal(c.Slice(), want) {
			t.Fatalf("%s: Slice differs", what)
		}
	}
	for round := range 20 {
		var recs []*rec
		for range 500 + rng.IntN(1500) {
			recs = append(recs, newRec())
		}
		slices.SortFunc(recs, compareNamed[*rec])
		root := New[*rec](nil, 0, recs)
		mid, midWant := over(root)
		top, topWant := over(mid)
		check(fmt.Sprintf("round %d, the delta over a delta", round), top, topWant) // before mid's slice is made
		check(fmt.Sprintf("round %d, the delta over the root", round), mid, midWant)
	}
}

// TestLog_SinceIsTheFirstChangeOfEach: the log of consecutive commits
// reports, for any range of generations it covers, each record changed
// once, with its name before the first change in the range, in the order
// first changed; it reports nothing for another database, a range it no
// longer reaches, or after a generation without an entry.
func TestLog_SinceIsTheFirstChangeOfEach(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	db, other := new(int), new(int)
	type change struct {
		id, old string
		had     bool
	}
	var l Log
	byGen := map[uint64][]change{}
	names := map[string]string{}
	for gen := uint64(1); gen <= 200; gen++ {
		b := NewBatch(deltaFrom)
		for range 1 + rng.IntN(5) {
			id := fmt.Sprint(rng.IntN(40))
			old, had := names[id]
			b.Note(id, old, had)
			byGen[gen] = append(byGen[gen], change{id, old, had})
			names[id] = fmt.Sprint("name-", gen)
		}
		l.Commit(db, gen, &b, 1<<20) // a table large enough for the log to keep every change here
	}
	for range 500 {
		from := uint64(rng.IntN(200))
		to := from + 1 + uint64(rng.IntN(int(200-from)))
		var want []change
		seen := map[string]bool{}
		for g := from + 1; g <= to; g++ {
			for _, c := range byGen[g] {
				if !seen[c.id] {
					seen[c.id] = true
					want = append(want, c)
				}
			}
		}
		ids, old, had, ok := l.since(db, from, to)
		if !ok {
			t.Fatalf("%d..%d: not covered", from, to)
		}
		var got []change
		for i := range ids {
			got = append(got, change{ids[i], old[i], had[i]})
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%d..%d: %v, want %v", from, to, got, want)
		}
		if _, _, _, ok := l.since(other, from, to); ok {
			t.Fatal("another database's changes were reported")
		}
	}
	if _, _, _, ok := l.since(db, 199, 201); ok {
		t.Fatal("a generation not yet logged was reported")
	}
	b := NewBatch(deltaFrom)
	b.Note("x", "", false)
	l.Commit(db, 202, &b, 1<<20) // 201 had no entry: the log starts again
	if _, _, _, ok := l.since(db, 100, 200); ok {
		t.Fatal("the log reached past a generation without an entry")
	}
	small := NewBatch(deltaFrom/2 - 1)
	if !small.Over() {
		t.Fatal("a small table's batch keeps its changes")
	}
}
