package store

// Setting is a singleton value of the model, such as the PKI state.
type Setting struct {
	Base
	Value []byte `json:"value"`
}

// KindSetting is the kind of Setting records.
var KindSetting = &Kind{Table: "settings", Entity: "setting",
	new: func() Record { return &Setting{} }}
