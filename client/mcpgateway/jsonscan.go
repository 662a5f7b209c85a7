package mcpgateway

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/guardrail-control/guard/internal/jsonstr"

	"github.com/guardrail-control/guard/internal/strictjson"
)

// A small JSON scanner for the one-pass decoders of fastdecode.go. It accepts exactly the JSON that
// encoding/json accepts (RFC 8259; invalid UTF-8 inside strings is accepted, as encoding/json does), and
// is used only to find where values start and end and to read the few strings the gateway needs. Every
// function reports ok=false for anything it does not handle itself (including valid JSON nested deeper
// than maxScanDepth): the callers then leave the message to internal/strictjson (keys compared exactly,
// repeated keys refused), so that a doubt never changes what a message means.

// maxScanDepth bounds the nesting skipValue follows (encoding/json allows 10000; deeper values are rare
// enough to leave to it).
const maxScanDepth = 512

// skipSpace returns the index of the first byte at or after i that is not JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipValue validates the JSON value that starts at b[i] (no whitespace before it) and returns the index
// just after it.
func skipValue(b []byte, i int, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '{' || c == '[':
		if depth >= maxScanDepth {
			return 0, false
		}
		elem := func(v0 int) (int, bool) { return skipValue(b, v0, depth+1) }
		if c == '[' {
			return arrayAt(b, i, elem)
		}
		return objectAt(b, i, func(_ []byte, v0 int) (int, bool) { return elem(v0) })
	case c == '"':
		i, _, ok := skipString(b, i)
		return i, ok
	case c == '-' || c >= '0' && c <= '9':
		return skipNumber(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	}
	return 0, false
}

func skipLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// skipNumber validates the number at b[i]: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// String kinds skipString reports, from the plainest up: what a decoder must do with its contents.
const (
	strPlain   = iota // no escapes: the contents are the string (when they are valid UTF-8)
	strEscaped        // simple escapes (\" \\ \/ \b \f \n \r \t) only
	strUnicode        // at least one \u escape
)

// skipString validates the string at b[i] (b[i] == '"') and returns the index just after its closing
// quote and its kind.
func skipString(b []byte, i int) (int, int, bool) {
	kind := strPlain
	for i++; i < len(b); i++ {
		for { // to the next byte to look at, eight bytes at a time
			if i+8 > len(b) {
				for i < len(b) && !strStop[b[i]] {
					i++
				}
				break
			}
			if m := stopMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, kind, true
		case c < 0x20:
			return 0, 0, false
		case c == '\\':
			i++
			if i >= len(b) {
				return 0, 0, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				kind = max(kind, strEscaped)
			case 'u':
				if len(b)-i < 5 || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return 0, 0, false
				}
				i += 4
				kind = strUnicode
			default:
				return 0, 0, false
			}
		}
	}
	return 0, 0, false
}

// strStop marks the bytes skipString looks at: the quote, the backslash and control characters.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// stopMask finds the bytes of w (eight bytes, the first in the low bits) that skipString looks at: its
// lowest set bit is the high bit of the first quote, backslash or control character, and it is 0 when
// there is none. (The usual tests for a zero byte and for a byte below n: each may also flag bytes above
// one it rightly flags, through the borrow, never below, so the lowest flag of the three is exact.)
func stopMask(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(x uint64) uint64 { return (x - ones) & ^x & highs }
	return (w-0x20*ones)&^w&highs | zero(w^('"'*ones)) | zero(w^('\\'*ones))
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// decodeString returns the string whose JSON text (quotes included) is s, of the kind skipString found:
// strings of valid UTF-8 are decoded here (escapes by jsonstr.Unescape, which the server's one-pass reader
// shares), the others, and lone surrogate escapes, by encoding/json (which replaces them by U+FFFD).
func decodeString(s []byte, kind int) (string, bool) {
	body := s[1 : len(s)-1]
	if kind == strPlain && utf8.Valid(body) {
		return string(body), true
	}
	if kind != strPlain && utf8.Valid(body) {
		if v, ok := jsonstr.Unescape(body); ok { // ok unless a \u escape is a lone surrogate
			return v, true
		}
	}
	var v string
	if strictjson.UnmarshalLenient(s, &v) != nil {
		return "", false
	}
	return v, true
}

// isKey reports whether the string at s (quotes included, as skipString found it) is key: a plain string
// with exactly its bytes. encoding/json also matches struct fields case-insensitively and through escapes;
// the one-pass decoders leave any key other than their exact ones to it.
func isKey(s []byte, key string) bool {
	return len(s) == len(key)+2 && string(s[1:len(s)-1]) == key
}

// decodeObject decodes b, exactly one JSON object, as strictjson.UnmarshalLenient into a map[string]any
// does (objects as map[string]any, arrays as []any, numbers as float64), validating it in the same pass.
// ok=false for anything it does not decode itself (invalid JSON, a key repeated within one object, a
// number a float64 cannot hold, values nested deeper than maxScanDepth): the caller then uses strictjson,
// which decodes it or says what is wrong.
func decodeObject(b []byte) (map[string]any, bool) {
	if len(b) == 0 || b[0] != '{' {
		return nil, false
	}
	d := objectDecoder{b: b}
	v, end, ok := d.value(0, 0)
	if !ok || skipSpace(b, end) != len(b) {
		return nil, false
	}
	return v.(map[string]any), true
}

// objectDecoder is decodeObject's state: the plain strings (keys and values) it decodes are substrings
// of one copy of b, made when the first is needed (one allocation instead of one a string).
type objectDecoder struct {
	b []byte
	s string // b as a string, once made
}

// str returns the string whose JSON text is b[i:end], of the kind skipString found.
func (d *objectDecoder) str(i, end, kind int) (string, bool) {
	if kind != strPlain || !utf8.Valid(d.b[i+1:end-1]) {
		return decodeString(d.b[i:end], kind)
	}
	if d.s == "" {
		d.s = string(d.b)
	}
	return d.s[i+1 : end-1], true
}

// value decodes the value at b[i] (no whitespace before it) and returns the index just after it.
func (d *objectDecoder) value(i int, depth int) (any, int, bool) {
	b := d.b
	if i >= len(b) {
		return nil, 0, false
	}
	switch c := b[i]; {
	case c == '{':
		if depth >= maxScanDepth {
			return nil, 0, false
		}
		m := map[string]any{}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return m, i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return nil, 0, false
			}
			k0 := i
			end, kind, ok := skipString(b, i)
			if !ok {
				return nil, 0, false
			}
			key, ok := d.str(k0, end, kind)
			if !ok {
				return nil, 0, false
			}
			if _, dup := m[key]; dup {
				return nil, 0, false // a repeated key: strictjson refuses it, saying which
			}
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return nil, 0, false
			}
			var v any
			if v, i, ok = d.value(skipSpace(b, i+1), depth+1); !ok {
				return nil, 0, false
			}
			m[key] = v
			i = skipSpace(b, i)
			if i >= len(b) {
				return nil, 0, false
			}
			if b[i] == '}' {
				return m, i + 1, true
			}
			if b[i] != ',' {
				return nil, 0, false
			}
			i = skipSpace(b, i+1)
		}
	case c == '[':
		if depth >= maxScanDepth {
			return nil, 0, false
		}
		a := make([]any, 0)
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return a, i + 1, true
		}
		for {
			v, end, ok := d.value(i, depth+1)
			if !ok {
				return nil, 0, false
			}
			a = append(a, v)
			i = skipSpace(b, end)
			if i >= len(b) {
				return nil, 0, false
			}
			if b[i] == ']' {
				return a, i + 1, true
			}
			if b[i] != ',' {
				return nil, 0, false
			}
			i = skipSpace(b, i+1)
		}
	case c == '"':
		end, kind, ok := skipString(b, i)
		if !ok {
			return nil, 0, false
		}
		s, ok := d.str(i, end, kind)
		return s, end, ok
	case c == '-' || c >= '0' && c <= '9':
		end, ok := skipNumber(b, i)
		if !ok {
			return nil, 0, false
		}
		f, err := strconv.ParseFloat(string(b[i:end]), 64)
		if err != nil {
			return nil, 0, false
		}
		return f, end, true
	case c == 't':
		end, ok := skipLiteral(b, i, "true")
		return true, end, ok
	case c == 'f':
		end, ok := skipLiteral(b, i, "false")
		return false, end, ok
	case c == 'n':
		end, ok := skipLiteral(b, i, "null")
		return nil, end, ok
	}
	return nil, 0, false
}

// objectAt validates the JSON object at b[i] and returns the index just after it. For each member it
// calls f with the key (quotes included) and the index of the value (no whitespace before it); f
// validates the value and returns the index just after it, or false to stop.
func objectAt(b []byte, i int, f func(key []byte, v0 int) (int, bool)) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		k0 := i
		var ok bool
		if i, _, ok = skipString(b, i); !ok {
			return 0, false
		}
		key := b[k0:i]
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		if i, ok = f(key, skipSpace(b, i+1)); !ok {
			return 0, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, false
		}
		if b[i] == '}' {
			return i + 1, true
		}
		if b[i] != ',' {
			return 0, false
		}
		i = skipSpace(b, i+1)
	}
}

// arrayAt validates the JSON array at b[i] and returns the index just after it; f validates each
// element (at the index it is given) and returns the index just after it, or false to stop.
func arrayAt(b []byte, i int, f func(v0 int) (int, bool)) (int, bool) {
	if i >= len(b) || b[i] != '[' {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = f(i); !ok {
			return 0, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, false
		}
		if b[i] == ']' {
			return i + 1, true
		}
		if b[i] != ',' {
			return 0, false
		}
		i = skipSpace(b, i+1)
	}
}
