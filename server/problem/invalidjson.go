package problem

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// invalidJSON is the 400 INVALID_JSON problem for a body that is not JSON. It says where the JSON broke
// (line, column and byte offset) and, for the most common mistake of hand-written JSON (a regex such as
// \d pasted into a JSON string with a single backslash), how to fix it. It never repeats any of the body:
// not even the offending character.
func invalidJSON(b []byte) *Error {
	var raw json.RawMessage
	var se *json.SyntaxError
	if err := json.Unmarshal(b, &raw); !errors.As(err, &se) {
		return New(http.StatusBadRequest, CodeInvalidJSON, "the request body is not valid JSON")
	}
	// se.Offset counts the bytes read when the error was found: the offending byte is the last of them,
	// or there is none when the body ended too early.
	off := int(se.Offset)
	if off > len(b) {
		off = len(b)
	}
	if endedEarly(se) {
		line, col := position(b, len(b))
		return New(http.StatusBadRequest, CodeInvalidJSON, fmt.Sprintf(
			"the request body is not valid JSON: it ends early, at line %d, column %d (byte %d): a string, array or object is not closed",
			line, col, len(b)))
	}
	at := off - 1
	if at < 0 {
		at = 0
	}
	hint := badEscape(b, at)
	if hint {
		at-- // point at the backslash that starts the escape
	}
	line, col := position(b, at)
	msg := fmt.Sprintf("the request body is not valid JSON: syntax error at line %d, column %d (byte %d)", line, col, at+1)
	if hint {
		msg += `; a backslash in a JSON string starts an escape (\n, \t, \", \\, \uXXXX): to send a regular expression such as \d or \s, double the backslash (\\d, \\s)`
	}
	return New(http.StatusBadRequest, CodeInvalidJSON, msg)
}

// endedEarly reports whether the syntax error is the end of the input (nothing is wrong with what came).
func endedEarly(se *json.SyntaxError) bool { return se.Error() == "unexpected end of JSON input" }

// position returns the 1-based line and column (in characters) of byte offset at in b.
func position(b []byte, at int) (line, col int) {
	if at > len(b) {
		at = len(b)
	}
	line = 1 + bytes.Count(b[:at], []byte{'\n'})
	start := bytes.LastIndexByte(b[:at], '\n') + 1
	return line, 1 + utf8.RuneCount(b[start:at])
}

// badEscape reports whether the byte at `at` follows a backslash as a character JSON does not allow in an
// escape: the scanner stops right there for "\d".
func badEscape(b []byte, at int) bool {
	if at <= 0 || at >= len(b) || b[at-1] != '\\' {
		return false
	}
	// The backslash must itself be unescaped: count the run of backslashes before at.
	n := 0
	for i := at - 1; i >= 0 && b[i] == '\\'; i-- {
		n++
	}
	if n%2 == 0 {
		return false
	}
	switch b[at] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u':
		return false
	}
	return true
}
