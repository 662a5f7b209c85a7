package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/guardrail-control/guard"
)

// APIError is an error response of the server, decoded from its application/problem+json body
// (docs/api.md, "Errors"). Use errors.As to get it.
type APIError struct {
	Status    int             // HTTP status code
	Code      string          // error_code, e.g. "CONTROL_NOT_FOUND"; empty when the body was not problem JSON
	Title     string          // short text of the status
	Detail    string          // human explanation
	Type      string          // problem type URI
	Instance  string          // path of the request
	RequestID string          // request_id, for the server logs
	Problems  []guard.Problem // field problems of a 422
}

// Error implements the error interface.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "guard server: %d", e.Status)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	switch {
	case e.Detail != "":
		b.WriteString(": " + e.Detail)
	case e.Title != "":
		b.WriteString(": " + e.Title)
	}
	for i, p := range e.Problems {
		if i == 3 {
			fmt.Fprintf(&b, " (and %d more)", len(e.Problems)-3)
			break
		}
		fmt.Fprintf(&b, "; %s: %s", p.Field, p.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request_id " + e.RequestID + ")")
	}
	return b.String()
}

// problemBody is the wire shape of an error.
type problemBody struct {
	Type      string          `json:"type"`
	Title     string          `json:"title"`
	Status    int             `json:"status"`
	Detail    string          `json:"detail"`
	ErrorCode string          `json:"error_code"`
	Instance  string          `json:"instance"`
	RequestID string          `json:"request_id"`
	Errors    []guard.Problem `json:"errors"`
}

// decodeAPIError builds an *APIError from an error response. A body that is not problem JSON (a proxy's
// HTML page) gives an APIError with only the status and its text; the body itself is never copied.
func decodeAPIError(resp *http.Response, raw []byte) *APIError {
	e := &APIError{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode)}
	var p problemBody
	if json.Unmarshal(raw, &p) == nil {
		e.Code = p.ErrorCode
		if p.Title != "" {
			e.Title = p.Title
		}
		e.Detail = p.Detail
		e.Type = p.Type
		e.Instance = p.Instance
		e.RequestID = p.RequestID
		e.Problems = p.Errors
	}
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Request-Id")
	}
	return e
}
