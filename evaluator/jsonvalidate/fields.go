package jsonvalidate

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/guardrail-control/guard/evaluator"
)

// fieldSpec collects required, field_types and constraints as a tree of object fields, from which one
// JSON Schema is generated.
type fieldSpec struct {
	root *node
}

// node is one field: what its value must be, and its own fields.
type node struct {
	required   map[string]bool // names of child fields that must be present
	object     bool            // a required path goes through it: it must be an object
	typ        string          // from field_types
	keywords   map[string]any  // from constraints, as JSON Schema keywords
	properties map[string]*node
}

func (s *fieldSpec) empty() bool { return s.root == nil }

// at returns the node of path, creating it and its parents; with required set, every parent must be an
// object holding the next segment.
func (s *fieldSpec) at(segs []string, required bool) *node {
	if s.root == nil {
		s.root = &node{}
	}
	n := s.root
	for _, seg := range segs {
		if required {
			n.object = true
			if n.required == nil {
				n.required = map[string]bool{}
			}
			n.required[seg] = true
		}
		if n.properties == nil {
			n.properties = map[string]*node{}
		}
		c := n.properties[seg]
		if c == nil {
			c = &node{}
			n.properties[seg] = c
		}
		n = c
	}
	return n
}

// splitPath checks a field path and splits it at dots.
func splitPath(p string) ([]string, bool) {
	if p == "" || len(p) > maxPathLength {
		return nil, false
	}
	segs := strings.Split(p, ".")
	for _, s := range segs {
		if s == "" {
			return nil, false
		}
	}
	return segs, true
}

var badPath = "must be a field path: names separated by dots, none empty"

// add reads one of the keys required, field_types or constraints.
func (s *fieldSpec) add(key string, v any) []evaluator.FieldError {
	var problems []evaluator.FieldError
	bad := func(field, code, msg string) {
		problems = append(problems, evaluator.FieldError{Field: field, Code: code, Message: msg})
	}
	switch key {
	case "required":
		list, ok := v.([]any)
		if !ok {
			if ss, isStrings := v.([]string); isStrings {
				for _, x := range ss {
					list = append(list, x)
				}
				ok = true
			}
		}
		if !ok {
			bad(key, "type", "must be a list of field paths")
			break
		}
		for i, item := range list {
			p, _ := item.(string)
			segs, ok := splitPath(p)
			if !ok {
				bad(joinPath(key, strconv.Itoa(i)), "invalid_path", badPath)
				continue
			}
			s.at(segs, true)
		}
	case "field_types":
		m, ok := v.(map[string]any)
		if !ok {
			bad(key, "type", "must be an object of field path to type")
			break
		}
		for _, p := range sortedKeys(m) {
			segs, ok := splitPath(p)
			if !ok {
				bad(joinPath(key, p), "invalid_path", badPath)
				continue
			}
			t, _ := m[p].(string)
			if !slices.Contains(fieldTypes, any(t)) {
				bad(joinPath(key, p), "enum", "must be one of string, number, integer, boolean, object, array, null")
				continue
			}
			s.at(segs, false).typ = t
		}
	case "constraints":
		m, ok := v.(map[string]any)
		if !ok {
			bad(key, "type", "must be an object of field path to constraints")
			break
		}
		for _, p := range sortedKeys(m) {
			field := joinPath(key, p)
			segs, ok := splitPath(p)
			if !ok {
				bad(field, "invalid_path", badPath)
				continue
			}
			c, ok := m[p].(map[string]any)
			if !ok || len(c) == 0 {
				bad(field, "type", "must be an object with at least one of min, max, enum, min_length, max_length, pattern")
				continue
			}
			kw, more := constraintKeywords(field, c)
			problems = append(problems, more...)
			if len(more) == 0 {
				s.at(segs, false).keywords = kw
			}
		}
	}
	return problems
}

// constraintKeywords translates one field's constraints into JSON Schema keywords.
func constraintKeywords(field string, c map[string]any) (map[string]any, []evaluator.FieldError) {
	kw := map[string]any{}
	var problems []evaluator.FieldError
	bad := func(k, code, msg string) {
		problems = append(problems, evaluator.FieldError{Field: field + "." + k, Code: code, Message: msg})
	}
	nums := map[string]float64{}
	for _, k := range sortedKeys(c) {
		v := c[k]
		switch k {
		case "min", "max":
			f, ok := evaluator.Number(v)
			if !ok {
				bad(k, "type", "must be a number")
				continue
			}
			nums[k] = f
			kw[map[string]string{"min": "minimum", "max": "maximum"}[k]] = f
		case "min_length", "max_length":
			f, ok := evaluator.Number(v)
			if !ok || f < 0 || f != float64(int64(f)) {
				bad(k, "type", "must be a whole number, 0 or more")
				continue
			}
			nums[k] = f
			if k == "min_length" {
				kw["minLength"], kw["minItems"] = int64(f), int64(f)
			} else {
				kw["maxLength"], kw["maxItems"] = int64(f), int64(f)
			}
		case "enum":
			l, ok := v.([]any)
			if !ok || len(l) == 0 {
				bad(k, "type", "must be a non-empty list of values")
				continue
			}
			kw["enum"] = l
		case "pattern":
			p, ok := v.(string)
			if !ok || p == "" {
				bad(k, "type", "must be a non-empty regular expression")
				continue
			}
			if _, err := regexp.Compile(p); err != nil {
				bad(k, "invalid_regex", "is not a valid RE2 regular expression")
				continue
			}
			kw["pattern"] = p
		default:
			bad(k, "unknown_field", "is not a known constraint (min, max, enum, min_length, max_length, pattern)")
		}
	}
	for _, pair := range [][2]string{{"min", "max"}, {"min_length", "max_length"}} {
		lo, okLo := nums[pair[0]]
		hi, okHi := nums[pair[1]]
		if okLo && okHi && lo > hi {
			bad(pair[0], "range", "must not be greater than "+pair[1])
		}
	}
	return kw, problems
}

// schema renders the tree as a JSON Schema document. The root must be an object.
func (s *fieldSpec) schema() map[string]any {
	s.root.object = true
	return s.root.schema()
}

func (n *node) schema() map[string]any {
	out := make(map[string]any, len(n.keywords)+3)
	for k, v := range n.keywords {
		out[k] = v
	}
	// A declared type wins over the implied "object" of a required path through the field: if they
	// differ nothing can satisfy both, and the type error is the one worth reporting.
	switch {
	case n.typ != "":
		out["type"] = n.typ
	case n.object:
		out["type"] = "object"
	}
	if len(n.required) > 0 {
		req := make([]any, 0, len(n.required))
		for _, k := range sortedKeys(n.required) {
			req = append(req, k)
		}
		out["required"] = req
	}
	if len(n.properties) > 0 {
		props := make(map[string]any, len(n.properties))
		for k, c := range n.properties {
			props[k] = c.schema()
		}
		out["properties"] = props
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
