package policy

import (
	"fmt"
	"testing"
	"time"
)

// TestParsedOnceAndBounded: a statement or version is parsed once (the same
// value comes back), errors are kept too, and the cache starts over past
// its bound instead of growing with every string clients report.
func TestParsedOnceAndBounded(t *testing.T) {
	a, err := parsedConstraint(">=10.0.19041")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := parsedConstraint(">=10.0.19041"); a != b {
		t.Fatal("the constraint was parsed again")
	}
	if _, err := parsedVersion("not a version"); err == nil {
		t.Fatal("no error for a bad version")
	}
	if _, err := parsedVersion("not a version"); err == nil {
		t.Fatal("the cached outcome lost the error")
	}
	for i := 0; i < maxParsed+10; i++ {
		if _, err := parsedVersion(fmt.Sprintf("1.2.%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := versions.n.Load(); n > maxParsed {
		t.Fatalf("%d versions cached, bound %d", n, maxParsed)
	}
}

// TestOSCheckWithCachedParses: evaluating the same OS check again, and on
// other data, gives the verdicts a fresh parse gives.
func TestOSCheckWithCachedParses(t *testing.T) {
	c := &Check{TypeID: CheckOS, OperatingSystems: []OSRule{{Type: "WINDOWS", Versions: []string{">=10.0.19041", "~6.1"}}}}
	now := time.Now()
	for range 3 {
		for _, tc := range []struct {
			version, build string
			want           bool
		}{{"10.0.19045", "", true}, {"10.0.18000", "", false}, {"10.0", "19042", true}, {"6.1.7601", "", true}, {"garbage", "", false}} {
			if got := Evaluate(c, &Data{OS: &OSData{Type: "Windows", Version: tc.version, Build: tc.build}}, now).Passing; got != tc.want {
				t.Fatalf("%s/%s: passing %v, want %v", tc.version, tc.build, got, tc.want)
			}
		}
	}
}
