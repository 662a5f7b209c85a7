package store

import (
	"strings"
	"unicode/utf8"

	guard "github.com/guardrail-control/guard"
)

// PostgreSQL stores neither NUL characters nor invalid UTF-8 in text, and JSONB refuses the \u0000 escape.
// The store treats both dialects alike: control-plane input that holds them is refused as invalid (so
// the server answers 422, not 500), while filters and events, which are records and queries rather than
// configuration, have them replaced by U+FFFD.

// storable reports whether s can be stored as text on both dialects.
func storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// storableJSON reports whether an encoded JSON document can be stored as JSONB. Go's encoder writes NUL
// as \u0000 and invalid UTF-8 as \ufffd, so the escape is the only thing to look for.
func storableJSON(enc string) bool { return !strings.Contains(enc, `\u0000`) }

// clean makes s storable, replacing NUL and invalid bytes with U+FFFD.
func clean(s string) string {
	if storable(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// cleanJSON makes an encoded JSON document storable as JSONB.
func cleanJSON(enc string) string { return strings.ReplaceAll(enc, `\u0000`, `\ufffd`) }

// unstorable is the problem reported for control-plane text that cannot be stored.
func unstorable(field string) guard.Problem {
	return guard.Problem{Field: field, Code: guard.CodeInvalid, Message: "must not contain NUL characters or invalid UTF-8"}
}
