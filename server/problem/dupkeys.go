package problem

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	guard "github.com/guardrail-control/guard"
)

// encoding/json keeps the last of two equal keys in one object, so {"decision":"deny","decision":"allow"}
// would be stored as allow while a reviewer (or another parser, which may keep the first) reads deny.
// Every request body is therefore scanned once for a key repeated within one object, at any depth
// (control data and free-form metadata included), and such a body is a 422 naming the key's path.
//
// The scan is a single pass over bytes that the JSON decoder has already accepted, without allocation for
// the common small object: keys are compared in place, and only an object with more than linearKeys keys
// gets a map (so a hostile object with 100,000 keys costs linear, not quadratic, time).

// linearKeys is the number of keys of one object compared pairwise before switching to a map.
const linearKeys = 16

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

// checkDuplicateKeys returns a *Error naming the first repeated key of b, or nil. b should be valid JSON;
// anything else is scanned without panicking and may simply report nothing.
func checkDuplicateKeys(b []byte) error {
	sc := scanners.Get().(*dupScanner)
	path, ok := sc.scan(b)
	sc.b, sc.arena = nil, sc.arena[:0]
	if cap(sc.stack) <= 256 && cap(sc.keys) <= 4096 && cap(sc.arena) <= 1<<16 {
		clear(sc.stack[:cap(sc.stack)]) // drop the maps of large objects
		scanners.Put(sc)
	}
	if ok {
		return DuplicateKeyError(path)
	}
	return nil
}

// scanners recycles scanners (and their stacks) across requests: the check allocates nothing.
var scanners = sync.Pool{New: func() any { return new(dupScanner) }}

// dupFrame is one open object or array of the scan.
type dupFrame struct {
	obj      bool
	wantKey  bool
	idx      int             // arrays: index of the current element
	first    int             // objects: index in keys of this object's first key
	cur      dupKey          // objects: the current key
	overflow map[string]bool // objects with more than linearKeys keys
}

// dupKey is a key as its bytes: a span of the body, or of the scanner's arena when it held escapes.
type dupKey struct {
	start, end int
	arena      bool
}

type dupScanner struct {
	b     []byte
	stack []dupFrame
	keys  []dupKey
	arena []byte
}

func (sc *dupScanner) bytesOf(k dupKey) []byte {
	if k.arena {
		return sc.arena[k.start:k.end]
	}
	return sc.b[k.start:k.end]
}

// scan walks b and returns the path of the first repeated key.
func (sc *dupScanner) scan(b []byte) (string, bool) {
	sc.b = b
	sc.stack = sc.stack[:0]
	sc.keys = sc.keys[:0]
	for i := 0; i < len(b); {
		c := b[i]
		switch c {
		case '{':
			sc.stack = append(sc.stack, dupFrame{obj: true, wantKey: true, first: len(sc.keys)})
			i++
		case '[':
			sc.stack = append(sc.stack, dupFrame{})
			i++
		case '}', ']':
			if n := len(sc.stack); n > 0 {
				if sc.stack[n-1].obj {
					sc.keys = sc.keys[:sc.stack[n-1].first]
				}
				sc.stack = sc.stack[:n-1]
			}
			i++
		case ',':
			if n := len(sc.stack); n > 0 {
				if sc.stack[n-1].obj {
					sc.stack[n-1].wantKey = true
				} else {
					sc.stack[n-1].idx++
				}
			}
			i++
		case '"':
			end, escaped := stringEnd(b, i)
			if n := len(sc.stack); n > 0 && sc.stack[n-1].obj && sc.stack[n-1].wantKey {
				f := &sc.stack[n-1]
				f.wantKey = false
				k := dupKey{start: i + 1, end: end - 1}
				if escaped {
					k = sc.unescape(b[i:end])
				}
				if sc.seen(f, k) {
					f.cur = k
					return sc.path(), true
				}
				f.cur = k
			}
			i = end
		default:
			i++
		}
	}
	return "", false
}

// seen reports whether the object of f already has key k, and records k.
func (sc *dupScanner) seen(f *dupFrame, k dupKey) bool {
	kb := sc.bytesOf(k)
	if f.overflow != nil {
		if f.overflow[string(kb)] {
			return true
		}
		f.overflow[string(kb)] = true
		return false
	}
	for _, o := range sc.keys[f.first:] {
		if bytes.Equal(sc.bytesOf(o), kb) {
			return true
		}
	}
	sc.keys = append(sc.keys, k)
	if len(sc.keys)-f.first > linearKeys {
		f.overflow = make(map[string]bool, 2*linearKeys)
		for _, o := range sc.keys[f.first:] {
			f.overflow[string(sc.bytesOf(o))] = true
		}
		sc.keys = sc.keys[:f.first]
	}
	return false
}

// unescape decodes the quoted key q (which holds escapes) into the arena, so that "a" and "\u0061" are
// the same key, as they are to the decoder.
func (sc *dupScanner) unescape(q []byte) dupKey {
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		s = string(q) // not reachable for valid JSON: compare the raw text
	}
	start := len(sc.arena)
	sc.arena = append(sc.arena, s...)
	return dupKey{start: start, end: len(sc.arena), arena: true}
}

// path is the dotted path of the current key: object keys and array indices from the root.
func (sc *dupScanner) path() string {
	parts := make([]string, 0, len(sc.stack))
	for _, f := range sc.stack {
		if f.obj {
			parts = append(parts, string(sc.bytesOf(f.cur)))
		} else {
			parts = append(parts, strconv.Itoa(f.idx))
		}
	}
	return strings.Join(parts, ".")
}

// stringEnd returns the index just past the string that starts with the quote at b[i], and whether it
// holds a backslash escape. An unterminated string ends at len(b).
func stringEnd(b []byte, i int) (int, bool) {
	// Fast path: the next quote, with no backslash before it (IndexByte is vectorised).
	rest := b[i+1:]
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return len(b), false
	}
	if bytes.IndexByte(rest[:q], '\\') < 0 {
		return i + 1 + q + 1, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(b), true
}
