package jsonvalidate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// FuzzConfigAndData builds configs from an arbitrary JSON config text and checks arbitrary data with
// them: an error or a result, never a panic.
func FuzzConfigAndData(f *testing.F) {
	f.Add(`{"json_schema":{"type":"object"}}`, `{"a":1}`)
	f.Add(`{"field_patterns":{"a":"^x"},"pattern_match_logic":"any"}`, `{"a":"xy"}`)
	f.Add(`{"field_constraints":{"a":{"enum":["A"]}},"case_sensitive_enums":false,"allow_extra_fields":false}`, `{"a":"a","b":[1]}`)
	f.Add(`{"required_fields":["a.b"],"allow_null_required":true}`, `not json`)
	r := evaluator.NewRegistry()
	r.Register(Factory())
	f.Fuzz(func(t *testing.T, cfgText, data string) {
		var cfg map[string]any
		if json.Unmarshal([]byte(cfgText), &cfg) != nil {
			return
		}
		b, err := r.Build(Name, cfg)
		if err != nil {
			return
		}
		if _, err := b.Evaluator.Evaluate(context.Background(), &evaluator.Data{Value: data, Text: data}); err != nil {
			t.Fatal(err)
		}
	})
}
