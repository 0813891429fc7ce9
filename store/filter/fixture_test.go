package filter

import (
	"errors"
	"testing"
	"time"
)

// item is the record type of the tests; its schema exercises every field
// type and both getter styles (typed and Get).
type item struct {
	name      string
	nick      *string // null when nil
	isAdmin   bool
	cost      any // int64, float64 or nil, read through Get
	score     float64
	a, b, c   int64
	createdAt time.Time
	deletedAt *time.Time
	roles     []string
	typeName  string
	tags      map[string]any
	owner     string // the id of another item in the env (testEnv), null when ""
}

// testEnv is the env of the tests' queries: the items "owner" refers to, by id.
var testEnv = map[string]*item{
	"o1": {name: "boss", isAdmin: true, cost: int64(7), createdAt: ts("2026-01-01T00:00:00Z"),
		roles: []string{"ops"}, typeName: "user", tags: map[string]any{"team": "red"}, owner: "o2"},
	"o2": {name: "root", owner: "o2"},
}

// bindItems finds items by id in an env that is a map of them.
func bindItems(env any) func(string) (any, bool) {
	m, ok := env.(map[string]*item)
	if !ok {
		return nil
	}
	return func(id string) (any, bool) {
		r, ok := m[id]
		return r, ok
	}
}

func testSchema() *Schema {
	return &Schema{
		Fields: map[string]Field{
			"name": StringField(func(r any) string { return r.(*item).name }),
			"nick": {Type: String, GetString: func(r any) (string, bool) {
				if n := r.(*item).nick; n != nil {
					return *n, true
				}
				return "", false
			}},
			"isAdmin":   BoolField(func(r any) bool { return r.(*item).isAdmin }),
			"cost":      {Type: Number, Get: func(r any) any { return r.(*item).cost }},
			"score":     FloatField(func(r any) float64 { return r.(*item).score }),
			"a":         IntField(func(r any) int64 { return r.(*item).a }),
			"b":         IntField(func(r any) int64 { return r.(*item).b }),
			"c":         IntField(func(r any) int64 { return r.(*item).c }),
			"createdAt": TimeField(func(r any) time.Time { return r.(*item).createdAt }),
			"deletedAt": {Type: Time, Get: func(r any) any {
				if d := r.(*item).deletedAt; d != nil {
					return *d
				}
				return nil
			}},
			"roleAttributes": StringListField(func(r any) []string { return r.(*item).roles }),
			"type.name":      {Type: String, Get: func(r any) any { return r.(*item).typeName }},
			"owner": {Type: String, GetString: func(r any) (string, bool) {
				o := r.(*item).owner
				return o, o != ""
			}, Ref: &Ref{Entity: "item", Schema: testSchema, Bind: bindItems}},
		},
		Prefixes: map[string]func(any, string) any{
			"tags": func(r any, key string) any {
				v, ok := r.(*item).tags[key]
				if !ok {
					return nil
				}
				return v
			},
		},
	}
}

func strp(s string) *string { return &s }

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func tsp(s string) *time.Time { t := ts(s); return &t }

// mustCompile fails the test when src does not compile.
func mustCompile(t testing.TB, src string) *Query {
	t.Helper()
	q, err := CompileIn(src, testSchema(), testEnv)
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	return q
}

// compileErr compiles src, which must fail, and returns the *Error.
func compileErr(t testing.TB, src string) *Error {
	t.Helper()
	q, err := CompileIn(src, testSchema(), testEnv)
	if err == nil {
		t.Fatalf("Compile(%q) = %q, want an error", src, q.Expr())
	}
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("Compile(%q) error %T %v, want *Error", src, err, err)
	}
	if fe.Pos < 0 || fe.Pos > len(src) {
		t.Fatalf("Compile(%q) error position %d outside the query", src, fe.Pos)
	}
	return fe
}

// matchCase is one record and whether the query must match it.
type matchCase struct {
	rec  *item
	want bool
}

// checkMatches compiles src and checks it against each case.
func checkMatches(t *testing.T, src string, cases ...matchCase) {
	t.Helper()
	q := mustCompile(t, src)
	for i, c := range cases {
		if got := q.Match(c.rec); got != c.want {
			t.Errorf("%q: case %d (%+v): Match = %v, want %v", src, i, *c.rec, got, c.want)
		}
	}
}

func yes(r *item) matchCase { return matchCase{r, true} }
func no(r *item) matchCase  { return matchCase{r, false} }
