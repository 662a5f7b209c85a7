// Package problem writes RFC 9457 problem+json error bodies in the shape of the guard contract (section 3)
// and decodes JSON request bodies strictly. Every handler of the server reports errors through Write, so
// there is one place that turns errors into status codes and bodies.
package problem

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

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
	buf, err := encode(body)
	if err != nil { // a Body is strings and numbers: this cannot happen, but never send half a body
		sendInternal(w)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	send(w, pe.Status, "application/problem+json", buf)
}

// Respond writes v as a JSON response with the given status. v is encoded before anything is written:
// when it cannot be (a NaN or an infinity among its numbers, an unsupported type), the answer is a 500
// INTERNAL_ERROR problem and the error is logged, never a 200 with an empty or truncated body.
func Respond(w http.ResponseWriter, r *http.Request, logger *zap.Logger, status int, v any) {
	buf, err := encode(v)
	if err != nil {
		Write(w, r, logger, fmt.Errorf("encode the %d response: %w", status, err))
		return
	}
	send(w, status, "application/json", buf)
}

// WriteJSON is Respond for callers without the request at hand: an encoding failure is a 500
// INTERNAL_ERROR problem too, but it is not logged and its body has no instance. Prefer Respond.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	buf, err := encode(v)
	if err != nil {
		sendInternal(w)
		return
	}
	send(w, status, "application/json", buf)
}

// internalBody is the problem sent when even a problem cannot be encoded, or without a request at hand.
const internalBody = `{"type":"about:blank","title":"Internal Server Error","status":500,` +
	`"detail":"internal server error","error_code":"INTERNAL_ERROR","instance":"","errors":[]}` + "\n"

func sendInternal(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(internalBody)))
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = io.WriteString(w, internalBody)
}

// send writes a complete, already encoded body and returns its buffer to the pool.
func send(w http.ResponseWriter, status int, contentType string, buf *bytes.Buffer) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	if buf.Cap() <= 64<<10 {
		bufPool.Put(buf)
	}
}

// bufPool holds encoding buffers; buffers that grew past 64 KiB are let go.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// encode writes v as encoding/json does (a trailing newline included) into a pooled buffer.
func encode(v any) (*bytes.Buffer, error) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		bufPool.Put(buf)
		return nil, err
	}
	return buf, nil
}
