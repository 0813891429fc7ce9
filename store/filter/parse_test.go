package filter

import "testing"

// The canonical text shows how a query was grouped and what its literals
// became, so these tests check the parser through Expr.

func checkExpr(t *testing.T, src, want string) {
	t.Helper()
	if got := mustCompile(t, src).Expr(); got != want {
		t.Errorf("Compile(%q).Expr() = %q, want %q", src, got, want)
	}
}

func TestCompile_ContractExamplesParse(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`name contains "web" and isAdmin = false sort by name limit 20`, `name contains "web" and isAdmin = false sort by name limit 20`},
		{`anyOf(roleAttributes) in ["ops", "dev"]`, `anyOf(roleAttributes) in ["ops", "dev"]`},
		{`createdAt > datetime(2026-01-01T00:00:00Z)`, `createdAt > datetime(2026-01-01T00:00:00Z)`},
		{`not (a = 1 or b = 2)`, `not (a = 1 or b = 2)`},
		{`cost between 10 and 20`, `cost between 10 and 20`},
		{`name not in ["a","b"]`, `name not in ["a", "b"]`},
		{`tags.team = "x"`, `tags.team = "x"`},
		{`nick = null`, `nick = null`},
		{`nick != null`, `nick != null`},
	} {
		checkExpr(t, c.src, c.want)
	}
}

func TestCompile_AndBindsTighterThanOr(t *testing.T) {
	checkExpr(t, `a = 1 or b = 2 and c = 3`, `a = 1 or b = 2 and c = 3`)
	checkExpr(t, `a = 1 and b = 2 or c = 3`, `a = 1 and b = 2 or c = 3`)
	// The grouping is visible once parentheses override it.
	checkExpr(t, `(a = 1 or b = 2) and c = 3`, `(a = 1 or b = 2) and c = 3`)
	checkExpr(t, `a = 1 and (b = 2 or c = 3)`, `a = 1 and (b = 2 or c = 3)`)
	// And semantically: a or (b and c).
	checkMatches(t, `a = 1 or b = 2 and c = 3`,
		yes(&item{a: 1}), no(&item{b: 2}), yes(&item{b: 2, c: 3}), no(&item{c: 3}))
}

func TestCompile_RedundantParenthesesAreDropped(t *testing.T) {
	checkExpr(t, `((a = 1))`, `a = 1`)
	checkExpr(t, `(a = 1 or b = 2) or c = 3`, `a = 1 or b = 2 or c = 3`)
	checkExpr(t, `a = 1 and (b = 2 and c = 3)`, `a = 1 and b = 2 and c = 3`)
	checkExpr(t, `(a = 1 and b = 2) or c = 3`, `a = 1 and b = 2 or c = 3`)
}

func TestCompile_NotIsAPrefixOnATerm(t *testing.T) {
	// not applies to the next term only, so it binds tighter than and.
	checkExpr(t, `not a = 1 and b = 2`, `not a = 1 and b = 2`)
	checkMatches(t, `not a = 1 and b = 2`, yes(&item{b: 2}), no(&item{a: 1, b: 2}), no(&item{}))
	checkExpr(t, `not not a = 1`, `not not a = 1`)
	checkExpr(t, `not (a = 1 and b = 2)`, `not (a = 1 and b = 2)`)
	checkExpr(t, `not isEmpty(roleAttributes)`, `not isEmpty(roleAttributes)`)
}

func TestCompile_KeywordsAreCaseInsensitive(t *testing.T) {
	checkExpr(t, `name CONTAINS "x" AND isAdmin = TRUE Or nick = Null`, `name contains "x" and isAdmin = true or nick = null`)
	checkExpr(t, `NOT name NOT IN ["a"] and cost NOT BETWEEN 1 AND 2`, `not name not in ["a"] and cost not between 1 and 2`)
	checkExpr(t, `name ICONTAINS "x" and name Not IContains "y"`, `name icontains "x" and name not icontains "y"`)
	checkExpr(t, `createdAt < DateTime(2026-11-22T01:00:00Z)`, `createdAt < datetime(2026-11-22T01:00:00Z)`)
	checkExpr(t, `ANYOF(roleAttributes) = "a" and AllOf(roleAttributes) = "b" and COUNT(roleAttributes) > 1 and IsEmpty(roleAttributes)`,
		`anyOf(roleAttributes) = "a" and allOf(roleAttributes) = "b" and count(roleAttributes) > 1 and isEmpty(roleAttributes)`)
	checkExpr(t, `Sort By name DESC, cost Asc SKIP 1 LIMIT NONE`, `sort by name desc, cost skip 1 limit none`)
}

func TestCompile_StringEscapes(t *testing.T) {
	q := mustCompile(t, `name = "a\"b\\c\nd\te"`)
	if !q.Match(&item{name: "a\"b\\c\nd\te"}) {
		t.Errorf("escaped string did not match its decoded value")
	}
	if got, want := q.Expr(), `name = "a\"b\\c\nd\te"`; got != want {
		t.Errorf("Expr() = %q, want %q", got, want)
	}
	checkMatches(t, `name = ""`, yes(&item{}), no(&item{name: "x"}))
	checkMatches(t, `name = "héllo wörld"`, yes(&item{name: "héllo wörld"}))
}

func TestCompile_NumberLiterals(t *testing.T) {
	checkExpr(t, `cost = 42`, `cost = 42`)
	checkExpr(t, `cost = -7`, `cost = -7`)
	checkExpr(t, `cost = 1.50`, `cost = 1.5`)
	checkExpr(t, `cost = 2.0`, `cost = 2.0`) // stays a decimal
	checkExpr(t, `cost = -0.25`, `cost = -0.25`)
	checkExpr(t, `cost = 9223372036854775807`, `cost = 9223372036854775807`)
	checkExpr(t, `cost=1`, `cost = 1`)
}

func TestCompile_DatetimeLiterals(t *testing.T) {
	checkExpr(t, `createdAt = datetime(2026-11-22T01:00:00Z)`, `createdAt = datetime(2026-11-22T01:00:00Z)`)
	checkExpr(t, `createdAt = datetime( 2026-11-22T01:00:00.123456Z )`, `createdAt = datetime(2026-11-22T01:00:00.123456Z)`)
	checkExpr(t, `createdAt = datetime(2026-11-22T01:00:00+02:00)`, `createdAt = datetime(2026-11-22T01:00:00+02:00)`)
}

func TestCompile_DottedAndFunctionNamedFields(t *testing.T) {
	checkExpr(t, `type.name = "t"`, `type.name = "t"`)
	checkExpr(t, `tags.a_1.b = 1`, `tags.a_1.b = 1`)
	// A function name is a field when no "(" follows.
	s := &Schema{Fields: map[string]Field{"count": IntField(func(any) int64 { return 3 })}}
	q, err := Compile(`count = 3`, s)
	if err != nil || !q.Match(nil) {
		t.Fatalf("field named count: %v", err)
	}
}

func TestCompile_EmptyQueryMatchesEverything(t *testing.T) {
	for _, src := range []string{"", "   ", "\t\n\r "} {
		q := mustCompile(t, src)
		if !q.Match(&item{}) || q.HasSort() || q.Expr() != "" {
			t.Errorf("%q: want a query matching everything", src)
		}
		if _, ok := q.Skip(); ok {
			t.Errorf("%q: Skip ok", src)
		}
		if _, ok, _ := q.Limit(); ok {
			t.Errorf("%q: Limit ok", src)
		}
	}
}

func TestCompile_WhitespaceIsFlexible(t *testing.T) {
	checkExpr(t, "\tname=\"x\"\nand(cost>=1)sort by name,cost desc", `name = "x" and cost >= 1 sort by name, cost desc`)
	checkExpr(t, `anyOf (roleAttributes) = "a"`, `anyOf(roleAttributes) = "a"`)
	checkExpr(t, `cost in []`, `cost in []`)
}

func TestCompile_ExprRoundTrips(t *testing.T) {
	for _, src := range []string{
		`not (a = 1 or not b = 2) and (c = 3 or a in [1, 2.5, null]) sort by name desc, a skip 3 limit 4`,
		`name not icontains "q\"\\" or tags.x between "a" and "b" limit none`,
		`createdAt between "2026-01-01T00:00:00Z" and datetime(2027-01-01T00:00:00.5-01:00)`,
	} {
		first := mustCompile(t, src).Expr()
		if again := mustCompile(t, first).Expr(); again != first {
			t.Errorf("Expr not stable: %q -> %q -> %q", src, first, again)
		}
	}
}

func TestSchema_NamesAreSortedWithPrefixes(t *testing.T) {
	got := testSchema().Names()
	want := []string{"a", "b", "c", "cost", "createdAt", "deletedAt", "isAdmin", "name", "nick", "owner", "roleAttributes", "score", "tags", "type.name"}
	if len(got) != len(want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Names() = %v, want %v", got, want)
		}
	}
	if (*Schema)(nil).Names() != nil {
		t.Errorf("nil schema has names")
	}
}
