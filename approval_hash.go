package guard

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/guardrail-control/guard/internal/jsonstr"
)

// The payload hash is computed on every step refused by an approval control and on every presented
// grant, inside POST /evaluation, with a budget of a few microseconds (BENCHMARKS.md, "Approvals"). For
// the values a decoded JSON step holds (nil, bool, float64, string, []any, map[string]any) canonFast
// writes the RFC 8785 form directly into a pooled buffer; any other value (json.Number, a typed struct
// built in Go, ...) declines and PayloadHash takes the library path (encoding/json, then jsontext's
// Canonicalize). TestPayloadHashFastMatchesLibrary checks both give the same bytes.

// canonBuf is the pooled state of canonFast: the output and a stack of key lists for sorting.
type canonBuf struct {
	b    []byte
	keys [][]string
}

var canonBufs = sync.Pool{New: func() any { return &canonBuf{b: make([]byte, 0, 512)} }}

// payloadHashFast returns the hash of v, or ok false when v holds a value canonFast does not write.
func payloadHashFast(v any) (string, bool) {
	cb := canonBufs.Get().(*canonBuf)
	var ok bool
	cb.b, ok = cb.canon(cb.b[:0], v, 0)
	if !ok {
		canonBufs.Put(cb)
		return "", false
	}
	sum := sha256.Sum256(cb.b)
	if cap(cb.b) <= 64<<10 {
		canonBufs.Put(cb)
	}
	var out [len(PayloadHashPrefix) + 2*sha256.Size]byte
	copy(out[:], PayloadHashPrefix)
	hex.Encode(out[len(PayloadHashPrefix):], sum[:])
	return string(out[:]), true
}

// canon appends the canonical form of v; depth bounds the recursion (a deeper value declines, and the
// library path reports it).
func (cb *canonBuf) canon(b []byte, v any, depth int) ([]byte, bool) {
	if depth > MaxJSONDepth {
		return b, false
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		if x {
			return append(b, "true"...), true
		}
		return append(b, "false"...), true
	case float64:
		return canonNumber(b, x)
	case string:
		return canonString(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = cb.canon(b, e, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		for depth >= len(cb.keys) {
			cb.keys = append(cb.keys, nil)
		}
		keys := cb.keys[depth][:0]
		ascii := true
		for k := range x {
			keys = append(keys, k)
			if ascii && !isASCII(k) {
				ascii = false
			}
		}
		if ascii {
			slices.Sort(keys) // for ASCII, byte order is UTF-16 code unit order
		} else {
			slices.SortFunc(keys, compareUTF16)
		}
		cb.keys[depth] = keys
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = canonString(b, k); !ok {
				return b, false
			}
			b = append(b, ':')
			if b, ok = cb.canon(b, x[k], depth+1); !ok {
				return b, false
			}
		}
		clear(keys) // drop the references to the step's keys
		return append(b, '}'), true
	}
	return b, false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// compareUTF16 orders strings by their UTF-16 code units, as RFC 8785 sorts object keys.
func compareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// canonNumber writes f as ECMAScript's Number.prototype.toString does (RFC 8785, 3.2.2.3): encoding/json's
// shortest form (exponent notation below 1e-6 and from 1e21), except that -0 is written 0.
func canonNumber(b []byte, f float64) ([]byte, bool) {
	if f == 0 {
		return append(b, '0'), true
	}
	return jsonstr.AppendFloat(b, f)
}

// canonString writes s quoted as RFC 8785 does; invalid UTF-8 declines.
func canonString(b []byte, s string) ([]byte, bool) { return jsonstr.AppendCanonical(b, s) }
