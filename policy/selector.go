package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Semantics of a role array.
const (
	AllOf = "AllOf"
	AnyOf = "AnyOf"
)

// Selector is a parsed role array (conventions §6).
type Selector struct {
	All      bool                // #all: every entity
	Attrs    []string            // #attr entries
	IDs      map[string]struct{} // @id entries
	Semantic string
}

// SelectorError names the entry of a role array that is malformed.
type SelectorError struct {
	Index int
	Entry string
	Msg   string
}

func (e *SelectorError) Error() string {
	return fmt.Sprintf("entry %d (%q): %s", e.Index, e.Entry, e.Msg)
}

// ParseSelector parses a role array with its semantic ("" means AllOf).
func ParseSelector(roles []string, semantic string) (*Selector, error) {
	switch semantic {
	case "":
		semantic = AllOf
	case AllOf, AnyOf:
	default:
		return nil, &SelectorError{Index: -1, Entry: semantic, Msg: "the semantic must be AllOf or AnyOf"}
	}
	s := &Selector{Semantic: semantic, IDs: map[string]struct{}{}}
	for i, r := range roles {
		switch {
		case r == "#all":
			s.All = true
		case strings.HasPrefix(r, "#") && len(r) > 1:
			s.Attrs = append(s.Attrs, r[1:])
		case strings.HasPrefix(r, "@") && len(r) > 1:
			s.IDs[r[1:]] = struct{}{}
		default:
			return nil, &SelectorError{Index: i, Entry: r, Msg: "a role must be #attribute, #all or @id"}
		}
	}
	return s, nil
}

// Empty reports whether the selector can select nothing.
func (s *Selector) Empty() bool { return !s.All && len(s.Attrs) == 0 && len(s.IDs) == 0 }

// Matches reports whether the entity with id and role attributes attrs is selected.
func (s *Selector) Matches(id string, attrs []string) bool {
	if s.All {
		return true
	}
	if _, ok := s.IDs[id]; ok {
		return true
	}
	if len(s.Attrs) == 0 {
		return false
	}
	if s.Semantic == AnyOf {
		for _, want := range s.Attrs {
			if slices.Contains(attrs, want) {
				return true
			}
		}
		return false
	}
	for _, want := range s.Attrs {
		if !slices.Contains(attrs, want) {
			return false
		}
	}
	return true
}

// Equal reports whether two selectors select the same entities.
func (s *Selector) Equal(o *Selector) bool {
	if s.All != o.All || s.Semantic != o.Semantic || len(s.Attrs) != len(o.Attrs) || len(s.IDs) != len(o.IDs) {
		return false
	}
	for i, a := range s.Attrs {
		if o.Attrs[i] != a {
			return false
		}
	}
	for id := range s.IDs {
		if _, ok := o.IDs[id]; !ok {
			return false
		}
	}
	return true
}
