package capture

import (
	"fmt"
	"strings"
)

// Redacted replaces every value a redaction path selects before a step is stored.
const Redacted = "[REDACTED]"

// RedactPath is one compiled redaction path: a step field (input, output or context) and the keys below
// it; "*" stands for every key of an object or every element of a list, a number also indexes a list.
type RedactPath struct {
	raw  string
	segs []string
}

// ParseRedactPaths checks and compiles redaction paths such as "context.user_email",
// "input.password" or "input.messages.*.content". A path must start at input, output or context and
// name at least that field; the whole step field may be redacted ("input").
func ParseRedactPaths(paths []string) ([]RedactPath, error) {
	out := make([]RedactPath, 0, len(paths))
	for _, p := range paths {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		segs := strings.Split(p, ".")
		switch segs[0] {
		case "input", "output", "context":
		default:
			return nil, fmt.Errorf("redaction path %q must start with input, output or context", p)
		}
		for _, s := range segs[1:] {
			if s == "" {
				return nil, fmt.Errorf("redaction path %q has an empty segment", p)
			}
		}
		out = append(out, RedactPath{raw: p, segs: segs})
	}
	return out, nil
}

// redact replaces, in doc (a step decoded as JSON: map[string]any), every value each path selects. It
// changes doc in place and reports whether anything was replaced.
func redact(doc map[string]any, paths []RedactPath) bool {
	changed := false
	for i := range paths {
		if redactIn(doc, paths[i].segs) {
			changed = true
		}
	}
	return changed
}

func redactIn(v any, segs []string) bool {
	key, rest := segs[0], segs[1:]
	switch c := v.(type) {
	case map[string]any:
		if key == "*" {
			changed := false
			for k, child := range c {
				if len(rest) == 0 {
					c[k] = Redacted
					changed = true
				} else if redactIn(child, rest) {
					changed = true
				}
			}
			return changed
		}
		child, ok := c[key]
		if !ok {
			return false
		}
		if len(rest) == 0 {
			c[key] = Redacted
			return true
		}
		return redactIn(child, rest)
	case []any:
		if key == "*" {
			changed := false
			for i := range c {
				if len(rest) == 0 {
					c[i] = Redacted
					changed = true
				} else if redactIn(c[i], rest) {
					changed = true
				}
			}
			return changed
		}
		idx, ok := index(key, len(c))
		if !ok {
			return false
		}
		if len(rest) == 0 {
			c[idx] = Redacted
			return true
		}
		return redactIn(c[idx], rest)
	}
	return false
}

// index parses a list index below n.
func index(s string, n int) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	i := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
		i = i*10 + int(r-'0')
	}
	return i, i < n
}
