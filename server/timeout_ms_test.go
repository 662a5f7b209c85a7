package server

import (
	"testing"
)

// TestTimeoutMSMaximum: timeout_ms is at most 10 s for built-in evaluators (GET /evaluators shows the
// maximum); past it a control is a 422 naming the field.
func TestTimeoutMSMaximum(t *testing.T) {
	ts := newTS(t)
	m := ts.ok(200, "GET", "/api/v1/evaluators", nil)
	for _, e := range evaluatorValues(t, m) {
		e := e.(map[string]any)
		if e["name"] != "regex" && e["name"] != "list" {
			continue
		}
		props := e["config_schema"].(map[string]any)["properties"].(map[string]any)
		if max := props["timeout_ms"].(map[string]any)["maximum"]; max != 10000.0 {
			t.Errorf("%s: timeout_ms maximum %v", e["name"], max)
		}
	}
	tests := []struct {
		timeout float64
		status  int
	}{{10000, 200}, {10001, 422}, {300000, 422}}
	for i, tt := range tests {
		data := regexData("a", "deny")
		data["condition"].(map[string]any)["evaluator"].(map[string]any)["config"].(map[string]any)["timeout_ms"] = tt.timeout
		r := ts.do("PUT", "/api/v1/controls", map[string]any{"name": "t" + string(rune('a'+i)), "data": data})
		if r.Code != tt.status {
			t.Fatalf("timeout_ms %v: status %d: %s", tt.timeout, r.Code, r.Body)
		}
		if tt.status == 422 {
			b := r.problem(t)
			if len(b.Errors) != 1 || b.Errors[0].Field != "data.condition.evaluator.config.timeout_ms" {
				t.Fatalf("errors %+v", b.Errors)
			}
		}
	}
}
