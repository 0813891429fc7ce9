package policy

import (
	"sync"
	"sync/atomic"

	"github.com/Masterminds/semver/v3"
)

// OS checks compare a reported version with version statements, and both
// parsers run regular expressions: that was most of the cost of an OS check,
// which the Client API evaluates on every service list. The same few strings
// come back on every evaluation (a check's statements, a session's reported
// version), so parses are kept. A parsed value is never modified afterwards
// (Constraints.Check and the comparisons of Version only read), so one value
// serves concurrent evaluations.

// parseCache keeps the outcome of parsing a string, error included. It is
// bounded: past maxParsed entries it starts over, so strings that clients
// report cannot grow it without limit.
type parseCache[T any] struct {
	m     sync.Map // string → parsed[T]
	n     atomic.Int64
	parse func(string) (T, error)
}

type parsed[T any] struct {
	v   T
	err error
}

const maxParsed = 4096

func (c *parseCache[T]) get(s string) (T, error) {
	if p, ok := c.m.Load(s); ok {
		p := p.(parsed[T])
		return p.v, p.err
	}
	v, err := c.parse(s)
	if c.n.Add(1) > maxParsed {
		c.m.Clear()
		c.n.Store(1)
	}
	c.m.Store(s, parsed[T]{v: v, err: err})
	return v, err
}

var (
	constraints = &parseCache[*semver.Constraints]{parse: semver.NewConstraint}
	versions    = &parseCache[*semver.Version]{parse: semver.NewVersion}
)

// parsedConstraint is semver.NewConstraint(stmt), parsed once.
func parsedConstraint(stmt string) (*semver.Constraints, error) { return constraints.get(stmt) }

// parsedVersion is semver.NewVersion(v), parsed once.
func parsedVersion(v string) (*semver.Version, error) { return versions.get(v) }
