// Package jsonstr writes Go strings and floats as JSON literals exactly as encoding/json does, without
// reflection or allocation, for the hand-written encoders on hot paths (the engine's text form of selected
// data, the server's evaluation response, the client's event batches), and decodes JSON string escapes
// for the hand-written one-pass decoders (the server's evaluation body, the MCP gateway's messages).
package jsonstr

import (
	"math"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// htmlSafe and plainSafe tell, for each ASCII byte, whether Append writes it as it is (one table lookup
// per byte instead of five comparisons): not a control character, quote or backslash, and for htmlSafe
// not <, > or &.
var htmlSafe, plainSafe = func() (html, plain [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		plain[c] = c != '"' && c != '\\'
		html[c] = plain[c] && c != '<' && c != '>' && c != '&'
	}
	return html, plain
}()

// Append appends s to b as a quoted JSON string, byte for byte what encoding/json writes: control
// characters escaped, invalid UTF-8 replaced by \ufffd, U+2028 and U+2029 escaped, and, when escapeHTML is
// true (encoding/json's default; false is an Encoder with SetEscapeHTML(false)), <, > and & as \u00XX.
func Append(b []byte, s string, escapeHTML bool) []byte {
	safe := &plainSafe
	if escapeHTML {
		safe = &htmlSafe
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			b = appendEscape(append(b, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscape appends the JSON escape of the ASCII byte c (a quote, a backslash or a control character):
// the short forms \" \\ \b \f \n \r \t where JSON has one, else \u00XX.
func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// AppendCanonical appends s as RFC 8785 (JSON Canonicalization Scheme, 3.2.2.2) writes a string: only
// quotes, backslashes and control characters escaped, everything else as it is (no HTML escapes, U+2028 and
// U+2029 unescaped). It reports false for invalid UTF-8, which has no canonical form.
func AppendCanonical(b []byte, s string) ([]byte, bool) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return b, false
			}
			i += size
			continue
		}
		if plainSafe[c] {
			i++
			continue
		}
		b = appendEscape(append(b, s[start:i]...), c)
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), true
}

// AppendFloat appends f as encoding/json writes a float64 (shortest form, exponent only below 1e-6 or
// from 1e21, "e-7" rather than "e-07"). It reports false, appending nothing, for NaN and infinities, which
// JSON cannot hold.
func AppendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	// Whole numbers below 1e15 (confidences of 0 and 1, counts) are their integer's digits: below 2^53
	// every integer is its own shortest form. -0 keeps its sign through strconv.
	if f == math.Trunc(f) && math.Abs(f) < 1e15 && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(b, int64(f), 10), true
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 -> e-9, as encoding/json
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}
