package templates

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// Problem codes of parameter problems, beyond the control language's (required, type, enum, empty,
// invalid_regex, unknown_field).
const (
	CodeMinimum = "minimum"
	CodeMaximum = "maximum"
)

// accept checks a value given for p and returns it in the form it renders as: string, []any of strings,
// bool or json.Number. Problems are at "" (the caller prefixes the parameter's path); messages never repeat
// the value. reg decides how a regex compiles (nil: evaluator.Default).
func (p *Parameter) accept(v any, reg *evaluator.Registry) (any, []guard.Problem) {
	bad := func(code, msg string) (any, []guard.Problem) {
		return nil, []guard.Problem{{Code: code, Message: msg}}
	}
	switch p.Type {
	case TypeString, TypeRegex, TypeEnum:
		s, ok := v.(string)
		if !ok {
			return bad(guard.CodeType, "must be a string")
		}
		if strings.TrimSpace(s) == "" {
			return bad(guard.CodeRequired, "must not be empty")
		}
		if p.Type == TypeEnum && !slices.Contains(p.Values, s) {
			return bad(guard.CodeEnum, "must be one of "+strings.Join(p.Values, ", "))
		}
		if p.Type == TypeRegex {
			if msg := regexProblem(s, reg); msg != "" {
				return bad(guard.CodeInvalidRegex, msg)
			}
		}
		return s, nil
	case TypeStringList:
		items, ok := v.([]any)
		if !ok {
			if ss, isStrings := v.([]string); isStrings {
				for _, s := range ss {
					items = append(items, s)
				}
				ok = true
			}
		}
		if !ok {
			return bad(guard.CodeType, "must be a list of strings")
		}
		if len(items) == 0 {
			return bad(guard.CodeEmpty, "must have at least one item")
		}
		out := make([]any, 0, len(items))
		for i, item := range items {
			s, ok := item.(string)
			switch {
			case !ok:
				return bad(guard.CodeType, fmt.Sprintf("item %d must be a string", i))
			case strings.TrimSpace(s) == "":
				return bad(guard.CodeEmpty, fmt.Sprintf("item %d must not be empty", i))
			case len(p.Values) > 0 && !slices.Contains(p.Values, s):
				return bad(guard.CodeEnum, fmt.Sprintf("item %d must be one of %s", i, strings.Join(p.Values, ", ")))
			}
			out = append(out, s)
		}
		return out, nil
	case TypeBoolean:
		b, ok := v.(bool)
		if !ok {
			return bad(guard.CodeType, "must be a boolean")
		}
		return b, nil
	case TypeNumber:
		f, ok := number(v)
		if !ok {
			return bad(guard.CodeType, "must be a number")
		}
		if p.Minimum != nil && f < *p.Minimum {
			return bad(CodeMinimum, "must be at least "+formatNumber(*p.Minimum))
		}
		if p.Maximum != nil && f > *p.Maximum {
			return bad(CodeMaximum, "must be at most "+formatNumber(*p.Maximum))
		}
		return json.Number(formatNumber(f)), nil
	}
	return bad(guard.CodeType, "has an unknown type")
}

// number reads a JSON number as decoded by encoding/json (float64 or json.Number) or a Go number.
func number(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int:
		f = float64(x)
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// regexProblem compiles pattern with the rules of reg's regex evaluator (RE2, or its backtracking engine
// for look-around and back-references), so a parameter is accepted exactly when the control will compile.
// Without a regex evaluator it falls back to RE2. The message names the kind of error, never the pattern.
func regexProblem(pattern string, reg *evaluator.Registry) string {
	if reg == nil {
		reg = evaluator.Default
	}
	if _, ok := reg.Lookup("regex"); ok {
		err := reg.Validate("regex", map[string]any{"pattern": pattern})
		if err == nil {
			return ""
		}
		var ce *evaluator.ConfigError
		if errors.As(err, &ce) && len(ce.Problems) > 0 {
			return ce.Problems[0].Message
		}
		return "is not a valid regular expression"
	}
	if _, err := regexp.Compile(pattern); err != nil {
		return "is not a valid regular expression"
	}
	return ""
}

// ParseSetting reads the text of a command-line setting (`--set name=value`) as a value of p's type: a
// string list is a JSON list (`["a","b"]`) or comma-separated items, a boolean is true or false, a number
// is a decimal number; other types take the text as it is. The value is then checked like one given as
// JSON (Render). A text that does not read as the type is returned as is, so Render reports the problem.
func (p *Parameter) ParseSetting(text string) any {
	switch p.Type {
	case TypeStringList:
		if strings.HasPrefix(strings.TrimSpace(text), "[") {
			var list []any
			if err := json.Unmarshal([]byte(text), &list); err == nil {
				return list
			}
			return text
		}
		var out []any
		for _, item := range strings.Split(text, ",") {
			out = append(out, strings.TrimSpace(item))
		}
		return out
	case TypeBoolean:
		if b, err := strconv.ParseBool(text); err == nil {
			return b
		}
	case TypeNumber:
		if f, err := strconv.ParseFloat(strings.TrimSpace(text), 64); err == nil {
			return f
		}
	default:
		return text
	}
	return text
}
