package filter

// HasCondition reports whether the query has a boolean expression, so a
// caller can page without scanning when it has none (and no sort).
func (q *Query) HasCondition() bool { return q != nil && q.match != nil }
