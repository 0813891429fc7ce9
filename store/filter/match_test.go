package filter

import (
	"sync"
	"testing"
)

func TestMatch_StringComparisons(t *testing.T) {
	web, db := &item{name: "web-1"}, &item{name: "db"}
	checkMatches(t, `name = "db"`, yes(db), no(web))
	checkMatches(t, `name != "db"`, no(db), yes(web))
	checkMatches(t, `name < "e"`, yes(db), no(web))
	checkMatches(t, `name <= "db"`, yes(db), no(web))
	checkMatches(t, `name > "db"`, no(db), yes(web))
	checkMatches(t, `name >= "db"`, yes(db), yes(web))
	// Byte order: upper case sorts before lower case.
	checkMatches(t, `name < "a"`, yes(&item{name: "Z"}), no(&item{name: "b"}))
	checkMatches(t, `name between "c" and "db"`, yes(db), no(web), yes(&item{name: "c"}))
	checkMatches(t, `name not between "c" and "db"`, no(db), yes(web))
}

func TestMatch_ContainsAndIContains(t *testing.T) {
	r := &item{name: "Web-Server"}
	checkMatches(t, `name contains "Server"`, yes(r), no(&item{name: "db"}))
	checkMatches(t, `name contains "server"`, no(r))
	checkMatches(t, `name contains ""`, yes(r))
	checkMatches(t, `name icontains "web-s"`, yes(r), no(&item{name: "db"}))
	checkMatches(t, `name icontains "ÉTÉ"`, yes(&item{name: "l'été"}))
	checkMatches(t, `name icontains "k"`, yes(&item{name: "\u212a"})) // Kelvin sign folds to k
	checkMatches(t, `name not contains "Web"`, no(r), yes(&item{name: "db"}))
	checkMatches(t, `name not icontains "WEB"`, no(r), yes(&item{name: "db"}))
}

func TestContainsFold(t *testing.T) {
	for _, c := range []struct {
		s, sub string
		want   bool
	}{
		{"", "", true}, {"abc", "", true}, {"", "a", false},
		{"Hello", "LLO", true}, {"Hello", "lloo", false}, {"ab", "abc", false},
		{"ÀB", "àb", true}, {"xσy", "Σ", true}, {"\xffa", "\xffA", true}, {"\xfe", "\xff", false},
		{"straße", "SS", false}, // simple folding only, like strings.EqualFold
	} {
		if got := containsFold(c.s, c.sub); got != c.want {
			t.Errorf("containsFold(%q, %q) = %v, want %v", c.s, c.sub, got, c.want)
		}
	}
}

func TestMatch_NumberComparisons(t *testing.T) {
	i5, f55, none := &item{cost: int64(5)}, &item{cost: 5.5}, &item{}
	checkMatches(t, `cost = 5`, yes(i5), no(f55), no(none))
	checkMatches(t, `cost = 5.0`, yes(i5), no(f55))
	checkMatches(t, `cost != 5`, no(i5), yes(f55), yes(none))
	checkMatches(t, `cost < 5.5`, yes(i5), no(f55), no(none))
	checkMatches(t, `cost <= 5.5`, yes(i5), yes(f55))
	checkMatches(t, `cost > 5`, no(i5), yes(f55), no(none))
	checkMatches(t, `cost >= 5`, yes(i5), yes(f55))
	checkMatches(t, `cost > -1`, yes(i5), yes(&item{cost: int64(0)}))
	checkMatches(t, `cost between 5 and 5.5`, yes(i5), yes(f55), no(&item{cost: int64(6)}), no(none))
	checkMatches(t, `cost not between 5 and 5.5`, no(i5), yes(&item{cost: int64(6)}), yes(none))
	checkMatches(t, `cost in [1, 5, 7.5]`, yes(i5), no(f55), no(none))
	checkMatches(t, `cost not in [1, 5]`, no(i5), yes(f55), yes(none))
	// Integers compare exactly where float64 would round them together.
	checkMatches(t, `cost = 9007199254740993`, yes(&item{cost: int64(9007199254740993)}), no(&item{cost: int64(9007199254740992)}))
	// Other Go integer types from a hand-written getter still count.
	checkMatches(t, `cost = 3`, yes(&item{cost: 3}), yes(&item{cost: uint8(3)}), yes(&item{cost: float32(3)}))
	// Typed getters.
	checkMatches(t, `score > 1`, yes(&item{score: 1.5}), no(&item{score: 1}))
	checkMatches(t, `a >= 2`, yes(&item{a: 2}), no(&item{a: 1}))
}

func TestMatch_BoolComparisons(t *testing.T) {
	admin, user := &item{isAdmin: true}, &item{}
	checkMatches(t, `isAdmin = true`, yes(admin), no(user))
	checkMatches(t, `isAdmin = false`, no(admin), yes(user))
	checkMatches(t, `isAdmin != true`, no(admin), yes(user))
	checkMatches(t, `isAdmin in [true]`, yes(admin), no(user))
	checkMatches(t, `isAdmin not in [true]`, no(admin), yes(user))
}

func TestMatch_DatetimeComparisons(t *testing.T) {
	jan, feb := &item{createdAt: ts("2026-01-01T00:00:00Z")}, &item{createdAt: ts("2026-02-01T00:00:00Z")}
	checkMatches(t, `createdAt > datetime(2026-01-01T00:00:00Z)`, no(jan), yes(feb))
	checkMatches(t, `createdAt >= datetime(2026-01-01T00:00:00Z)`, yes(jan), yes(feb))
	checkMatches(t, `createdAt < datetime(2026-01-15T00:00:00.5Z)`, yes(jan), no(feb))
	// Same instant in another zone is equal.
	checkMatches(t, `createdAt = datetime(2026-01-01T01:00:00+01:00)`, yes(jan), no(feb))
	checkMatches(t, `createdAt != datetime(2026-01-01T01:00:00+01:00)`, no(jan), yes(feb))
	checkMatches(t, `createdAt between datetime(2026-01-01T00:00:00Z) and datetime(2026-01-31T00:00:00Z)`, yes(jan), no(feb))
	checkMatches(t, `createdAt in [datetime(2026-02-01T00:00:00Z)]`, no(jan), yes(feb))
	// A string literal that parses as RFC 3339 is a datetime for a datetime field.
	checkMatches(t, `createdAt < "2026-01-15T00:00:00Z"`, yes(jan), no(feb))
	// Nullable datetime through Get.
	gone, alive := &item{deletedAt: tsp("2026-03-01T00:00:00Z")}, &item{}
	checkMatches(t, `deletedAt = null`, no(gone), yes(alive))
	checkMatches(t, `deletedAt != null`, yes(gone), no(alive))
	checkMatches(t, `deletedAt > datetime(2026-01-01T00:00:00Z)`, yes(gone), no(alive))
}

func TestMatch_NullSemantics(t *testing.T) {
	null, set := &item{}, &item{nick: strp("bob")}
	checkMatches(t, `nick = null`, yes(null), no(set))
	checkMatches(t, `nick != null`, no(null), yes(set))
	checkMatches(t, `nick = "bob"`, no(null), yes(set))
	checkMatches(t, `nick != "bob"`, yes(null), no(set))
	checkMatches(t, `nick < "z"`, no(null), yes(set))
	checkMatches(t, `nick >= ""`, no(null), yes(set))
	checkMatches(t, `nick contains ""`, no(null), yes(set))
	checkMatches(t, `nick icontains "B"`, no(null), yes(set))
	checkMatches(t, `nick not contains "x"`, yes(null), yes(set))
	checkMatches(t, `nick not icontains "B"`, yes(null), no(set))
	checkMatches(t, `nick between "a" and "z"`, no(null), yes(set))
	checkMatches(t, `nick not between "a" and "z"`, yes(null), no(set))
	checkMatches(t, `nick in ["bob"]`, no(null), yes(set))
	checkMatches(t, `nick in ["x", null]`, yes(null), no(set))
	checkMatches(t, `nick not in ["bob"]`, yes(null), no(set))
	checkMatches(t, `nick not in [null]`, no(null), yes(set))
	// An empty string is a value, not null.
	checkMatches(t, `nick = null`, no(&item{nick: strp("")}))
	// A field that is never null never equals null.
	checkMatches(t, `name = null`, no(&item{}))
}

func TestMatch_WrongGoTypeFromGetReadsAsNull(t *testing.T) {
	checkMatches(t, `cost = null`, yes(&item{cost: "five"}), yes(&item{cost: []int{}}))
	checkMatches(t, `tags.x = null`, yes(&item{tags: map[string]any{"x": struct{}{}}}))
}

func TestMatch_ArrayFunctions(t *testing.T) {
	ops, dev, both, empty := &item{roles: []string{"ops"}}, &item{roles: []string{"dev"}},
		&item{roles: []string{"ops", "dev"}}, &item{}
	checkMatches(t, `anyOf(roleAttributes) = "ops"`, yes(ops), no(dev), yes(both), no(empty))
	checkMatches(t, `anyOf(roleAttributes) in ["ops", "dev"]`, yes(ops), yes(dev), yes(both), no(empty))
	checkMatches(t, `anyOf(roleAttributes) != "ops"`, no(ops), yes(dev), yes(both), no(empty))
	checkMatches(t, `allOf(roleAttributes) = "ops"`, yes(ops), no(dev), no(both), yes(empty))
	checkMatches(t, `allOf(roleAttributes) contains "o"`, yes(ops), no(dev), no(both), yes(empty))
	checkMatches(t, `allOf(roleAttributes) not in ["ops"]`, no(ops), yes(dev), no(both), yes(empty))
	checkMatches(t, `anyOf(roleAttributes) icontains "DE"`, no(ops), yes(dev), yes(both))
	checkMatches(t, `anyOf(roleAttributes) between "a" and "e"`, no(ops), yes(dev), yes(both))
	checkMatches(t, `isEmpty(roleAttributes)`, no(ops), yes(empty), yes(&item{roles: []string{}}))
	checkMatches(t, `not isEmpty(roleAttributes)`, yes(ops), no(empty))
	checkMatches(t, `count(roleAttributes) > 1`, no(ops), yes(both), no(empty))
	checkMatches(t, `count(roleAttributes) = 0`, no(ops), yes(empty))
	checkMatches(t, `count(roleAttributes) between 1 and 1.5`, yes(ops), no(both))
	checkMatches(t, `count(roleAttributes) in [2]`, no(ops), yes(both))
}

func TestMatch_InListsOfAnySize(t *testing.T) {
	// Eight or more strings use a set; both paths must agree.
	checkMatches(t, `name in ["a","b","c","d","e","f","g","h"]`, yes(&item{name: "h"}), no(&item{name: "i"}))
	checkMatches(t, `name not in ["a","b","c","d","e","f","g","h"]`, no(&item{name: "a"}), yes(&item{name: "i"}))
	checkMatches(t, `name in []`, no(&item{}))
	checkMatches(t, `name not in []`, yes(&item{}))
}

func TestMatch_DynamicTagValues(t *testing.T) {
	r := &item{tags: map[string]any{"team": "x", "n": int64(3), "f": 2.5, "on": true, "t": "2026-01-01T00:00:00Z"}}
	checkMatches(t, `tags.team = "x"`, yes(r), no(&item{}))
	checkMatches(t, `tags.team != "x"`, no(r), yes(&item{}))
	checkMatches(t, `tags.team = null`, no(r), yes(&item{}))
	checkMatches(t, `tags.missing = null`, yes(r))
	checkMatches(t, `tags.team contains "x" and tags.team icontains "X"`, yes(r))
	checkMatches(t, `tags.n contains "3"`, no(r)) // not a string
	checkMatches(t, `tags.n = 3 and tags.n > 2.5 and tags.n between 3 and 4`, yes(r))
	checkMatches(t, `tags.f < 3 and tags.f in [1, 2.5]`, yes(r))
	checkMatches(t, `tags.on = true and tags.on != false`, yes(r))
	checkMatches(t, `tags.n = "3"`, no(r))   // kinds differ: no operator holds
	checkMatches(t, `tags.n != "3"`, yes(r)) // ... except the negated ones
	checkMatches(t, `tags.n < "3"`, no(r))
	checkMatches(t, `tags.team in [1, "x"]`, yes(r))
	checkMatches(t, `tags.t > datetime(2025-12-31T00:00:00Z)`, yes(r))
	checkMatches(t, `tags.team > datetime(2025-12-31T00:00:00Z)`, no(r))
	checkMatches(t, `tags.team between "a" and 5`, no(r))
}

func TestMatch_DottedField(t *testing.T) {
	checkMatches(t, `type.name = "router"`, yes(&item{typeName: "router"}), no(&item{typeName: "user"}))
}

func TestMatch_CombinedOperators(t *testing.T) {
	checkMatches(t, `name contains "web" and isAdmin = false`,
		yes(&item{name: "web1"}), no(&item{name: "web1", isAdmin: true}), no(&item{name: "db"}))
	checkMatches(t, `a = 1 or b = 1 or c = 1`, yes(&item{c: 1}), no(&item{}))
	checkMatches(t, `a = 1 and b = 1 and c = 1`, yes(&item{a: 1, b: 1, c: 1}), no(&item{a: 1, b: 1}))
	checkMatches(t, `not (a = 1 or b = 2)`, yes(&item{}), no(&item{a: 1}), no(&item{b: 2}))
}

func TestQuery_NilQueryIsHarmless(t *testing.T) {
	var q *Query
	if !q.Match(&item{}) || q.HasSort() || q.Compare(1, 2) != 0 || q.Expr() != "" {
		t.Errorf("nil query misbehaves")
	}
}

func TestQuery_MatchIsSafeForConcurrentUse(t *testing.T) {
	q := mustCompile(t, `name in ["a","b","c","d","e","f","g","h"] or tags.x icontains "y" sort by name`)
	recs := []*item{{name: "a"}, {name: "z", tags: map[string]any{"x": "Y"}}, {name: "q"}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				if !q.Match(recs[0]) || !q.Match(recs[1]) || q.Match(recs[2]) || q.Compare(recs[0], recs[2]) >= 0 {
					t.Error("wrong result under concurrency")
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestQuery_HasConditionOnlyWithAnExpression(t *testing.T) {
	for src, want := range map[string]bool{``: false, `sort by name limit 3`: false, `a = 1`: true, `not isEmpty(roleAttributes) skip 1`: true} {
		if got := mustCompile(t, src).HasCondition(); got != want {
			t.Errorf("%q: HasCondition() = %v, want %v", src, got, want)
		}
	}
}

// TestMatch_TrueAndFalseAsConditions: OpenZiti's clients send "true" (and
// "true limit 10") to ask for everything.
func TestMatch_TrueAndFalseAsConditions(t *testing.T) {
	r := &item{name: "web"}
	checkMatches(t, `true`, yes(r))
	checkMatches(t, `false`, no(r))
	checkMatches(t, `not false`, yes(r))
	checkMatches(t, `true and name = "db"`, no(r))
	checkMatches(t, `false or name = "web"`, yes(r))
	checkMatches(t, `(true) and not (false)`, yes(r))
	q := mustCompile(t, `true skip 0 limit 2`)
	if n, ok, _ := q.Limit(); !q.Match(r) || !ok || n != 2 || q.Expr() != "true skip 0 limit 2" {
		t.Fatalf("true skip 0 limit 2: match %v, limit %d, expr %q", q.Match(r), n, q.Expr())
	}
}
