package problem

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/strictjson"
)

// ReadBody reads the whole request body, turning an oversize body (http.MaxBytesReader, set by the
// server's middleware) into 413 PAYLOAD_TOO_LARGE.
func ReadBody(r *http.Request) ([]byte, error) {
	return AppendBody(nil, r)
}

// AppendBody reads the whole request body, appending it to buf, with ReadBody's errors. buf is grown
// once to the declared Content-Length (up to 1 MiB; beyond, as it arrives), so that a caller with a
// recycled buffer reads without allocating.
func AppendBody(buf []byte, r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= 1<<20 && int64(cap(buf)-len(buf)) <= n {
		buf = append(make([]byte, 0, len(buf)+int(n)+1), buf...) // +1: room for the read that sees EOF
	}
	b, err := readAll(buf, r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, New(http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
				fmt.Sprintf("the request body is larger than %d bytes", mbe.Limit))
		}
		return nil, New(http.StatusBadRequest, CodeInvalidJSON, "the request body could not be read")
	}
	return b, nil
}

// readAll is io.ReadAll appending to b.
func readAll(b []byte, rd io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // let append pick the growth
		}
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				return b, nil
			}
			return b, err
		}
	}
}

// DecodeJSON reads the body and decodes it strictly into dst: invalid JSON is 400 INVALID_JSON, unknown
// fields and wrong types are 422 VALIDATION_ERROR naming the field, an oversize body is 413.
func DecodeJSON(r *http.Request, dst any) error {
	b, err := ReadBody(r)
	if err != nil {
		return err
	}
	return DecodeBytes(b, dst)
}

// DecodeBytes decodes b strictly into dst with the same errors as DecodeJSON. A key repeated within one
// object, at any depth, is a 422 naming its path (see checkDuplicateKeys).
func DecodeBytes(b []byte, dst any) error {
	return decode(b, dst, true)
}

// decode decodes b into dst with strictjson (keys compared exactly, duplicates refused); strict refuses
// unknown fields (422 unknown_field), otherwise they are skipped.
func decode(b []byte, dst any, strict bool) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return New(http.StatusBadRequest, CodeInvalidJSON, "the request body is empty; a JSON object is required")
	}
	if err := requireObject(b); err != nil {
		return err
	}
	var err error
	if strict {
		err = strictjson.Unmarshal(b, dst)
	} else {
		err = strictjson.UnmarshalLenient(b, dst)
	}
	if err == nil {
		return nil
	}
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return Validation("the request body is not valid", guard.Problem{Code: "invalid", Message: "the body does not match the expected shape"})
	}
	// The decoder stops at the first problem in body order: invalid JSON and a repeated key anywhere
	// come before a wrong field, as they always did.
	if se.Kind != strictjson.KindSyntax && se.Kind != strictjson.KindDuplicate {
		var ce *strictjson.Error
		if errors.As(strictjson.Check(b), &ce) {
			se = ce
		}
	}
	switch se.Kind {
	case strictjson.KindSyntax:
		return invalidJSON(b) // where it broke, and a hint for a single backslash in a string
	case strictjson.KindDuplicate:
		return DuplicateKeyError(se.Path)
	case strictjson.KindUnknown:
		return Validation("the request body has an unknown field",
			guard.Problem{Field: se.Path, Code: "unknown_field", Message: "is not a known field"})
	case strictjson.KindRange:
		return Validation("the request body has a number out of range",
			guard.Problem{Field: se.Path, Code: "range", Message: "is out of range"})
	case strictjson.KindType:
		if se.Path == "" {
			return Validation("the request body has the wrong shape", guard.Problem{Field: "", Code: "type", Message: "must be " + se.Want})
		}
		return Validation("the request body has a field of the wrong type",
			guard.Problem{Field: se.Path, Code: "type", Message: "must be " + se.Want})
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	var ve *guard.ValidationError
	if errors.As(err, &ve) {
		return ve
	}
	return Validation("the request body is not valid", guard.Problem{Code: "invalid", Message: "the body does not match the expected shape"})
}
