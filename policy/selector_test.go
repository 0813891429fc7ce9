package policy

import "testing"

func TestSelector_AllOfNeedsEveryAttribute(t *testing.T) {
	s, err := ParseSelector([]string{"#a", "#b"}, AllOf)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Matches("x", []string{"a", "b", "c"}) || s.Matches("x", []string{"a"}) {
		t.Fatal("AllOf must need every attribute")
	}
}

func TestSelector_AnyOfMatchesOneAttribute(t *testing.T) {
	s, _ := ParseSelector([]string{"#a", "#b"}, AnyOf)
	if !s.Matches("x", []string{"b"}) || s.Matches("x", []string{"c"}) {
		t.Fatal("AnyOf must match one attribute")
	}
}

func TestSelector_IDAlwaysAddsItsEntity(t *testing.T) {
	s, _ := ParseSelector([]string{"#a", "@e1"}, AllOf)
	if !s.Matches("e1", nil) || s.Matches("e2", nil) {
		t.Fatal("@id must select that entity whatever its attributes")
	}
}

func TestSelector_AllMatchesEverything(t *testing.T) {
	s, _ := ParseSelector([]string{"#all"}, AnyOf)
	if !s.Matches("z", nil) {
		t.Fatal("#all must match everything")
	}
}

func TestSelector_MalformedEntriesAreErrors(t *testing.T) {
	for _, roles := range [][]string{{"a"}, {"#"}, {"@"}, {""}} {
		if _, err := ParseSelector(roles, AllOf); err == nil {
			t.Fatalf("%q: want an error", roles)
		}
	}
	if _, err := ParseSelector(nil, "Some"); err == nil {
		t.Fatal("a bad semantic must be an error")
	}
}
