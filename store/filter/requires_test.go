package filter

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestRequires_ShapesThatConstrainTheField(t *testing.T) {
	for _, c := range []struct {
		src        string
		sub        string   // the substring every match contains
		pass, fail []string // names the test must let through / reject
	}{
		{`name contains "needle"`, "needle", []string{"needle-01", "a needle"}, []string{"web", "Needle"}},
		{`name = "db"`, "db", []string{"db"}, []string{"db2", ""}},
		{`name != "db"`, "", []string{"web"}, []string{"db"}},
		{`name icontains "NEEDLE" and isAdmin = true`, "", []string{"a-Needle"}, []string{"web"}},
		{`isAdmin = true and (name = "a" or name = "b")`, "", []string{"a", "b"}, []string{"c"}},
		{`name contains "ee" and name contains "needle"`, "needle", []string{"needle"}, []string{"ee"}},
		{`not (name not contains "x")`, "x", []string{"x1"}, []string{"web"}},
		{`not (name contains "x")`, "", []string{"web"}, []string{"x1"}},
		{`not (name contains "x" or isAdmin = true)`, "", []string{"web"}, []string{"x1"}},
		{`name in ["a", "b"] and name not in ["b"]`, "", []string{"a"}, []string{"b", "c"}},
		{`name between "b" and "d" sort by name limit 5`, "", []string{"c"}, []string{"a", "e"}},
		{`name = null`, "", nil, []string{"", "a"}}, // a name is never null
		{`name != null`, "", []string{"", "a"}, nil},
	} {
		need := mustCompile(t, c.src).Requires("name")
		if need == nil {
			t.Errorf("%q: Requires(name) = nil, want a test", c.src)
			continue
		}
		if need.Substring != c.sub {
			t.Errorf("%q: substring %q, want %q", c.src, need.Substring, c.sub)
		}
		for _, n := range c.pass {
			if !need.Test(n) {
				t.Errorf("%q: the test rejects %q", c.src, n)
			}
		}
		for _, n := range c.fail {
			if need.Test(n) {
				t.Errorf("%q: the test lets %q through", c.src, n)
			}
		}
	}
}

func TestRequires_NilWhenTheFieldIsNotConstrained(t *testing.T) {
	for _, src := range []string{
		``, `limit 5`, `sort by name`, `isAdmin = true`,
		`name = "a" or isAdmin = true`,        // a branch without name
		`not (name = "a" and isAdmin = true)`, // = name != "a" or isAdmin != true
		`anyOf(roleAttributes) = "name"`,
		`nick = "a"`, // another field
	} {
		if mustCompile(t, src).Requires("name") != nil {
			t.Errorf("%q: Requires(name) is a test, want nil", src)
		}
	}
	var q *Query
	if q.Requires("name") != nil {
		t.Error("nil query: Requires(name) is a test, want nil")
	}
}

// TestRequires_NeverRejectsAMatch checks the contract on random conditions:
// whenever Match holds, the record's name passes the test and contains the
// substring.
func TestRequires_NeverRejectsAMatch(t *testing.T) {
	names := []string{"", "a", "b", "ab", "needle-1", "Needle", "web"}
	var recs []*item
	for _, n := range names {
		recs = append(recs, &item{name: n}, &item{name: n, isAdmin: true, a: 1})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	atoms := []string{`name = "a"`, `name != "ab"`, `name contains "b"`, `name = "needle-1"`, `name contains "eed"`, `name icontains "NEEDLE"`, `name in ["a", "web"]`,
		`name < "b"`, `name between "a" and "b"`, `name = null`, `isAdmin = true`, `a = 1`, `nick = null`}
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth == 0 || rng.IntN(3) == 0 {
			return atoms[rng.IntN(len(atoms))]
		}
		switch rng.IntN(3) {
		case 0:
			return "not (" + gen(depth-1) + ")"
		case 1:
			return "(" + gen(depth-1) + " and " + gen(depth-1) + ")"
		}
		return "(" + gen(depth-1) + " or " + gen(depth-1) + ")"
	}
	constrained := 0
	for range 3000 {
		src := gen(4)
		q := mustCompile(t, src)
		need := q.Requires("name")
		if need == nil {
			continue
		}
		constrained++
		for _, r := range recs {
			if q.Match(r) && (!need.Test(r.name) || !strings.Contains(r.name, need.Substring)) {
				t.Fatalf("%q matches name %q (isAdmin %v) but its need %+v rejects it", src, r.name, r.isAdmin, need)
			}
		}
	}
	if constrained < 300 {
		t.Fatalf("only %d of 3000 random conditions constrain name: the generator does not exercise Requires", constrained)
	}
}

func TestRequiresAnyOf_ValuesEveryMatchHasOneOf(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string // nil: the condition does not bound the field
	}{
		{`anyOf(roleAttributes) = "ops"`, []string{"ops"}},
		{`anyOf(roleAttributes) in ["ops", "dev"]`, []string{"ops", "dev"}},
		{`anyOf(roleAttributes) = "ops" and name contains "x"`, []string{"ops"}},
		{`anyOf(roleAttributes) in ["a", "b"] and anyOf(roleAttributes) = "c"`, []string{"c"}},
		{`anyOf(roleAttributes) = "a" or anyOf(roleAttributes) in ["b", "a"]`, []string{"a", "b"}},
		{`not (anyOf(roleAttributes) != "ops" or isAdmin = true)`, nil}, // "not (anyOf != x)" is allOf = x: an empty list meets it
		{`not (name = "x" or not (anyOf(roleAttributes) = "ops"))`, []string{"ops"}},
		{`anyOf(roleAttributes) = "a" or name = "x"`, nil},
		{`anyOf(roleAttributes) != "ops"`, nil},
		{`anyOf(roleAttributes) not in ["ops"]`, nil},
		{`allOf(roleAttributes) = "ops"`, nil},
		{`anyOf(roleAttributes) contains "op"`, nil},
		{`anyOf(roleAttributes) = ""`, nil},
		{`isEmpty(roleAttributes)`, nil},
		{`name = "ops"`, nil},
		{`true sort by name`, nil},
	} {
		got := mustCompile(t, c.src).RequiresAnyOf("roleAttributes")
		if (got == nil) != (c.want == nil) || strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%q: RequiresAnyOf = %q, want %q", c.src, got, c.want)
		}
	}
	if got := (*Query)(nil).RequiresAnyOf("roleAttributes"); got != nil {
		t.Errorf("no query: %q, want nil", got)
	}
}

// Every record the query matches has one of the values RequiresAnyOf names
// (random role lists against random shapes).
func TestRequiresAnyOf_NeverLeavesAMatchOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	attrs := []string{"a", "b", "c", "d"}
	shapes := []string{
		`anyOf(roleAttributes) = "a"`, `anyOf(roleAttributes) in ["a", "c"]`,
		`anyOf(roleAttributes) = "a" and anyOf(roleAttributes) != "b"`,
		`(anyOf(roleAttributes) = "b" or anyOf(roleAttributes) = "c") and not isEmpty(roleAttributes)`,
		`not (not (anyOf(roleAttributes) = "d"))`,
	}
	for _, src := range shapes {
		q := mustCompile(t, src)
		vals := q.RequiresAnyOf("roleAttributes")
		if vals == nil {
			t.Fatalf("%q: RequiresAnyOf = nil", src)
		}
		for range 500 {
			it := &item{roles: nil}
			for _, a := range attrs {
				if rng.IntN(3) == 0 {
					it.roles = append(it.roles, a)
				}
			}
			if !q.Match(it) {
				continue
			}
			hit := false
			for _, v := range vals {
				hit = hit || slices.Contains(it.roles, v)
			}
			if !hit {
				t.Fatalf("%q matches roles %q, which have none of %q", src, it.roles, vals)
			}
		}
	}
}

// IsAnyOf names a value only when the query matches exactly the records
// whose list holds it, so a list may take its count from an index.
func TestIsAnyOf_OnlyWhenTheConditionIsExactlyMembership(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	attrs := []string{"a", "b", "c"}
	for _, src := range []string{`anyOf(roleAttributes) = "a"`, `anyOf(roleAttributes) in ["a"]`, `anyOf(roleAttributes) = "a" sort by name skip 3 limit 2`} {
		q := mustCompile(t, src)
		v, ok := q.IsAnyOf("roleAttributes")
		if !ok || v != "a" {
			t.Fatalf("%q: IsAnyOf = %q, %v; want \"a\", true", src, v, ok)
		}
		for range 300 {
			it := &item{}
			for _, a := range attrs {
				if rng.IntN(2) == 0 {
					it.roles = append(it.roles, a)
				}
			}
			if q.Match(it) != slices.Contains(it.roles, "a") {
				t.Fatalf("%q: Match(%q) = %v", src, it.roles, q.Match(it))
			}
		}
	}
	for _, src := range []string{
		``, `anyOf(roleAttributes) != "a"`, `anyOf(roleAttributes) in ["a", "b"]`, `allOf(roleAttributes) = "a"`,
		`anyOf(roleAttributes) = "a" and anyOf(roleAttributes) = "b"`, `anyOf(roleAttributes) = "a" or isEmpty(roleAttributes)`,
		`not (anyOf(roleAttributes) = "a")`, `anyOf(roleAttributes) = ""`, `anyOf(roleAttributes) contains "a"`,
	} {
		if v, ok := mustCompile(t, src).IsAnyOf("roleAttributes"); ok {
			t.Fatalf("%q: IsAnyOf = %q, true; want false", src, v)
		}
	}
	if _, ok := mustCompile(t, `anyOf(roleAttributes) = "a"`).IsAnyOf("tags"); ok {
		t.Fatal("IsAnyOf of another field = true")
	}
}
