package guard

import (
	"encoding/json"
	"strconv"
	"strings"
)

// selectorRoot is the step field a selector path starts from.
type selectorRoot uint8

const (
	rootNone selectorRoot = iota // the path cannot resolve: always null
	rootStep                     // "*": the whole step as an object
	rootType
	rootName
	rootInput
	rootOutput
	rootContext
	rootSession // session.* and agent.*: the session state (session_selector.go), never the step
)

// pathSeg is one dotted segment below the root: an object key, which may also index a list when it is a
// non-negative integer.
type pathSeg struct {
	key   string
	index int // -1 when key is not a list index
}

// selectorPath is a compiled selector path.
type selectorPath struct {
	raw  string
	root selectorRoot
	segs []pathSeg
	sess *sessionSel // rootSession only
}

// compileSelectorPath splits a dotted path once, at compile time. A path whose first segment is not a
// step field selects null (validation reports it; the engine never fails on it).
func compileSelectorPath(raw string) selectorPath {
	p := selectorPath{raw: raw}
	if raw == "*" {
		p.root = rootStep
		return p
	}
	parts := strings.Split(raw, ".")
	switch parts[0] {
	case "type":
		p.root = rootType
	case "name":
		p.root = rootName
	case "input":
		p.root = rootInput
	case "output":
		p.root = rootOutput
	case "context":
		p.root = rootContext
	default:
		return p
	}
	for _, s := range parts[1:] {
		seg := pathSeg{key: s, index: -1}
		if n, err := strconv.Atoi(s); err == nil && n >= 0 && (s == "0" || s[0] != '0') && s[0] != '+' {
			seg.index = n
		}
		p.segs = append(p.segs, seg)
	}
	return p
}

// resolve returns the value the path selects in step, or nil when it does not resolve. Values that are
// not shaped like decoded JSON (structs, typed maps and slices built in Go) are converted through
// encoding/json on the way, so that "input.query" works on a struct with a `json:"query"` field.
func (p *selectorPath) resolve(step *Step) any {
	var v any
	switch p.root {
	case rootStep:
		return stepAsMap(step)
	case rootType:
		v = step.Type
	case rootName:
		v = step.Name
	case rootInput:
		v = step.Input
	case rootOutput:
		v = step.Output
	case rootContext:
		if step.Context == nil {
			return nil
		}
		v = step.Context
	default:
		return nil
	}
	for i := range p.segs {
		v = descend(v, &p.segs[i])
		if v == nil {
			return nil
		}
	}
	return v
}

// stepAsMap is the whole step as the JSON object the "*" selector sees.
func stepAsMap(step *Step) map[string]any {
	var ctx any
	if step.Context != nil {
		ctx = step.Context
	}
	return map[string]any{
		"type":    step.Type,
		"name":    step.Name,
		"input":   step.Input,
		"output":  step.Output,
		"context": ctx,
	}
}

// descend takes one path segment into v.
func descend(v any, s *pathSeg) any {
	switch x := v.(type) {
	case map[string]any:
		return x[s.key]
	case []any:
		if s.index >= 0 && s.index < len(x) {
			return x[s.index]
		}
		return nil
	case nil, string, float64, bool, json.Number:
		return nil
	}
	n, err := normalizeJSON(v)
	if err != nil {
		return nil
	}
	switch n.(type) {
	case map[string]any, []any:
		return descend(n, s)
	}
	return nil
}

// normalizeJSON converts a Go value to the shape encoding/json decodes into (map[string]any, []any,
// string, float64, bool, nil).
func normalizeJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
