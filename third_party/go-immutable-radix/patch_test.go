// Copyright 2026 The edgectl authors
// This Source Code Form is subject to the terms of the Mozilla Public License, v. 2.0. If a copy of the MPL
// was not distributed with this file, You can obtain one at https://mozilla.org/MPL/2.0/.

package iradix

import (
	"fmt"
	"sync"
	"testing"
)

// Tests of edgectl's patches (watch.go, Txn.writable).

func madeChannels(r *Tree) int {
	n := 0
	for it := r.root.rawIterator(); it.Front() != nil; it.Next() {
		nd := it.Front()
		if nd.watch.ch.Load() != nil {
			n++
		}
		if nd.leaf != nil && nd.leaf.watch.ch.Load() != nil {
			n++
		}
	}
	return n
}

func TestPatch_WritesAndPlainReadsMakeNoChannel(t *testing.T) {
	r := New()
	txn := r.Txn()
	txn.TrackMutate(true)
	for i := 0; i < 1000; i++ {
		txn.Insert([]byte(fmt.Sprintf("key/%04d", i)), i)
	}
	r = txn.Commit()
	txn = r.Txn()
	txn.TrackMutate(true)
	txn.Delete([]byte("key/0500"))
	txn.DeletePrefix([]byte("key/09"))
	r = txn.Commit()
	if _, ok := r.Get([]byte("key/0001")); !ok {
		t.Fatal("key/0001 missing")
	}
	it := r.Root().Iterator()
	it.SeekPrefix([]byte("key/01"))
	if k, _, ok := it.Next(); !ok || string(k) != "key/0100" {
		t.Fatalf("first of key/01 = %q, %v", k, ok)
	}
	rit := r.Root().ReverseIterator()
	rit.SeekPrefix([]byte("key/02"))
	if k, _, ok := rit.Previous(); !ok || string(k) != "key/0299" {
		t.Fatalf("last of key/02 = %q, %v", k, ok)
	}
	if n := madeChannels(r); n != 0 {
		t.Fatalf("%d channels made by writes and plain reads, want 0", n)
	}
	if a := testing.AllocsPerRun(100, func() { r.Get([]byte("key/0007")) }); a != 0 {
		t.Fatalf("Get allocates %v times, want 0", a)
	}

	// A watch makes exactly the channel asked for, and the same one each time.
	w1, _, _ := r.Root().GetWatch([]byte("key/0007"))
	w2, _, _ := r.Root().GetWatch([]byte("key/0007"))
	if w1 != w2 || madeChannels(r) != 1 {
		t.Fatalf("GetWatch twice: same channel %v, channels made %d; want true, 1", w1 == w2, madeChannels(r))
	}
}

func TestPatch_WatchTakenAfterTheChangeFiresAtOnce(t *testing.T) {
	r := New()
	r, _, _ = r.Insert([]byte("foo"), 1)
	old := r

	txn := r.Txn()
	txn.TrackMutate(true)
	txn.Insert([]byte("foo"), 2)
	r = txn.Commit()

	// Nobody watched before the commit; a watch on the old snapshot taken
	// now must still say that "foo" changed, as upstream's closed channel does.
	w, v, _ := old.Root().GetWatch([]byte("foo"))
	if v != 1 {
		t.Fatalf("old snapshot: foo = %v, want 1", v)
	}
	select {
	case <-w:
	default:
		t.Fatal("a watch on a replaced leaf, taken after the commit, has not fired")
	}
	// The new tree's watch has not fired.
	w, _, _ = r.Root().GetWatch([]byte("foo"))
	select {
	case <-w:
		t.Fatal("the new leaf's watch fired")
	default:
	}
	// Without tracking nothing fires, as upstream.
	txn = r.Txn()
	txn.Insert([]byte("foo"), 3)
	txn.Commit()
	select {
	case <-w:
		t.Fatal("an untracked transaction fired a watch")
	default:
	}
}

func TestPatch_WatchersRacingTheNotifyAllSeeItFire(t *testing.T) {
	for round := 0; round < 200; round++ {
		r := New()
		r, _, _ = r.Insert([]byte("foo"), 1)
		txn := r.Txn()
		txn.TrackMutate(true)
		txn.Insert([]byte("foo"), 2)
		txn.CommitOnly()

		var wg sync.WaitGroup
		watches := make([]<-chan struct{}, 8)
		for i := range watches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				watches[i], _, _ = r.Root().GetWatch([]byte("foo"))
			}()
		}
		txn.Notify()
		wg.Wait()
		for i, w := range watches {
			select {
			case <-w:
			default:
				t.Fatalf("round %d: watcher %d holds a channel the notify did not close", round, i)
			}
		}
	}
}

func TestPatch_WritableSetEmptiedWhenFullKeepsTheTreeRight(t *testing.T) {
	// More distinct writes in one transaction than the writable set holds,
	// interleaved with rewrites of early keys, whose nodes have then fallen
	// out of the set and are copied again.
	r := New()
	txn := r.Txn()
	n := writableSetSize * 3
	for i := 0; i < n; i++ {
		txn.Insert([]byte(fmt.Sprintf("k%06d", i)), i)
		if i%1000 == 999 {
			txn.Insert([]byte(fmt.Sprintf("k%06d", i-900)), -i)
		}
	}
	before := r
	r = txn.Commit()
	if before.Len() != 0 || r.Len() != n {
		t.Fatalf("lengths %d and %d, want 0 and %d", before.Len(), r.Len(), n)
	}
	i := 0
	r.Root().Walk(func(k []byte, v interface{}) bool {
		want := i
		if i%1000 == 99 && i+900 < n {
			want = -(i + 900)
		}
		if string(k) != fmt.Sprintf("k%06d", i) || v != want {
			t.Fatalf("entry %d: %s = %v, want k%06d = %d", i, k, v, i, want)
		}
		i++
		return false
	})
	if i != n {
		t.Fatalf("walked %d entries, want %d", i, n)
	}
}

func TestPatch_PrivateTransactionBuildsTheSameTree(t *testing.T) {
	// A private transaction writes in place: the same tree as an ordinary
	// one, with the empty tree it started from and a clone taken halfway
	// left as they were.
	empty := New()
	priv, plain := empty.Txn(), empty.Txn()
	priv.Private()
	if !priv.private {
		t.Fatal("Private had no effect on an empty tree")
	}
	var clone *Txn
	n := 20000
	for i := 0; i < n; i++ {
		k := []byte(fmt.Sprintf("k%05d", (i*7919)%n))
		if i == n/2 {
			clone = priv.Clone()
			if priv.private {
				t.Fatal("a clone did not end the private writes")
			}
		}
		for _, txn := range []*Txn{priv, plain} {
			txn.Insert(k, i)
			if i%10 == 9 {
				txn.Delete([]byte(fmt.Sprintf("k%05d", ((i-5)*7919)%n)))
			}
		}
	}
	got, want := priv.Commit(), plain.Commit()
	if empty.Len() != 0 || empty.Root().leaf != nil || len(empty.Root().edges) != 0 {
		t.Fatal("the empty tree the transactions started from changed")
	}
	held := 0
	clone.Root().Walk(func([]byte, interface{}) bool { held++; return false })
	if held != n/2-n/20 {
		t.Fatalf("the clone holds %d entries, want %d", held, n/2-n/20)
	}
	if got.Len() != want.Len() {
		t.Fatalf("%d entries, want %d", got.Len(), want.Len())
	}
	gi, wi := got.Root().Iterator(), want.Root().Iterator()
	for {
		gk, gv, gok := gi.Next()
		wk, wv, wok := wi.Next()
		if gok != wok || string(gk) != string(wk) || gv != wv {
			t.Fatalf("private %s=%v (%v), ordinary %s=%v (%v)", gk, gv, gok, wk, wv, wok)
		}
		if !gok {
			break
		}
	}
	full, tracked := got.Txn(), empty.Txn()
	tracked.TrackMutate(true)
	if full.Private(); full.private {
		t.Fatal("Private took effect on a tree that is not empty")
	}
	if tracked.Private(); tracked.private {
		t.Fatal("Private took effect on a transaction that tracks mutations")
	}
}
