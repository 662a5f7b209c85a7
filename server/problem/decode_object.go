package problem

import (
	"encoding/json"

	guard "github.com/guardrail-control/guard"
)

// requireObject refuses a body whose top-level value is not a JSON object. Every request body of the API
// is an object; encoding/json would decode null into a struct as "nothing to change" (a PATCH of null
// answering 200), and [] or a scalar only as a type error. Invalid JSON is 400 INVALID_JSON as usual.
func requireObject(b []byte) error {
	if firstByte(b) == '{' {
		return nil
	}
	if !json.Valid(b) {
		return invalidJSON(b) // where it broke, as for any invalid body
	}
	return Validation("the request body must be a JSON object",
		guard.Problem{Field: "", Code: "type", Message: "must be a JSON object"})
}

// firstByte returns the first byte of b that is not JSON white space (0 when there is none).
func firstByte(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c
		}
	}
	return 0
}
