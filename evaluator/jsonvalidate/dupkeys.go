package jsonvalidate

import "encoding/json"

// duplicateKey reports whether an object of the JSON text s (already known to be valid JSON) holds a key
// twice, "a" and "\u0061" included. encoding/json keeps the last of them and validates that one, while the
// tool that receives the text may read the first: {"role":"admin","role":"user"} passed an enum of "user".
// The verdict must cover what any reader sees, so such text is refused as invalid JSON (issue 23's audit).
// It runs on the evaluation path: one pass over the bytes, no allocation for objects of up to 16 keys
// without escapes.
func duplicateKey(s string) bool {
	type object struct {
		keys  [16]string
		n     int
		more  map[string]struct{}
		isObj bool
	}
	var buf [4]object // objects nested up to 4 deep cost no allocation
	stack := buf[:0]
	expectKey := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '{':
			stack = append(stack, object{isObj: true})
			expectKey = true
		case '[':
			stack = append(stack, object{})
			expectKey = false
		case '}', ']':
			stack = stack[:len(stack)-1]
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].isObj
		case '"':
			j, escaped := i+1, false
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					escaped = true
					j++
				}
			}
			if expectKey {
				key := s[i+1 : j]
				if escaped {
					var k string
					if json.Unmarshal([]byte(s[i:j+1]), &k) != nil {
						return true // cannot happen for valid JSON; refuse rather than guess
					}
					key = k
				}
				o := &stack[len(stack)-1]
				for _, k := range o.keys[:min(o.n, len(o.keys))] {
					if k == key {
						return true
					}
				}
				if _, dup := o.more[key]; dup {
					return true
				}
				if o.n < len(o.keys) {
					o.keys[o.n] = key
				} else {
					if o.more == nil {
						o.more = map[string]struct{}{}
					}
					o.more[key] = struct{}{}
				}
				o.n++
				expectKey = false
			}
			i = j
		}
	}
	return false
}
