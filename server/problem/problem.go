// Package problem writes RFC 9457 problem+json error bodies in the shape of the guard contract (section 3)
// and decodes JSON request bodies strictly. Every handler of the server reports errors through Write, so
// there is one place that turns errors into status codes and bodies.
package problem

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
)

// Error codes of the contract.
const (
	CodeValidation           = "VALIDATION_ERROR"
	CodeInvalidJSON          = "INVALID_JSON"
	CodePayloadTooLarge      = "PAYLOAD_TOO_LARGE"
	CodeAuthMissingKey       = "AUTH_MISSING_KEY"
	CodeAuthInvalidKey       = "AUTH_INVALID_KEY"
	CodeAuthInsufficient     = "AUTH_INSUFFICIENT_PRIVILEGES"
	CodeAgentNotFound        = "AGENT_NOT_FOUND"
	CodeControlNotFound      = "CONTROL_NOT_FOUND"
	CodeVersionNotFound      = "VERSION_NOT_FOUND"
	CodeNotFound             = "NOT_FOUND"
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"
	CodeControlNameConflict  = "CONTROL_NAME_CONFLICT"
	CodeControlInUse         = "CONTROL_IN_USE"
	CodeSchemaIncompatible   = "SCHEMA_INCOMPATIBLE"
	CodeDatabaseUnavailable  = "DATABASE_UNAVAILABLE"
	CodeInternal             = "INTERNAL_ERROR"
	CodeObservabilityOff     = "OBSERVABILITY_DISABLED"
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
	CodeOriginNotAllowed     = "ORIGIN_NOT_ALLOWED"
	CodeHostNotAllowed       = "HOST_NOT_ALLOWED"
	CodePreconditionFailed   = "PRECONDITION_FAILED"
)

// RequestIDHeader carries the request id; the server's middleware sets it on the response before the
// handler runs, and Write copies it into the body.
const RequestIDHeader = "X-Request-Id"

// Error is an HTTP error with a contract error code. Handlers return or write it; Write renders it.
type Error struct {
	Status   int
	Code     string
	Detail   string
	Problems []guard.Problem
	// Header holds extra response headers (WWW-Authenticate for 401).
	Header http.Header
}

// Error implements the error interface.
func (e *Error) Error() string { return e.Code + ": " + e.Detail }

// New returns an *Error.
func New(status int, code, detail string) *Error {
	return &Error{Status: status, Code: code, Detail: detail}
}

// Validation returns a 422 VALIDATION_ERROR listing problems.
func Validation(detail string, problems ...guard.Problem) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: CodeValidation, Detail: detail, Problems: problems}
}

// Body is the JSON shape of a problem response.
type Body struct {
	Type      string          `json:"type"`
	Title     string          `json:"title"`
	Status    int             `json:"status"`
	Detail    string          `json:"detail"`
	ErrorCode string          `json:"error_code"`
	Instance  string          `json:"instance"`
	RequestID string          `json:"request_id,omitempty"`
	Errors    []guard.Problem `json:"errors"` // always present: [] when the error has no field problems
}

// From maps any error to an *Error: *Error as is, *guard.ValidationError to 422, the store's sentinel
// errors to their codes, anything else to a 500 whose detail says nothing about internals.
func From(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	var ve *guard.ValidationError
	if errors.As(err, &ve) {
		return Validation("the request is not valid", ve.Problems...)
	}
	var inUse *guard.ControlInUseError
	var stale *guard.VersionMismatchError
	switch {
	case errors.As(err, &stale):
		// The current version goes back as the ETag, so the writer can re-read and decide.
		pe := New(http.StatusPreconditionFailed, CodePreconditionFailed,
			"the control changed since it was read (it is at version "+strconv.Itoa(stale.Current)+"); read it again and retry")
		pe.Header = http.Header{"Etag": {`"` + strconv.Itoa(stale.Current) + `"`}}
		return pe
	case errors.As(err, &inUse):
		return New(http.StatusConflict, CodeControlInUse, inUse.Error()+"; delete with force=true to unlink it")
	case errors.Is(err, guard.ErrAgentNotFound):
		return New(http.StatusNotFound, CodeAgentNotFound, "agent not found")
	case errors.Is(err, guard.ErrControlNotFound):
		return New(http.StatusNotFound, CodeControlNotFound, "control not found")
	case errors.Is(err, guard.ErrVersionNotFound):
		return New(http.StatusNotFound, CodeVersionNotFound, "version not found")
	case errors.Is(err, guard.ErrNoControlData):
		return New(http.StatusNotFound, CodeNotFound, "the control has no data yet")
	case errors.Is(err, guard.ErrControlNameConflict):
		return New(http.StatusConflict, CodeControlNameConflict, "a control with this name already exists")
	case errors.Is(err, guard.ErrSchemaIncompatible):
		return New(http.StatusConflict, CodeSchemaIncompatible, err.Error())
	case errors.Is(err, guard.ErrBadCursor):
		return Validation("invalid cursor", guard.Problem{Field: "cursor", Code: "invalid", Message: "not a cursor this server issued"})
	case errors.Is(err, guard.ErrUnavailable):
		return New(http.StatusServiceUnavailable, CodeDatabaseUnavailable, "the database is unavailable; retry later")
	}
	return New(http.StatusInternalServerError, CodeInternal, "internal server error")
}

// Write renders err as problem+json. 5xx errors are logged with the underlying error (never sent).
func Write(w http.ResponseWriter, r *http.Request, logger *zap.Logger, err error) {
	pe := From(err)
	if pe.Status >= 500 && logger != nil {
		logger.Error("request failed", zap.String("method", r.Method), zap.String("path", r.URL.Path),
			zap.String("request_id", w.Header().Get(RequestIDHeader)), zap.Int("status", pe.Status), zap.Error(err))
	}
	for k, vs := range pe.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	body := Body{
		Type:      "about:blank",
		Title:     http.StatusText(pe.Status),
		Status:    pe.Status,
		Detail:    pe.Detail,
		ErrorCode: pe.Code,
		Instance:  r.URL.Path,
		RequestID: w.Header().Get(RequestIDHeader),
		Errors:    pe.Problems,
	}
	if body.Errors == nil {
		body.Errors = []guard.Problem{}
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(pe.Status)
	_ = json.NewEncoder(w).Encode(body)
}

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
