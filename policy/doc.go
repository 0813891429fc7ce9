// Package policy decides access: role selectors (#attr, #all, @id) with their
// AllOf / AnyOf semantics, who may dial or bind which service through which
// edge routers, and posture evaluation. It reads the model; it never writes.
package policy
