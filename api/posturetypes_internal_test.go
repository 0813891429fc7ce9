package api

import (
	"testing"

	"edgectl/policy"
)

// TestPostureTypes_EveryPolicyTypeHasFieldsAndView: the API's part of each
// posture check type exists for every type of policy's table, and for no other.
func TestPostureTypes_EveryPolicyTypeHasFieldsAndView(t *testing.T) {
	t.Parallel()
	for _, ct := range policy.CheckTypes() {
		pt, ok := postureTypes[ct.Name]
		if !ok {
			t.Errorf("type %s has no API fields and view", ct.Name)
			continue
		}
		if len(pt.fields) == 0 || pt.view == nil {
			t.Errorf("type %s: fields %d, view %v", ct.Name, len(pt.fields), pt.view != nil)
		}
	}
	for name := range postureTypes {
		if _, ok := policy.LookupCheckType(name); !ok {
			t.Errorf("the API describes %s, which policy does not know", name)
		}
	}
}
