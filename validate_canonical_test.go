package guard_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/guardrail-control/guard"
	_ "github.com/guardrail-control/guard/evaluator/jsonvalidate"
)

// TestParseControlDataStoresCanonicalEvaluatorConfig: control data keeps one form of an evaluator config
// whichever accepted spelling was written (the json evaluator's schema is stored as json_schema with its
// draft explicit), in nested conditions too, and parsing the stored form again changes nothing.
func TestParseControlDataStoresCanonicalEvaluatorConfig(t *testing.T) {
	leaf := func(cfg string) string {
		return `{"selector":{"path":"input"},"evaluator":{"name":"json","config":` + cfg + `}}`
	}
	canonical := `{"json_schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["to"]},"on_error":"allow"}`
	tests := []struct {
		name, cfg, want string
	}{
		{"guard's name", `{"schema":{"type":"object","required":["to"]},"on_error":"allow"}`, canonical},
		{"the reference's name with the draft", canonical, canonical},
		{"the reference's name keeps its own default draft", `{"json_schema":{"type":"object"}}`, `{"json_schema":{"type":"object"}}`},
		{"field names as written", `{"required_fields":["to"],"constraints":{"amount":{"max":5}}}`, `{"required_fields":["to"],"constraints":{"amount":{"max":5}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, shape := range []struct{ data, path string }{
				{`{"condition":` + leaf(tt.cfg) + `,"action":{"decision":"deny"}}`, "top"},
				{`{"condition":{"or":[` + leaf(tt.cfg) + `,` + leaf(tt.cfg) + `]},"action":{"decision":"deny"}}`, "or"},
			} {
				d, err := guard.ParseControlData([]byte(shape.data))
				if err != nil {
					t.Fatal(err)
				}
				leaves := []*guard.Condition{&d.Condition}
				if shape.path == "or" {
					leaves = []*guard.Condition{&d.Condition.Or[0], &d.Condition.Or[1]}
				}
				var want map[string]any
				if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
					t.Fatal(err)
				}
				for _, l := range leaves {
					if got := l.Evaluator.Config; !reflect.DeepEqual(got, want) {
						t.Fatalf("%s: config %v\nwant %v", shape.path, got, want)
					}
				}
				raw, err := json.Marshal(d)
				if err != nil {
					t.Fatal(err)
				}
				again, err := guard.ParseControlData(raw)
				if err != nil || !reflect.DeepEqual(again, d) {
					t.Fatalf("%s: the stored form parses to %+v (%v), want %+v", shape.path, again, err, d)
				}
			}
		})
	}
}
