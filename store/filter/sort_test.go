package filter

import (
	"slices"
	"strings"
	"testing"
)

// sorted sorts recs by src and returns their names in order.
func sorted(t *testing.T, src string, recs ...*item) string {
	t.Helper()
	q := mustCompile(t, src)
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, func(a, b *item) int { return q.Compare(a, b) })
	names := make([]string, len(recs))
	for i, r := range recs {
		names[i] = r.name
	}
	return strings.Join(names, " ")
}

func TestSort_AscendingIsDefault(t *testing.T) {
	got := sorted(t, `sort by name`, &item{name: "b"}, &item{name: "c"}, &item{name: "a"})
	if got != "a b c" {
		t.Errorf("got %q", got)
	}
	if got := sorted(t, `sort by name asc`, &item{name: "b"}, &item{name: "a"}); got != "a b" {
		t.Errorf("asc: got %q", got)
	}
}

func TestSort_Descending(t *testing.T) {
	if got := sorted(t, `sort by name desc`, &item{name: "b"}, &item{name: "c"}, &item{name: "a"}); got != "c b a" {
		t.Errorf("got %q", got)
	}
}

func TestSort_MultipleKeys(t *testing.T) {
	recs := []*item{{name: "x", a: 2, b: 1}, {name: "y", a: 1, b: 1}, {name: "z", a: 2, b: 2}, {name: "w", a: 1, b: 3}}
	if got := sorted(t, `sort by a, b desc`, recs...); got != "w y z x" {
		t.Errorf("a, b desc: got %q", got)
	}
	if got := sorted(t, `sort by b desc, a`, recs...); got != "w z y x" {
		t.Errorf("b desc, a: got %q", got)
	}
}

func TestSort_NullsFirstAscendingLastDescending(t *testing.T) {
	recs := []*item{{name: "b", nick: strp("b")}, {name: "null"}, {name: "a", nick: strp("a")}}
	if got := sorted(t, `sort by nick`, recs...); got != "null a b" {
		t.Errorf("asc: got %q", got)
	}
	if got := sorted(t, `sort by nick desc`, recs...); got != "b a null" {
		t.Errorf("desc: got %q", got)
	}
}

func TestSort_EveryFieldType(t *testing.T) {
	recs := []*item{
		{name: "2", cost: 2.5, isAdmin: true, createdAt: ts("2026-01-02T00:00:00Z"), tags: map[string]any{"k": "s"}},
		{name: "1", cost: int64(2), createdAt: ts("2026-01-01T00:00:00Z"), tags: map[string]any{"k": int64(7)}},
		{name: "3", cost: int64(10), isAdmin: true, createdAt: ts("2026-01-03T00:00:00Z")},
	}
	for _, c := range []struct{ src, want string }{
		{`sort by cost`, "1 2 3"},
		{`sort by isAdmin, name desc`, "1 3 2"},
		{`sort by createdAt desc`, "3 2 1"},
		// Mixed dynamic values: null, then numbers, then strings.
		{`sort by tags.k`, "3 1 2"},
		{`sort by type.name, name`, "1 2 3"},
	} {
		if got := sorted(t, c.src, recs...); got != c.want {
			t.Errorf("%s: got %q, want %q", c.src, got, c.want)
		}
	}
}

func TestSort_NoKeysComparesEqual(t *testing.T) {
	q := mustCompile(t, `name = "a"`)
	if q.HasSort() || q.Compare(&item{name: "a"}, &item{name: "b"}) != 0 {
		t.Errorf("query without sort orders records")
	}
	if !mustCompile(t, `sort by name`).HasSort() {
		t.Errorf("HasSort false with sort by")
	}
}

func TestSort_CombinedWithConditionAndPaging(t *testing.T) {
	q := mustCompile(t, `name contains "web" and isAdmin = false sort by name limit 20`)
	if !q.HasSort() || !q.Match(&item{name: "web"}) {
		t.Fatalf("condition or sort lost")
	}
	if n, ok, none := q.Limit(); n != 20 || !ok || none {
		t.Errorf("Limit() = %d, %v, %v", n, ok, none)
	}
}

func TestClauses_SkipAndLimit(t *testing.T) {
	q := mustCompile(t, `skip 20 limit 5`)
	if n, ok := q.Skip(); n != 20 || !ok {
		t.Errorf("Skip() = %d, %v", n, ok)
	}
	if n, ok, none := q.Limit(); n != 5 || !ok || none {
		t.Errorf("Limit() = %d, %v, %v", n, ok, none)
	}
	if !q.Match(&item{}) {
		t.Errorf("paging-only query filters records")
	}
}

func TestClauses_LimitNone(t *testing.T) {
	q := mustCompile(t, `limit none`)
	if n, ok, none := q.Limit(); n != 0 || !ok || !none {
		t.Errorf("Limit() = %d, %v, %v", n, ok, none)
	}
	if _, ok := q.Skip(); ok {
		t.Errorf("Skip ok without skip")
	}
}

func TestClauses_ZeroIsAllowed(t *testing.T) {
	q := mustCompile(t, `skip 0 limit 0`)
	if n, ok := q.Skip(); n != 0 || !ok {
		t.Errorf("Skip() = %d, %v", n, ok)
	}
	if n, ok, none := q.Limit(); n != 0 || !ok || none {
		t.Errorf("Limit() = %d, %v, %v", n, ok, none)
	}
}

func TestClauses_EachAloneAfterCondition(t *testing.T) {
	checkExpr(t, `a = 1 skip 3`, `a = 1 skip 3`)
	checkExpr(t, `a = 1 limit 3`, `a = 1 limit 3`)
	checkExpr(t, `a = 1 sort by a`, `a = 1 sort by a`)
	checkExpr(t, `sort by a limit 1`, `sort by a limit 1`)
}
