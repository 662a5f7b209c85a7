package evaluator

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// commonSettings are the config keys every evaluator accepts.
type commonSettings struct {
	OnError OnError
	Timeout time.Duration
}

// Upper bounds of timeout_ms: a control cannot hold an evaluation for long. Built-in evaluators work
// in-process and answer in microseconds unless a backtracking pattern runs away; external evaluators
// wait on the network. Both stay well below the server's write timeout (60 s), and an evaluation is
// bounded as a whole by its deadline anyway (guard.DefaultEvaluationTimeout).
const (
	MaxTimeout         = 10 * time.Second
	MaxExternalTimeout = 30 * time.Second
)

// maxTimeoutFor is the bound of timeout_ms for a built-in or an external evaluator.
func maxTimeoutFor(external bool) time.Duration {
	if external {
		return MaxExternalTimeout
	}
	return MaxTimeout
}

// splitCommon takes on_error and timeout_ms out of config, validating them, and returns the rest.
func splitCommon(config map[string]any, external bool) (commonSettings, map[string]any, []FieldError) {
	s := commonSettings{OnError: OnErrorDeny, Timeout: DefaultTimeout}
	if external {
		s.Timeout = DefaultExternalTimeout
	}
	var problems []FieldError
	rest := make(map[string]any, len(config))
	for k, v := range config {
		switch k {
		case "on_error":
			str, _ := v.(string)
			switch OnError(str) {
			case OnErrorDeny, OnErrorAllow:
				s.OnError = OnError(str)
			default:
				problems = append(problems, FieldError{Field: "on_error", Code: "enum", Message: "must be one of deny, allow"})
			}
		case "timeout_ms":
			f, ok := Number(v)
			limit := maxTimeoutFor(external)
			if !ok || f <= 0 || f != math.Trunc(f) || f > float64(limit.Milliseconds()) {
				problems = append(problems, FieldError{Field: "timeout_ms", Code: "range",
					Message: fmt.Sprintf("must be a whole number of milliseconds between 1 and %d", limit.Milliseconds())})
				continue
			}
			s.Timeout = time.Duration(f) * time.Millisecond
		default:
			rest[k] = v
		}
	}
	return s, rest, problems
}

// Number reads a numeric config value in any of the shapes a decoded or Go-built config may hold
// (float64, json.Number, int, int64). NaN is not a number here.
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n)
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// StringList reads a config value that must be a list of strings, in either shape a config may hold
// ([]string when built in Go, []any when decoded from JSON); ok is false for anything else.
func StringList(v any) (list []string, ok bool) {
	switch l := v.(type) {
	case []string:
		return l, true
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// AnyList is list as the []any of a decoded JSON value, for a schema's enum or a result's metadata (which
// hold JSON values, not Go slices).
func AnyList(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

// appendNewFields appends the problems of more whose field is not already reported in problems.
func appendNewFields(problems, more []FieldError) []FieldError {
outer:
	for _, m := range more {
		for _, p := range problems {
			if p.Field == m.Field {
				continue outer
			}
		}
		problems = append(problems, m)
	}
	return problems
}
