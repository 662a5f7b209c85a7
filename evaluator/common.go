package evaluator

import (
	"encoding/json"
	"math"
	"time"
)

// commonSettings are the config keys every evaluator accepts.
type commonSettings struct {
	OnError OnError
	Timeout time.Duration
}

// maxTimeout bounds timeout_ms so a control cannot hold a request for long.
const maxTimeout = 5 * time.Minute

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
			if !ok || f <= 0 || f != math.Trunc(f) || time.Duration(f)*time.Millisecond > maxTimeout {
				problems = append(problems, FieldError{Field: "timeout_ms", Code: "range", Message: "must be a whole number of milliseconds between 1 and 300000"})
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
