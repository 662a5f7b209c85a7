package problem

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// encoding/json names an unknown field without its path ("json: unknown field \"x\"") and a mistyped
// field without list indices ("steps.name"). fieldPath finds the full dotted path in the body
// ("steps.1.name") by walking its tokens; it gives up (ok false) unless exactly one key fits.

// maxPathTokens bounds the walk (bodies are already size-limited).
const maxPathTokens = 200000

// unknownFieldPath locates the object key name.
func unknownFieldPath(b []byte, name string) (string, bool) {
	return fieldPath(b, -1, func(p []string) bool { return p[len(p)-1] == name })
}

// typeErrorPath locates the field encoding/json reports as field ("a.b.c", without list indices) whose
// value is at byte offset (UnmarshalTypeError.Offset): the last fitting key before it.
func typeErrorPath(b []byte, field string, offset int64) (string, bool) {
	want := strings.Split(field, ".")
	return fieldPath(b, offset, func(p []string) bool {
		i := 0
		for _, seg := range p {
			if isIndex(seg) {
				continue
			}
			if i >= len(want) || seg != want[i] {
				return false
			}
			i++
		}
		return i == len(want)
	})
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

type pathFrame struct {
	obj     bool
	wantKey bool
	key     string
	idx     int
}

// fieldPath returns the path of the key match accepts: the only one when before is negative, else the
// last one that starts before the byte offset before.
func fieldPath(b []byte, before int64, match func(path []string) bool) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var stack []pathFrame
	path := func() []string {
		p := make([]string, len(stack))
		for i, f := range stack {
			if f.obj {
				p[i] = f.key
			} else {
				p[i] = strconv.Itoa(f.idx)
			}
		}
		return p
	}
	valueDone := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].obj {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].idx++
			}
		}
	}
	found := ""
	count := 0
	for i := 0; i < maxPathTokens; i++ {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:n-1]
				valueDone()
				continue
			}
			key, _ := tok.(string)
			stack[n-1].key, stack[n-1].wantKey = key, false
			if before >= 0 && dec.InputOffset() > before {
				break
			}
			if p := path(); match(p) {
				if s := strings.Join(p, "."); s != found {
					found = s
					count++
				}
			}
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, pathFrame{obj: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, pathFrame{})
		case json.Delim(']'), json.Delim('}'):
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			valueDone()
		default:
			valueDone()
		}
	}
	if before >= 0 {
		return found, found != ""
	}
	return found, count == 1
}
