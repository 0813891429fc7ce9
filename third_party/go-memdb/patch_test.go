package memdb

import "testing"

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
