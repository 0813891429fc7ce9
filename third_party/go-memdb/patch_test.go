// Copyright 2026 The edgectl authors
// This Source Code Form is subject to the terms of the Mozilla Public License, v. 2.0. If a copy of the MPL
// was not distributed with this file, You can obtain one at https://mozilla.org/MPL/2.0/.

package memdb

import (
	"fmt"
	"testing"
)

// Tests of edgectl's patch: reads make watch channels only when asked.

func TestPatch_IteratorWatchAskedForAfterTheChangeFires(t *testing.T) {
	db, err := NewMemDB(testValidSchema())
	if err != nil {
		t.Fatal(err)
	}
	obj := testObj()
	txn := db.Txn(true)
	if err := txn.Insert("main", obj); err != nil {
		t.Fatal(err)
	}
	txn.Commit()

	read := db.Txn(false)
	iter, err := read.Get("main", "foo", obj.Foo)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := read.GetReverse("main", "foo", obj.Foo)
	if err != nil {
		t.Fatal(err)
	}

	// The row changes before anyone asks for the iterators' channels.
	changed := *obj
	changed.Foo = "Changed"
	txn = db.Txn(true)
	if err := txn.Insert("main", &changed); err != nil {
		t.Fatal(err)
	}
	txn.Commit()

	for name, ch := range map[string]<-chan struct{}{"Get": iter.WatchCh(), "GetReverse": rev.WatchCh()} {
		select {
		case <-ch:
		default:
			t.Fatalf("%s's watch, asked for after the change committed, has not fired", name)
		}
	}
	// The read still sees its snapshot.
	if got := iter.Next(); got != obj {
		t.Fatalf("Get after the change = %v, want the snapshot's row", got)
	}
}

func TestPatch_FirstAndLastStillFindTheirRows(t *testing.T) {
	db, err := NewMemDB(testValidSchema())
	if err != nil {
		t.Fatal(err)
	}
	a, b := testObj(), testObj()
	a.ID, b.ID = "a", "b"
	txn := db.Txn(true)
	for _, o := range []*TestObject{a, b} {
		if err := txn.Insert("main", o); err != nil {
			t.Fatal(err)
		}
	}
	txn.Commit()
	read := db.Txn(false)
	for _, c := range []struct {
		index string
		arg   string
		last  bool
		want  any
	}{
		{"id", "a", false, a}, {"id", "b", true, b}, {"foo", a.Foo, false, a}, {"foo", a.Foo, true, b},
		{"id_prefix", "", false, a}, {"id_prefix", "", true, b}, {"id", "c", false, nil},
	} {
		var got any
		if c.last {
			got, err = read.Last("main", c.index, c.arg)
		} else {
			got, err = read.First("main", c.index, c.arg)
		}
		if err != nil {
			t.Fatal(err)
		}
		if c.want == nil && got == nil {
			continue
		}
		if got != c.want {
			t.Fatalf("%s %q last=%v: got %v, want %v", c.index, c.arg, c.last, got, c.want)
		}
	}
}

func TestPatch_LookupsInAWriteTransactionSeeItsWritesAndIteratorsKeepTheirView(t *testing.T) {
	db, err := NewMemDB(testValidSchema())
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := testObj(), testObj(), testObj()
	a.ID, b.ID, c.ID = "a", "b", "c"
	txn := db.Txn(true)
	if err := txn.Insert("main", a); err != nil {
		t.Fatal(err)
	}
	// First reads the transaction's own index without cloning it ...
	if got, err := txn.First("main", "id", "a"); err != nil || got != a {
		t.Fatalf("First(a) in the writing transaction = %v, %v", got, err)
	}
	// ... while an iterator still gets a view of its own.
	it, err := txn.Get("main", "id_prefix", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []*TestObject{b, c} {
		if err := txn.Insert("main", o); err != nil {
			t.Fatal(err)
		}
		if got, err := txn.First("main", "id", o.ID); err != nil || got != o {
			t.Fatalf("First(%s) after its insert = %v, %v", o.ID, got, err)
		}
	}
	if got, err := txn.Last("main", "id_prefix", ""); err != nil || got != c {
		t.Fatalf("Last = %v, %v; want c", got, err)
	}
	var seen []string
	for o := it.Next(); o != nil; o = it.Next() {
		seen = append(seen, o.(*TestObject).ID)
	}
	if len(seen) != 1 || seen[0] != "a" {
		t.Fatalf("the iterator opened after a's insert saw %v, want [a]", seen)
	}
	txn.Commit()
	read := db.Txn(false)
	for _, o := range []*TestObject{a, b, c} {
		if got, _ := read.First("main", "id", o.ID); got != o {
			t.Fatalf("after commit First(%s) = %v", o.ID, got)
		}
	}
}

func TestPatch_APrivateTransactionFillsANewSnapshotAndIteratorsKeepTheirView(t *testing.T) {
	db, err := NewMemDB(testValidSchema())
	if err != nil {
		t.Fatal(err)
	}
	snap := db.Snapshot()
	txn := snap.Txn(true)
	txn.Private()
	objs := make([]*TestObject, 300)
	var it ResultIterator
	for i := range objs {
		objs[i] = testObj()
		objs[i].ID = fmt.Sprintf("o%03d", (i*7)%len(objs))
		objs[i].Foo = fmt.Sprintf("foo%d", i%5)
		if err := txn.Insert("main", objs[i]); err != nil {
			t.Fatal(err)
		}
		if got, err := txn.First("main", "id", objs[i].ID); err != nil || got != objs[i] {
			t.Fatalf("First(%s) after its insert = %v, %v", objs[i].ID, got, err)
		}
		if i == 99 {
			if it, err = txn.Get("main", "id"); err != nil {
				t.Fatal(err)
			}
		}
	}
	seen := 0
	for o := it.Next(); o != nil; o = it.Next() {
		seen++
	}
	if seen != 100 {
		t.Fatalf("the iterator opened after 100 inserts saw %d", seen)
	}
	txn.Commit()
	for _, d := range []*MemDB{db} {
		if got, _ := d.Txn(false).First("main", "id"); got != nil {
			t.Fatalf("the MemDB the snapshot was taken of holds %v", got)
		}
	}
	read := snap.Txn(false)
	for _, o := range objs {
		if got, _ := read.First("main", "id", o.ID); got != o {
			t.Fatalf("after commit First(%s) = %v", o.ID, got)
		}
	}
	n := 0
	res, _ := read.Get("main", "foo", "foo3")
	for o := res.Next(); o != nil; o = res.Next() {
		n++
	}
	if n != len(objs)/5 {
		t.Fatalf("%d objects of foo3, want %d", n, len(objs)/5)
	}
}
