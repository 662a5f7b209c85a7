package evaluator

import (
	"context"
	"encoding/json"
	"math"
	"testing"
)

func TestThreshold(t *testing.T) {
	tests := []struct {
		name    string
		config  map[string]any
		value   any
		matched bool
	}{
		{"gt above", map[string]any{"gt": 20.0}, 21.0, true},
		{"gt equal", map[string]any{"gt": 20.0}, 20.0, false},
		{"gte equal", map[string]any{"gte": 20.0}, 20.0, true},
		{"lt", map[string]any{"lt": 0.0}, -1.0, true},
		{"lte", map[string]any{"lte": 5.0}, 6.0, false},
		{"eq", map[string]any{"eq": 3.0}, 3.0, true},
		{"range inside", map[string]any{"gt": 1.0, "lt": 10.0}, 5.0, true},
		{"range outside", map[string]any{"gt": 1.0, "lt": 10.0}, 10.0, false},
		{"json number", map[string]any{"gt": 1.0}, json.Number("2.5"), true},
		{"numeric text", map[string]any{"gt": 1.0}, " 2.5 ", true},
		{"text", map[string]any{"gt": 1.0}, "many", false},
		{"null", map[string]any{"gt": -1.0}, nil, false},
		{"list", map[string]any{"gt": -1.0}, []any{1.0}, false},
		{"NaN", map[string]any{"lt": 1.0}, math.NaN(), false},
	}
	r := NewRegistry()
	RegisterBuiltins(r)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := r.Build("threshold", tc.config)
			if err != nil {
				t.Fatal(err)
			}
			res, err := b.Evaluator.Evaluate(context.Background(), &Data{Value: tc.value})
			if err != nil || res.Matched != tc.matched || res.Confidence != 1 {
				t.Fatalf("%+v %v, want matched %v", res, err, tc.matched)
			}
		})
	}
	for _, bad := range []map[string]any{{}, {"gt": "x"}, {"above": 1.0}} {
		if _, err := r.Build("threshold", bad); err == nil {
			t.Errorf("config %v accepted", bad)
		}
	}
}
