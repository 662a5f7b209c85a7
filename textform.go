package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/guardrail-control/guard/internal/jsonstr"
)

// Limits on the text form of selected non-string data. Deeper or larger data is not turned into text:
// every leaf that selects it gets an evaluator error (handled by its on_error setting), so that an
// arbitrarily large or deeply nested step payload can neither exhaust memory nor recurse without bound.
// Strings are passed to evaluators as they are and are not limited here.
const (
	// MaxSelectedDepth is the deepest nesting of arrays and objects in selected data.
	MaxSelectedDepth = 1000
	// MaxSelectedTextBytes bounds the compact JSON text of selected non-string data.
	MaxSelectedTextBytes = 8 << 20
)

// Errors of the text form, reported as evaluator errors of the leaves that select the data.
var (
	errTooDeep  = fmt.Errorf("selected data is nested deeper than %d levels", MaxSelectedDepth)
	errTooLarge = fmt.Errorf("selected data is larger than %d bytes as JSON", MaxSelectedTextBytes)
	errNotJSON  = errors.New("selected data cannot be represented as JSON")
)

// errNeedsNormalizing is internal: the value holds Go types that must go through encoding/json first.
var errNeedsNormalizing = errors.New("needs normalizing")

// textForm returns the data an evaluator sees for a selected value: the value in decoded-JSON shape and
// its text (the string itself, or compact JSON with sorted object keys and no HTML escaping).
func textForm(v any) (value any, text string, err error) {
	switch x := v.(type) {
	case nil:
		return nil, "", nil
	case string:
		return v, x, nil
	}
	b, err := appendJSON(nil, v, 0)
	if err == errNeedsNormalizing {
		n, nerr := normalizeJSON(v)
		if nerr != nil {
			return nil, "", errNotJSON
		}
		if s, ok := n.(string); ok {
			return n, s, nil
		}
		v = n
		b, err = appendJSON(nil, v, 0)
	}
	if err != nil {
		return nil, "", err
	}
	if len(b) > MaxSelectedTextBytes {
		return nil, "", errTooLarge
	}
	return v, string(b), nil
}

// appendJSON appends the compact JSON of a decoded-JSON value, with sorted keys, as encoding/json with
// SetEscapeHTML(false) writes it.
func appendJSON(b []byte, v any, depth int) ([]byte, error) {
	if len(b) > MaxSelectedTextBytes {
		return nil, errTooLarge
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return jsonstr.Append(b, x, false), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case float64:
		return appendJSONFloat(b, x)
	case json.Number:
		if _, err := strconv.ParseFloat(string(x), 64); err != nil || x == "" {
			return nil, errNotJSON
		}
		return append(b, x...), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		if depth >= MaxSelectedDepth {
			return nil, errTooDeep
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		if depth >= MaxSelectedDepth {
			return nil, errTooDeep
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, k, false)
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, x[k], depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, errNeedsNormalizing
}

// appendJSONFloat formats f like encoding/json.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	b, ok := jsonstr.AppendFloat(b, f)
	if !ok {
		return nil, errNotJSON
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"
