package filter

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	``,
	`   `,
	`name contains "web" and isAdmin = false sort by name limit 20`,
	`anyOf(roleAttributes) in ["ops", "dev"]`,
	`createdAt > datetime(2026-01-01T00:00:00Z)`,
	`not (a = 1 or b = 2)`,
	`cost between 10 and 20`,
	`name not in ["a","b"]`,
	`tags.team = "x"`,
	`nick = null`,
	`nick != null`,
	`a = 1 or b = 2 and c = 3`,
	`allOf(roleAttributes) contains "o" and isEmpty(roleAttributes) or count(roleAttributes) > 2`,
	`not isEmpty(roleAttributes)`,
	`name icontains "ÉTÉ" and name not icontains "\"\\\n\t"`,
	`cost = -1.5 or cost in [1, 2.5, null] or cost not between -3 and 4`,
	`createdAt between "2026-01-01T00:00:00Z" and datetime(2027-01-01T00:00:00.123+02:00)`,
	`tags.n > 3 or tags.t < datetime(2026-01-01T00:00:00Z) or tags.b in [true, "x", 1, null]`,
	`sort by name desc, createdAt skip 20 limit 5`,
	`limit none`,
	`Sort By name DESC SKIP 1 LIMIT NONE`,
	`type.name = "router"`,
	// Fields read through a reference: the referenced record's fields of
	// every type, its tags, a chain, its id, and sorting by the reference.
	`owner.name = "boss" and owner.isAdmin = true or owner.cost > 3`,
	`anyOf(owner.roleAttributes) = "ops" or owner.tags.team = "red" or owner.type.name = null`,
	`owner.owner.name icontains "RO" and owner.id != "o2" sort by owner desc`,
	`owner.createdAt < datetime(2027-01-01T00:00:00Z) and count(owner.roleAttributes) = 1`,
	// Invalid ones, to start the fuzzer near every error path.
	`name =`,
	`(name = "x"`,
	`name = "x")`,
	`name = "abc`,
	`name = "a\q"`,
	`cost = 12abc`,
	`cost = 1.`,
	`type. = 1`,
	`owner.nme = 1`,
	`owner.tags = 1`,
	`sort by owner.name`,
	`owner.owner.owner.owner.owner.owner.owner.owner.owner.name = 1`,
	`createdAt = datetime(2026`,
	`createdAt = datetime(x)`,
	`sort by`,
	`limit -1`,
	`limit 5 skip 3`,
	`nme = "x"`,
	`isAdmin = "x"`,
	`roleAttributes = "x"`,
	`anyOf(name) = "x"`,
	`((((((((((((((((((((((((((((((((((a = 1))))))))))))))))))))))))))))))))))`,
	`not not not not not not not not not not not not not not not not not not not not not not not not not not not not not not not not not a = 1`,
	`cost in [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]`,
	"name = \"\xff\xfe\" and name icontains \"\xc3\"",
}

// FuzzCompile checks that no input panics, that every failure is an *Error
// pointing inside the query, and that a compiled query's canonical text
// compiles back to the same text and the same answers.
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	schema := testSchema()
	recs := []*item{
		{},
		{name: "web", nick: strp("Web"), isAdmin: true, cost: int64(15), score: 1.5, a: 1, b: 2, c: 3,
			createdAt: ts("2026-06-01T00:00:00Z"), deletedAt: tsp("2026-07-01T00:00:00Z"),
			roles: []string{"ops", "dev"}, typeName: "router",
			tags: map[string]any{"team": "x", "n": int64(4), "f": 2.5, "b": true, "t": "2025-01-01T00:00:00Z"}},
		{name: "\xff", cost: 2.5, roles: []string{""}, tags: map[string]any{"team": nil}, owner: "o1"},
		{name: "boss", owner: "gone"},
	}
	f.Fuzz(func(t *testing.T, src string) {
		q, err := CompileIn(src, schema, testEnv)
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("Compile(%q) error %T, want *Error", src, err)
			}
			if fe.Pos < 0 || fe.Pos > len(src) || fe.Msg == "" {
				t.Fatalf("Compile(%q) = %v: position outside the query or no message", src, fe)
			}
			return
		}
		canon := q.Expr()
		var q2 *Query
		if len(canon) <= MaxQueryLen {
			q2, err = CompileIn(canon, schema, testEnv)
			if err != nil {
				t.Fatalf("canonical form of %q does not compile: %q: %v", src, canon, err)
			}
			if again := q2.Expr(); again != canon {
				t.Fatalf("canonical form not stable: %q -> %q -> %q", src, canon, again)
			}
		}
		need := q.Requires("name")
		for _, r := range recs {
			m := q.Match(r)
			if q2 != nil && q2.Match(r) != m {
				t.Fatalf("%q and its canonical form %q disagree on %+v", src, canon, *r)
			}
			if m && need != nil && (!need.Test(r.name) || !strings.Contains(r.name, need.Substring)) {
				t.Fatalf("%q matches %+v but its Requires(\"name\") %+v rejects %q", src, *r, need, r.name)
			}
			for _, r2 := range recs {
				if c, c2 := q.Compare(r, r2), q.Compare(r2, r); sign(c) != -sign(c2) {
					t.Fatalf("%q: Compare not antisymmetric: %d, %d", src, c, c2)
				}
			}
		}
		q.Skip()
		q.Limit()
		if strings.TrimSpace(src) == "" && canon != "" {
			t.Fatalf("empty query printed as %q", canon)
		}
	})
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// FuzzContainsFold checks the allocation-free case-insensitive search
// against a plain reference on valid UTF-8: try every rune position and
// compare a window of as many runes as sub has with strings.EqualFold.
func FuzzContainsFold(f *testing.F) {
	for _, s := range [][2]string{{"Hello", "LL"}, {"\u212a", "k"}, {"l'été", "ÉTÉ"}, {"xσy", "Σ"}, {"abc", ""}, {"ſ", "S"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, s, sub string) {
		if !utf8.ValidString(s) || !utf8.ValidString(sub) {
			containsFold(s, sub) // must not panic; the reference differs on invalid bytes
			return
		}
		want := sub == ""
		n := utf8.RuneCountInString(sub)
		for i := range s {
			j, k := i, 0
			for k < n && j < len(s) {
				_, w := utf8.DecodeRuneInString(s[j:])
				j += w
				k++
			}
			if k == n && strings.EqualFold(s[i:j], sub) {
				want = true
				break
			}
		}
		if got := containsFold(s, sub); got != want {
			t.Fatalf("containsFold(%q, %q) = %v, want %v", s, sub, got, want)
		}
	})
}
