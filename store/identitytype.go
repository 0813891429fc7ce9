package store

// IdentityType is one of the four fixed identity types.
type IdentityType struct {
	Base
	Named
}

// RecordName is the type's name.
func (r *IdentityType) RecordName() string { return r.Name }

// KindIdentityType is the kind of IdentityType records.
var KindIdentityType = &Kind{Table: "identityTypes", Entity: "identity type", Named: true,
	new: func() Record { return &IdentityType{} }, Fields: namedFields(nil)}
