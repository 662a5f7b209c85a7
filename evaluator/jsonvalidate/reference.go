package jsonvalidate

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/guardrail-control/guard/evaluator"
)

// The reference implementation's (agent-control) config names and their semantics, accepted alongside
// guard's own:
//
//	json_schema          = schema, but draft 7 unless the schema says "$schema" (the reference validates
//	                       with Draft7Validator)
//	required_fields      = required, except that a null value counts as missing unless
//	                       allow_null_required is true
//	field_constraints    like constraints, with the reference's semantics: a missing field is a
//	                       violation; min/max need a number, min_length/max_length a string; enum
//	                       compares strings case-insensitively when case_sensitive_enums is false
//	field_patterns       field path -> RE2 pattern, or {"pattern": ..., "flags": ["IGNORECASE"]}; the
//	                       pattern is searched in the field's text (numbers and booleans as text); a
//	                       missing field fails; pattern_match_logic all (default) or any
//	allow_extra_fields   false: a leaf field not named by field_types or required_fields is a violation
//	                       (checked only when field_types is given, as in the reference)
//
// Both names of one setting may not be given together (schema and json_schema, required and
// required_fields, constraints and field_constraints). Everything is compiled into one internal form
// when the control is built: the JSON Schemas, plus the reference checks below.

// aliasOf maps each reference name to guard's name for the same setting, for the conflict check.
var aliasOf = map[string]string{"json_schema": "schema", "required_fields": "required", "field_constraints": "constraints"}

// refChecks are the reference-semantics checks, run on the decoded value after the schemas.
type refChecks struct {
	required          [][]string
	requiredNames     []string
	allowNullRequired bool
	constraints       []refConstraint
	patterns          []refPattern
	patternsAny       bool
	caseSensitiveEnum bool
	extraCheck        bool            // allow_extra_fields is false
	known             map[string]bool // field_types and required_fields paths, for extraCheck
	active            bool
}

type refConstraint struct {
	path     []string
	name     string
	min, max *float64
	minLen   *int
	maxLen   *int
	enum     []any
}

type refPattern struct {
	path []string
	name string
	re   *regexp.Regexp
}

func newRefChecks() *refChecks {
	return &refChecks{caseSensitiveEnum: true, known: map[string]bool{}}
}

// read parses one reference key; it reports whether the key was one.
func (r *refChecks) read(key string, v any) ([]evaluator.FieldError, bool) {
	var problems []evaluator.FieldError
	bad := func(field, code, msg string) {
		problems = append(problems, evaluator.FieldError{Field: field, Code: code, Message: msg})
	}
	boolean := func() bool {
		b, ok := v.(bool)
		if !ok {
			bad(key, "type", "must be a boolean")
		}
		return b
	}
	switch key {
	case "required_fields":
		list, ok := v.([]any)
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
			r.required = append(r.required, segs)
			r.requiredNames = append(r.requiredNames, p)
			r.known[p] = true
		}
		r.active = true
	case "allow_null_required":
		r.allowNullRequired = boolean()
	case "case_sensitive_enums":
		r.caseSensitiveEnum = boolean()
	case "allow_extra_fields":
		r.extraCheck = !boolean()
		r.active = r.active || r.extraCheck
	case "pattern_match_logic":
		s, _ := v.(string)
		if s != "all" && s != "any" {
			bad(key, "enum", "must be one of all, any")
		}
		r.patternsAny = s == "any"
	case "field_constraints":
		m, ok := v.(map[string]any)
		if !ok {
			bad(key, "type", "must be an object of field path to constraints")
			break
		}
		for _, p := range sortedKeys(m) {
			field := joinPath(key, p)
			segs, ok := splitPath(p)
			c, isObj := m[p].(map[string]any)
			if !ok || !isObj || len(c) == 0 {
				bad(field, "invalid", "must be a field path with an object of min, max, enum, min_length, max_length")
				continue
			}
			rc := refConstraint{path: segs, name: p}
			for _, k := range sortedKeys(c) {
				switch k {
				case "min", "max":
					f, ok := evaluator.Number(c[k])
					if !ok {
						bad(field+"."+k, "type", "must be a number")
						continue
					}
					if k == "min" {
						rc.min = &f
					} else {
						rc.max = &f
					}
				case "min_length", "max_length":
					f, ok := evaluator.Number(c[k])
					if !ok || f < 0 || f != math.Trunc(f) {
						bad(field+"."+k, "type", "must be a whole number, 0 or more")
						continue
					}
					n := int(f)
					if k == "min_length" {
						rc.minLen = &n
					} else {
						rc.maxLen = &n
					}
				case "enum":
					l, ok := c[k].([]any)
					if !ok || len(l) == 0 {
						bad(field+"."+k, "type", "must be a non-empty list of values")
						continue
					}
					rc.enum = l
				default:
					bad(field+"."+k, "unknown_field", "is not a known constraint (min, max, enum, min_length, max_length)")
				}
			}
			r.constraints = append(r.constraints, rc)
		}
		r.active = true
	case "field_patterns":
		m, ok := v.(map[string]any)
		if !ok {
			bad(key, "type", "must be an object of field path to pattern")
			break
		}
		for _, p := range sortedKeys(m) {
			field := joinPath(key, p)
			segs, ok := splitPath(p)
			if !ok {
				bad(field, "invalid_path", badPath)
				continue
			}
			pattern, ignoreCase, ok := patternSpec(m[p])
			if !ok {
				bad(field, "type", `must be a pattern or {"pattern": ..., "flags": [...]}`)
				continue
			}
			if ignoreCase {
				pattern = "(?i)" + pattern
			}
			re, err := regexp.Compile(pattern)
			if err != nil {
				bad(field, "invalid_regex", "is not a valid RE2 regular expression")
				continue
			}
			r.patterns = append(r.patterns, refPattern{path: segs, name: p, re: re})
		}
		r.active = true
	default:
		return nil, false
	}
	return problems, true
}

// patternSpec reads a field_patterns entry: a string, or {"pattern": s, "flags": [...]}.
func patternSpec(v any) (pattern string, ignoreCase, ok bool) {
	switch x := v.(type) {
	case string:
		return x, false, x != ""
	case map[string]any:
		p, _ := x["pattern"].(string)
		if p == "" {
			return "", false, false
		}
		if flags, present := x["flags"]; present {
			list, isList := flags.([]any)
			if !isList {
				return "", false, false
			}
			for _, f := range list {
				s, _ := f.(string)
				if strings.EqualFold(s, "IGNORECASE") || s == "i" {
					ignoreCase = true
				}
			}
		}
		return p, ignoreCase, true
	}
	return "", false, false
}

// lookupPath follows a field path through objects.
func lookupPath(v any, path []string) (any, bool) {
	for _, seg := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return v, true
}

// check runs the reference checks on a decoded value.
func (r *refChecks) check(v any) []Violation {
	if !r.active {
		return nil
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return []Violation{{"", "type"}}
	}
	var out []Violation
	for i, segs := range r.required {
		val, found := lookupPath(obj, segs)
		if !found || (val == nil && !r.allowNullRequired) {
			out = append(out, Violation{r.requiredNames[i], "required"})
		}
	}
	for _, c := range r.constraints {
		out = append(out, c.check(obj, r.caseSensitiveEnum)...)
	}
	out = append(out, r.checkPatterns(obj)...)
	if r.extraCheck {
		var extra []string
		leafPaths(obj, "", &extra)
		for _, p := range extra {
			if !r.known[p] {
				out = append(out, Violation{cut(p), "additionalProperties"})
			}
		}
	}
	return out
}

func (c *refConstraint) check(obj map[string]any, caseSensitive bool) []Violation {
	val, found := lookupPath(obj, c.path)
	if !found {
		return []Violation{{c.name, "required"}}
	}
	if c.min != nil || c.max != nil {
		f, ok := jsonNumber(val)
		if !ok {
			return []Violation{{c.name, "type"}}
		}
		if c.min != nil && f < *c.min {
			return []Violation{{c.name, "minimum"}}
		}
		if c.max != nil && f > *c.max {
			return []Violation{{c.name, "maximum"}}
		}
	}
	if c.enum != nil && !enumHas(c.enum, val, caseSensitive) {
		return []Violation{{c.name, "enum"}}
	}
	if c.minLen != nil || c.maxLen != nil {
		s, ok := val.(string)
		if !ok {
			return []Violation{{c.name, "type"}}
		}
		n := len([]rune(s))
		if c.minLen != nil && n < *c.minLen {
			return []Violation{{c.name, "minLength"}}
		}
		if c.maxLen != nil && n > *c.maxLen {
			return []Violation{{c.name, "maxLength"}}
		}
	}
	return nil
}

func enumHas(enum []any, val any, caseSensitive bool) bool {
	for _, e := range enum {
		if es, ok := e.(string); ok {
			if vs, ok := val.(string); ok && (es == vs || (!caseSensitive && strings.EqualFold(es, vs))) {
				return true
			}
			continue
		}
		if ef, ok := evaluator.Number(e); ok {
			if vf, ok := jsonNumber(val); ok && ef == vf {
				return true
			}
			continue
		}
		if e == val {
			return true
		}
	}
	return false
}

func (r *refChecks) checkPatterns(obj map[string]any) []Violation {
	if len(r.patterns) == 0 {
		return nil
	}
	var failures []Violation
	matched := 0
	for _, p := range r.patterns {
		val, found := lookupPath(obj, p.path)
		if !found {
			failures = append(failures, Violation{p.name, "required"})
			continue
		}
		if p.re.MatchString(textOf(val)) {
			matched++
		} else {
			failures = append(failures, Violation{p.name, "pattern"})
		}
	}
	if r.patternsAny {
		if matched > 0 {
			return nil
		}
		return failures
	}
	return failures
}

// textOf is the text a pattern is searched in: strings as they are, numbers and booleans as text.
func textOf(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	}
	return fmt.Sprint(v)
}

// jsonNumber reads a decoded JSON number (float64, or json.Number from the schema library's decoder).
func jsonNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// leafPaths collects the dotted paths of the leaves of an object (values that are not objects).
func leafPaths(obj map[string]any, prefix string, out *[]string) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := joinPath(prefix, k)
		if m, ok := obj[k].(map[string]any); ok {
			leafPaths(m, p, out)
			continue
		}
		*out = append(*out, p)
	}
}
