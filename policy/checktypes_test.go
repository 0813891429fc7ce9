package policy

import (
	"slices"
	"testing"
	"time"
)

// TestCheckTypes_EveryTypeHasAllItsParts guards the one table that the
// bootstrap records, the API and the evaluator derive from.
func TestCheckTypes_EveryTypeHasAllItsParts(t *testing.T) {
	t.Parallel()
	names := CheckTypeNames()
	want := []string{CheckOS, CheckMAC, CheckMFA, CheckProcess, CheckProcessMulti, CheckDomain}
	if !slices.Equal(names, want) {
		t.Fatalf("types %v, want the bootstrap list %v", names, want)
	}
	responses := []string{CheckOS, CheckMAC, CheckDomain, CheckProcess, ResponseEndpointState}
	for _, ct := range CheckTypes() {
		if ct.judge == nil {
			t.Errorf("%s has no judge", ct.Name)
		}
		if !slices.Contains(responses, ct.Response) {
			t.Errorf("%s is fed by %q, not a posture response type", ct.Name, ct.Response)
		}
		if got, ok := LookupCheckType(ct.Name); !ok || got.Name != ct.Name {
			t.Errorf("LookupCheckType(%s) = %v, %v", ct.Name, got.Name, ok)
		}
		// Every judge runs on empty data without panicking and fails closed.
		if r := Judge(&Check{TypeID: ct.Name}, nil, time.Now()); r.Passing && ct.Name != CheckMFA {
			t.Errorf("%s passes with no data", ct.Name)
		}
	}
	if _, ok := LookupCheckType("NOPE"); ok {
		t.Error("an unknown type was found")
	}
}
