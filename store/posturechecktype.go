package store

// PostureCheckType is one of the fixed posture check types.
type PostureCheckType struct {
	Base
	Named
	OperatingSystems []OperatingSystem `json:"operatingSystems"`
	Version          string            `json:"version"`
}

// RecordName is the type's name.
func (r *PostureCheckType) RecordName() string { return r.Name }

// OperatingSystem is an OS type with version statements.
type OperatingSystem struct {
	Type     string   `json:"type"`
	Versions []string `json:"versions"`
}

// KindPostureCheckType is the kind of PostureCheckType records.
var KindPostureCheckType = &Kind{Table: "postureCheckTypes", Entity: "posture check type", Named: true,
	new: func() Record { return &PostureCheckType{} }, Fields: namedFields(nil)}
