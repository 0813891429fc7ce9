package filter

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// benchRecords builds n records; every third is an admin, every tenth
// name contains "x".
func benchRecords(n int) []any {
	recs := make([]any, n)
	for i := range recs {
		name := fmt.Sprintf("node-%05d", i)
		if i%10 == 0 {
			name += "-x"
		}
		recs[i] = &item{
			name:      name,
			isAdmin:   i%3 == 0,
			cost:      int64(i),
			createdAt: time.Unix(int64(i), 0),
			roles:     []string{"edge", fmt.Sprintf("r%d", i%7), "ops"},
			owner:     fmt.Sprintf("node-%05d", (i*7919)%n),
		}
	}
	return recs
}

// benchEnv is the env of benchRecords: each record by its name, which its
// owner names ("node-00042", a record far from its referrer).
func benchEnv(recs []any) map[string]*item {
	env := make(map[string]*item, len(recs))
	for _, r := range recs {
		it := r.(*item)
		env[strings.TrimSuffix(it.name, "-x")] = it
	}
	return env
}

// getOnlySchema reads fields only through Get, as a schema written without
// the typed getters would.
func getOnlySchema() *Schema {
	return &Schema{Fields: map[string]Field{
		"name":    {Type: String, Get: func(r any) any { return r.(*item).name }},
		"isAdmin": {Type: Bool, Get: func(r any) any { return r.(*item).isAdmin }},
	}}
}

func benchScan(b *testing.B, src string, s *Schema) {
	recs := benchRecords(10000)
	q, err := CompileIn(src, s, benchEnv(recs))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n = 0
		for _, r := range recs {
			if q.Match(r) {
				n++
			}
		}
	}
	if n == 0 {
		b.Fatal("nothing matched")
	}
}

// BenchmarkMatch_Scan10k is the contract's budget: one op is a filtered scan
// of 10,000 records, which must stay well under 1 ms.
func BenchmarkMatch_Scan10k(b *testing.B) {
	benchScan(b, `name contains "x" and isAdmin = false`, testSchema())
}

// BenchmarkMatch_Scan10kThroughRef is Scan10k with the name read from the
// record each one refers to: the cost of a reference is its lookup (here a
// map's; a store's is its own).
func BenchmarkMatch_Scan10kThroughRef(b *testing.B) {
	benchScan(b, `owner.name contains "x" and isAdmin = false`, testSchema())
}

func BenchmarkMatch_Scan10kGetOnly(b *testing.B) {
	benchScan(b, `name contains "x" and isAdmin = false`, getOnlySchema())
}

func BenchmarkMatch_Scan10kAnyOfIn(b *testing.B) {
	benchScan(b, `anyOf(roleAttributes) in ["r3", "r5"]`, testSchema())
}

func BenchmarkMatch_Scan10kICcontainsNumberTime(b *testing.B) {
	benchScan(b, `name icontains "X" or cost between 100 and 200 or createdAt > datetime(1970-01-01T02:00:00Z)`, testSchema())
}

func BenchmarkCompile(b *testing.B) {
	s := testSchema()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(`name contains "web" and isAdmin = false or anyOf(roleAttributes) in ["ops", "dev"] sort by name desc limit 20`, s); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMatch_DoesNotAllocateInCommonCases(t *testing.T) {
	recs := benchRecords(100)
	env := benchEnv(recs)
	for _, src := range []string{
		`name contains "x" and isAdmin = false`,
		`name icontains "X" or name in ["a","b","c","d","e","f","g","h"]`,
		`cost between 10 and 20.5 or a > 3`,
		`createdAt > datetime(1970-01-01T00:01:00Z)`,
		`anyOf(roleAttributes) in ["r3", "r5"] and not isEmpty(roleAttributes) and count(roleAttributes) > 1`,
		`owner.name contains "x" and owner.isAdmin = false and anyOf(owner.roleAttributes) = "r3"`,
	} {
		q, err := CompileIn(src, testSchema(), env)
		if err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(10, func() {
			for _, r := range recs {
				q.Match(r)
			}
		})
		if allocs != 0 {
			t.Errorf("%q: %v allocations per 100 records", src, allocs)
		}
	}
}
