package evaluator

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// thresholdSchema: at least one bound; the evaluator matches when the selected number satisfies every
// bound given.
const thresholdSchema = `{
  "type": "object",
  "properties": {
    "gt":  {"type": "number", "description": "Matches when the number is greater than this."},
    "gte": {"type": "number", "description": "Matches when the number is greater than or equal to this."},
    "lt":  {"type": "number", "description": "Matches when the number is less than this."},
    "lte": {"type": "number", "description": "Matches when the number is less than or equal to this."},
    "eq":  {"type": "number", "description": "Matches when the number equals this."}
  },
  "minProperties": 1,
  "additionalProperties": false
}`

// ThresholdFactory describes the built-in threshold evaluator: numbers against bounds, for counters and
// sums of session state (session.count.*, session.sum.*) as for numeric step fields.
func ThresholdFactory() Factory {
	return Factory{
		Name:         "threshold",
		Description:  "Matches when the selected number satisfies every bound given (gt, gte, lt, lte, eq). A value that is not a number never matches.",
		Version:      "1.0.0",
		ConfigSchema: []byte(thresholdSchema),
		New:          newThresholdFromConfig,
	}
}

// Threshold matches numbers against bounds.
type Threshold struct {
	bounds []bound
}

type bound struct {
	op string
	v  float64
}

var thresholdOps = []string{"gt", "gte", "lt", "lte", "eq"}

// Bound is one bound of a Threshold: Op is gt, gte, lt, lte or eq.
type Bound struct {
	Op    string
	Value float64
}

// Bounds returns the bounds of t, in the order gt, gte, lt, lte, eq: the engine derives from them the
// values an agent-wide counter may take without changing what t decides (the check of a commit).
func (t *Threshold) Bounds() []Bound {
	out := make([]Bound, len(t.bounds))
	for i, b := range t.bounds {
		out[i] = Bound{Op: b.op, Value: b.v}
	}
	return out
}

func newThresholdFromConfig(config map[string]any, _ Options) (Evaluator, error) {
	t := &Threshold{}
	for _, op := range thresholdOps {
		raw, ok := config[op]
		if !ok || raw == nil {
			continue
		}
		f, ok := toFloat(raw)
		if !ok {
			return nil, FieldError{Field: op, Code: "type", Message: "must be a finite number"}
		}
		t.bounds = append(t.bounds, bound{op, f})
	}
	if len(t.bounds) == 0 {
		return nil, FieldError{Code: "required", Message: "must give at least one of gt, gte, lt, lte, eq"}
	}
	return t, nil
}

func toFloat(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, false
		}
	case string: // a number given as text ("12.5"), as some step fields carry amounts
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

// Evaluate implements Evaluator.
func (t *Threshold) Evaluate(_ context.Context, d *Data) (Result, error) {
	if d == nil || d.IsNull() {
		return Result{Confidence: 1}, nil
	}
	n, ok := toFloat(d.Value)
	if !ok {
		return Result{Confidence: 1}, nil
	}
	for _, b := range t.bounds {
		var in bool
		switch b.op {
		case "gt":
			in = n > b.v
		case "gte":
			in = n >= b.v
		case "lt":
			in = n < b.v
		case "lte":
			in = n <= b.v
		case "eq":
			in = n == b.v
		}
		if !in {
			return Result{Confidence: 1}, nil
		}
	}
	return Result{Matched: true, Confidence: 1, Message: fmt.Sprintf("%g is beyond the threshold", n)}, nil
}
