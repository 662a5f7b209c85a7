// Package jsonstr writes Go strings as JSON string literals exactly as encoding/json does, without
// reflection or allocation, for the hand-written encoders on hot paths (the engine's text form of selected
// data, the server's evaluation response, the client's event batches).
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Append appends s to b as a quoted JSON string, byte for byte what encoding/json writes: control
// characters escaped, invalid UTF-8 replaced by \ufffd, U+2028 and U+2029 escaped, and, when escapeHTML is
// true (encoding/json's default; false is an Encoder with SetEscapeHTML(false)), <, > and & as \u00XX.
func Append(b []byte, s string, escapeHTML bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
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
