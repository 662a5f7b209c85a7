package problem

import guard "github.com/guardrail-control/guard"

// A key repeated within one object, at any depth (control data and free-form metadata included), is
// refused by the decoder (internal/strictjson): {"decision":"deny","decision":"allow"} would otherwise be
// read as one of the two while a reviewer, or another parser, reads the other.

// DuplicateKeyError returns the 422 VALIDATION_ERROR of a body whose object at path repeats a key. The
// problem names the key's path; the value is never echoed.
func DuplicateKeyError(path string) *Error {
	return Validation("the request body repeats a key within one object",
		guard.Problem{Field: path, Code: "duplicate_key", Message: "appears more than once in the same object"})
}

// IsDuplicateKey reports whether err is the 422 of a repeated key.
func IsDuplicateKey(err error) bool {
	pe, ok := err.(*Error)
	return ok && len(pe.Problems) == 1 && pe.Problems[0].Code == "duplicate_key"
}
