package store

import (
	"errors"
	"fmt"
)

// Sentinel errors of the model. Domain errors wrap one of them so callers can
// match with errors.Is; the API maps each to one HTTP status.
var (
	// ErrNotFound: the record does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a unique value (a name) is taken, or the state forbids the change.
	ErrConflict = errors.New("conflict")
	// ErrReferenced: a delete of a record that others still reference.
	ErrReferenced = errors.New("referenced")
	// ErrInvalid: a value fails a rule that needs the model to check (a reference to a missing record).
	ErrInvalid = errors.New("invalid")
	// ErrForbidden: the change is not allowed for this record (system records).
	ErrForbidden = errors.New("forbidden")
	// ErrCannotDelete: the record cannot be deleted while another exists (a router's identity).
	ErrCannotDelete = errors.New("cannot be deleted")
)

// Error is a domain error. It is a plain value so it can cross Raft: the FSM
// encodes it into the command result and the proposer decodes it again.
type Error struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Value   any    `json:"value,omitempty"`
}

var kinds = map[string]error{
	"notFound":   ErrNotFound,
	"conflict":   ErrConflict,
	"referenced": ErrReferenced,
	"invalid":    ErrInvalid,
	"forbidden":  ErrForbidden,
	// cannotDelete is answered by command version 9's router identities only.
	"cannotDelete": ErrCannotDelete,
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel the error's kind stands for.
func (e *Error) Unwrap() error { return kinds[e.Kind] }

// NotFound reports that the record of kind with id does not exist.
func NotFound(kind, id string) *Error {
	return &Error{Kind: "notFound", Message: fmt.Sprintf("%s %q not found", kind, id)}
}

// Conflict reports a taken unique value or a state that forbids the change.
func Conflict(field string, value any, format string, args ...any) *Error {
	return &Error{Kind: "conflict", Field: field, Value: value, Message: fmt.Sprintf(format, args...)}
}

// Referenced reports a delete of a record that others still use.
func Referenced(format string, args ...any) *Error {
	return &Error{Kind: "referenced", Message: fmt.Sprintf(format, args...)}
}

// Invalid reports a field whose value the model rejects.
func Invalid(field, reason string, value any) *Error {
	return &Error{Kind: "invalid", Field: field, Reason: reason, Value: value,
		Message: fmt.Sprintf("%s: %s", field, reason)}
}

// Forbidden reports a change that is not allowed for this record.
func Forbidden(format string, args ...any) *Error {
	return &Error{Kind: "forbidden", Message: fmt.Sprintf(format, args...)}
}

// CannotDelete reports a delete refused while something else still needs
// the record (OpenZiti's ENTITY_CAN_NOT_BE_DELETED).
func CannotDelete(format string, args ...any) *Error {
	return &Error{Kind: "cannotDelete", Message: fmt.Sprintf(format, args...)}
}
