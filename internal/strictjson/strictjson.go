// Package strictjson is the one decoder of JSON objects that come from outside guard: request bodies,
// policy and controls files, key files, MCP messages and CLI input. It compares object keys exactly ("a"
// and "A" are two keys; a key that differs from a field's name only in case is not that field), refuses
// a key repeated within one object at any depth (so nothing is read twice, and no reader can take the
// first where another takes the last), and either refuses (Unmarshal) or skips (UnmarshalLenient) a key
// the destination has no field for.
//
// encoding/json matches keys case-insensitively and keeps the last of two equal keys, so it is not used
// for such input. The decoding is github.com/go-json-experiment/json (the implementation of Go's
// encoding/json/v2), whose defaults are exactly these rules; this package fixes the options, reports
// every failure as one *Error with a dotted path, and names the fields a lenient decoding skipped.
package strictjson

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Options of every decoding: keys compared exactly and duplicates refused are the library's defaults,
// named here so that no default can change them. Invalid UTF-8 in a string is replaced with U+FFFD, as
// encoding/json does.
var (
	lenient = json.JoinOptions(
		json.MatchCaseInsensitiveNames(false),
		jsontext.AllowDuplicateNames(false),
		jsontext.AllowInvalidUTF8(true),
	)
	strict = json.JoinOptions(lenient, json.RejectUnknownMembers(true))
)

// Unmarshal decodes b, exactly one JSON value, into dst. A key dst has no field for is an error
// (KindUnknown), as are invalid JSON, a repeated key, a value of the wrong type or out of range.
func Unmarshal(b []byte, dst any) error {
	return wrap(b, json.Unmarshal(b, dst, strict))
}

// UnmarshalLenient is Unmarshal except that a key dst has no field for is skipped (never read into a
// field whose name it matches only without regard to case). Unknown reports which were skipped.
func UnmarshalLenient(b []byte, dst any) error {
	return wrap(b, json.Unmarshal(b, dst, lenient))
}

// Kind says what made a decoding fail.
type Kind int

// The kinds of Error.
const (
	// KindSyntax: the input is not JSON (or holds more than one value); Offset says where.
	KindSyntax Kind = iota + 1
	// KindDuplicate: the key at Path repeats a key of the same object.
	KindDuplicate
	// KindUnknown: the destination has no field for the key at Path.
	KindUnknown
	// KindType: the value at Path is of another JSON kind than the destination takes (Want says which).
	KindType
	// KindRange: the number at Path does not fit its destination.
	KindRange
	// KindOther: a method of the destination (UnmarshalJSON) refused the value at Path; Err is its error.
	KindOther
)

// Error is a failed decoding. It never holds any of the input's values (keys only, in Path).
type Error struct {
	Kind Kind
	// Path is the dotted path of the offending key or value from the top ("steps.1.name"); "" is the
	// whole input.
	Path string
	// Offset is the byte offset of a syntax error.
	Offset int64
	// Want is, for KindType, what the destination takes: "a string", "a number", "a boolean", "an
	// array", "an object".
	Want string
	// Err is the underlying error.
	Err error
}

func (e *Error) Error() string {
	var msg string
	switch e.Kind {
	case KindSyntax:
		msg = "invalid JSON at byte offset " + strconv.FormatInt(e.Offset, 10)
		if e.Err != nil {
			msg += ": " + e.Err.Error()
		}
		return msg
	case KindDuplicate:
		msg = "appears more than once in the same object"
	case KindUnknown:
		msg = "is an unknown field (keys are compared exactly)"
	case KindType:
		msg = "must be " + e.Want
	case KindRange:
		msg = "is out of range"
	default:
		msg = "is not valid"
		if e.Err != nil {
			msg += ": " + e.Err.Error()
		}
	}
	if e.Path == "" {
		return "the JSON value " + msg
	}
	return e.Path + ": " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// wrap turns the library's error into an *Error.
func wrap(b []byte, err error) error {
	if err == nil {
		return nil
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		if errors.Is(syn.Err, jsontext.ErrDuplicateName) {
			return &Error{Kind: KindDuplicate, Path: dotted(syn.JSONPointer), Offset: syn.ByteOffset, Err: err}
		}
		return &Error{Kind: KindSyntax, Offset: syn.ByteOffset, Err: syn.Err}
	}
	var sem *json.SemanticError
	if !errors.As(err, &sem) {
		return &Error{Kind: KindOther, Err: err}
	}
	e := &Error{Path: dotted(sem.JSONPointer), Offset: sem.ByteOffset, Err: sem.Err}
	var num *strconv.NumError
	switch {
	case errors.Is(sem.Err, json.ErrUnknownName):
		e.Kind = KindUnknown
	case sem.Err == nil || errors.Is(sem.Err, strconv.ErrRange) || errors.Is(sem.Err, strconv.ErrSyntax) ||
		errors.As(sem.Err, &num) || sem.Err.Error() == "value out of range" || sem.Err.Error() == "invalid syntax":
		// The value is of another kind, or a number the destination cannot hold: beyond its range
		// (KindRange), or not of its kind (1.5 for an integer).
		e.Kind, e.Want = KindType, want(sem)
		if sem.JSONKind == '0' && outOfRange(numberAt(b, sem.ByteOffset), sem.GoType) {
			e.Kind, e.Want = KindRange, ""
		}
	default:
		e.Kind = KindOther // a destination's UnmarshalJSON refused the value
	}
	return e
}

// want names the JSON kind the Go type of sem takes.
func want(sem *json.SemanticError) string {
	if sem.GoType == nil {
		return "of another type"
	}
	switch sem.GoType.Kind().String() {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "a number"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "ptr":
		return want(&json.SemanticError{GoType: sem.GoType.Elem()})
	}
	return "of another type"
}

// dotted turns a JSON Pointer ("/steps/1/name") into the dotted path guard's errors use ("steps.1.name").
func dotted(ptr jsontext.Pointer) string {
	if ptr == "" {
		return ""
	}
	var b strings.Builder
	for tok := range ptr.Tokens() {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// Check reports the first syntax error or repeated key of b (nil when b is exactly one JSON value with
// no key repeated within an object). A decoding stops at its first error in input order; Check lets a
// caller put a broken or ambiguous input before a wrong field, whatever comes first.
func Check(b []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(b), lenient)
	if err := dec.SkipValue(); err != nil {
		return wrap(b, err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			return &Error{Kind: KindSyntax, Offset: dec.InputOffset(), Err: errors.New("data after the JSON value")}
		}
		return wrap(b, err)
	}
	return nil
}
