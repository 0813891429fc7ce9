package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"edgectl/cluster"
	"edgectl/fsm"
	"edgectl/store"
	"edgectl/store/filter"

	"github.com/hashicorp/raft"
)

// Error codes of the error envelope (conventions §3).
const (
	codeValidate     = "COULD_NOT_VALIDATE"
	codeParseBody    = "COULD_NOT_PARSE_BODY"
	codeInvalidQuery = "INVALID_FILTER"
	codeUnauthorized = "UNAUTHORIZED"
	codeInvalidAuth  = "INVALID_AUTH"
	codeForbidden    = "FORBIDDEN"
	codeNotFound     = "NOT_FOUND"
	codeConflict     = "CONFLICT"
	codeReferenced   = "REFERENCED"
	// codeCannotDelete: OpenZiti's answer to the delete of a record another
	// still needs (a router's identity while its router exists).
	codeCannotDelete = "ENTITY_CAN_NOT_BE_DELETED"
	codeTooMany      = "TOO_MANY_REQUESTS"
	codeUnavailable  = "CLUSTER_UNAVAILABLE"
	// codeOutcomeUnknown: the write reached a leader that lost leadership
	// before answering; it may or may not have been applied (docs/api.md).
	codeOutcomeUnknown = "OUTCOME_UNKNOWN"
	codeInternal       = "UNHANDLED"
	codeNoMethod       = "METHOD_NOT_ALLOWED"
	// codeInvalidPosture: a session refused because the posture checks of
	// every service policy that would grant it fail (OpenZiti's 409).
	codeInvalidPosture = "INVALID_POSTURE"
)

// apiError is an error with its HTTP status, code and cause.
type apiError struct {
	status  int
	code    string
	message string
	cause   any
}

func (e *apiError) Error() string { return e.message }

// fieldCause is the cause of a validation error.
type fieldCause struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
	Value  any    `json:"value"`
}

func invalidField(field, reason string, value any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: codeValidate,
		message: fmt.Sprintf("%s: %s", field, reason), cause: fieldCause{Field: field, Reason: reason, Value: value}}
}

func badBody(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: codeParseBody, message: fmt.Sprintf(format, args...)}
}

func badQuery(param string, err error) *apiError {
	return &apiError{status: http.StatusBadRequest, code: codeInvalidQuery,
		message: queryMessage(param, err), cause: fieldCause{Field: param, Reason: err.Error()}}
}

func unauthorized(msg string) *apiError {
	return &apiError{status: http.StatusUnauthorized, code: codeUnauthorized, message: msg}
}

func invalidAuth() *apiError {
	return &apiError{status: http.StatusUnauthorized, code: codeInvalidAuth,
		message: "the authentication request failed: the credentials are not valid"}
}

func forbidden(msg string) *apiError {
	return &apiError{status: http.StatusForbidden, code: codeForbidden, message: msg}
}

// postureCause is the cause of an INVALID_POSTURE error, as OpenZiti gives
// it: the failed policies' ids in the message, and by policy id the checks
// that failed.
type postureCause struct {
	Message string                          `json:"message"`
	Data    map[string][]postureCheckFailed `json:"data"`
}

type postureCheckFailed struct {
	ID        string `json:"id"`
	TypeID    string `json:"typeId"`
	IsPassing bool   `json:"isPassing"`
}

// invalidPosture is the answer to a session refused for posture: 409
// INVALID_POSTURE, OpenZiti's, so that a client stops asking at once.
func invalidPosture(failures []store.PolicyFailure) *apiError {
	cause := postureCause{Data: map[string][]postureCheckFailed{}}
	ids := make([]string, 0, len(failures))
	for _, f := range failures {
		ids = append(ids, f.PolicyID)
		checks := make([]postureCheckFailed, 0, len(f.Checks))
		for _, c := range f.Checks {
			checks = append(checks, postureCheckFailed{ID: c.PostureCheckID, TypeID: c.PostureCheckType})
		}
		cause.Data[f.PolicyID] = checks
	}
	cause.Message = fmt.Sprintf("Failed to pass posture checks for service policies: %v", ids)
	return &apiError{status: http.StatusConflict, code: codeInvalidPosture, message: "Posture response data is missing or wrong", cause: cause}
}

func notFound(entity, id string) *apiError {
	return &apiError{status: http.StatusNotFound, code: codeNotFound, message: fmt.Sprintf("%s %q not found", entity, id)}
}

func tooMany(msg string) *apiError {
	return &apiError{status: http.StatusTooManyRequests, code: codeTooMany, message: msg}
}

// toAPIError is the one place an error becomes an HTTP status and code.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var fe *filter.Error
	if errors.As(err, &fe) {
		return badQuery("filter", err)
	}
	var de *store.Error
	if errors.As(err, &de) {
		switch {
		case errors.Is(err, store.ErrNotFound):
			return &apiError{status: http.StatusNotFound, code: codeNotFound, message: de.Message}
		case errors.Is(err, store.ErrConflict):
			return &apiError{status: http.StatusConflict, code: codeConflict, message: de.Message, cause: causeOf(de)}
		case errors.Is(err, store.ErrReferenced):
			return &apiError{status: http.StatusConflict, code: codeReferenced, message: de.Message}
		case errors.Is(err, store.ErrInvalid):
			return invalidField(de.Field, de.Reason, de.Value)
		case errors.Is(err, store.ErrForbidden):
			return forbidden(de.Message)
		case errors.Is(err, store.ErrCannotDelete):
			return &apiError{status: http.StatusBadRequest, code: codeCannotDelete, message: de.Message}
		}
	}
	var ve *fsm.VersionError
	if errors.As(err, &ve) {
		return &apiError{status: http.StatusServiceUnavailable, code: codeUnavailable,
			message: "the cluster is not fully upgraded: " + ve.Error()}
	}
	switch {
	// Outcome unknown first: it comes wrapped together with ErrShutdown when
	// raft stops mid-write. A deadline that passed while the command was out
	// is as unknown; one that passed while waiting for a leader wraps
	// ErrNoLeader and is checked before it.
	case errors.Is(err, cluster.ErrOutcomeUnknown), errors.Is(err, raft.ErrLeadershipLost):
		return outcomeUnknown()
	case errors.Is(err, cluster.ErrNoLeader), errors.Is(err, cluster.ErrShutdown):
		return &apiError{status: http.StatusServiceUnavailable, code: codeUnavailable,
			message: "the cluster has no leader: the write was not accepted, try again"}
	case errors.Is(err, cluster.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress),
		errors.Is(err, raft.ErrNotLeader):
		return &apiError{status: http.StatusServiceUnavailable, code: codeUnavailable,
			message: "the cluster's leadership is changing: the write was not accepted, try again"}
	case errors.Is(err, context.DeadlineExceeded):
		return outcomeUnknown()
	}
	return &apiError{status: http.StatusInternalServerError, code: codeInternal, message: "internal error"}
}

func outcomeUnknown() *apiError {
	return &apiError{status: http.StatusServiceUnavailable, code: codeOutcomeUnknown,
		message: "the write reached the cluster but no answer came back (the leader was lost or did not answer in time): it may or may not have been applied; read it back with consistency=linearizable before retrying"}
}

func causeOf(de *store.Error) any {
	if de.Field == "" {
		return nil
	}
	return fieldCause{Field: de.Field, Reason: de.Message, Value: de.Value}
}

// queryMessage names the parameter unless the error already says where it broke.
func queryMessage(param string, err error) string {
	var fe *filter.Error
	if errors.As(err, &fe) {
		return err.Error()
	}
	return fmt.Sprintf("%s: %v", param, err)
}
