package llmproxy

import (
	"encoding/json"
	"errors"
	"net/http"
)

// The error formats of the APIs. OpenAI: {"error": {"message", "type", "param", "code"}}; Anthropic:
// {"type": "error", "error": {"type", "message"}}. A refusal by a control adds "guard" (the Block) inside
// "error": the official clients keep unknown keys of the error object (openai-go: Error.RawJSON(); Python:
// APIError.body).

type openAIError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    string  `json:"code"`
		Guard   *Block  `json:"guard,omitempty"`
	} `json:"error"`
}

type anthropicError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		// Code is guard's error code (as in the OpenAI format): an extra key the clients keep.
		Code  string `json:"code,omitempty"`
		Guard *Block `json:"guard,omitempty"`
	} `json:"error"`
}

// errorFormat is the error format of an API.
type errorFormat int

const (
	formatOpenAI errorFormat = iota
	formatAnthropic
)

// asClientError turns err into the *clientError to answer.
func asClientError(err error) *clientError {
	var ce *clientError
	if errors.As(err, &ce) {
		return ce
	}
	return &clientError{status: http.StatusInternalServerError, code: "guard_error", msg: "guard: internal error"}
}

// anthropicType maps a status to the Anthropic error type the SDKs expect with it.
func anthropicType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error"
	}
	return "api_error"
}

// errorBody encodes ce in format f.
func errorBody(f errorFormat, ce *clientError) []byte {
	var v any
	switch f {
	case formatAnthropic:
		var e anthropicError
		e.Type = "error"
		e.Error.Type = anthropicType(ce.status)
		e.Error.Message = ce.msg
		e.Error.Code = ce.code
		e.Error.Guard = ce.block
		v = e
	default:
		var e openAIError
		e.Error.Message = ce.msg
		e.Error.Type = ce.code
		if ce.block == nil && ce.status < 500 && ce.status != http.StatusForbidden {
			e.Error.Type = "invalid_request_error"
		}
		e.Error.Code = ce.code
		e.Error.Guard = ce.block
		v = e
	}
	b, _ := json.Marshal(v) // plain structs: cannot fail
	return b
}

// writeError answers err in format f. x-should-retry: false keeps the official clients from sending a
// refused call again (they retry 408, 409, 429 and 5xx otherwise).
func writeError(w http.ResponseWriter, f errorFormat, err error) {
	ce := asClientError(err)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if ce.status != http.StatusServiceUnavailable && ce.status != http.StatusGatewayTimeout && ce.status != http.StatusBadGateway {
		h.Set("X-Should-Retry", "false")
	}
	w.WriteHeader(ce.status)
	_, _ = w.Write(errorBody(f, ce))
}
