package server

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/guardrail-control/guard/server/problem"
)

// TestTryControl: POST /controls/try evaluates a draft on one step and answers the engine's result as
// POST /evaluation does; nothing is stored.
func TestTryControl(t *testing.T) {
	ts := newTS(t)
	step := func(input any) map[string]any { return map[string]any{"type": "llm", "name": "chat", "input": input} }
	disabled := regexData(`\d{3}`, "deny", "pre")
	disabled["enabled"] = false
	sdk := regexData(`\d{3}`, "warn", "pre")
	sdk["execution"] = "sdk"
	cases := []struct {
		name     string
		data     map[string]any
		stage    string
		input    any
		decision string
		matches  int
	}{
		{"deny matches", regexData(`\d{3}`, "deny"), "pre", "call 555-1234", "deny", 1},
		{"no match allows", regexData(`\d{3}`, "deny"), "pre", "hello", "allow", 0},
		{"steer", regexData(`refund`, "steer"), "pre", "a refund please", "steer", 1},
		{"observe reads back as written", regexData(`x`, "observe"), "pre", "x", "allow", 1},
		{"out of the draft's stages", regexData(`\d{3}`, "deny", "post"), "pre", "555", "allow", 0},
		{"a disabled draft is still tried", disabled, "pre", "555", "deny", 1},
		{"an sdk draft is still tried", sdk, "pre", "555", "allow", 1}, // a warn match does not block
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := ts.ok(http.StatusOK, "POST", "/api/v1/controls/try", map[string]any{"data": c.data, "stage": c.stage, "step": step(c.input)})
			matches, _ := res["matches"].([]any)
			if got := decision(res); got != c.decision || len(matches) != c.matches {
				t.Fatalf("result = %v, want decision %s with %d match(es)", res, c.decision, c.matches)
			}
			if c.matches > 0 {
				m := matches[0].(map[string]any)
				if m["control_id"] != float64(0) || m["control_name"] != "draft" {
					t.Fatalf("the draft's match = %v", m)
				}
			}
		})
	}
	// An evaluator error shows as the engine reports it (a regex too slow, a bad selector path...): here
	// a step without the selected field is simply not matched.
	res := ts.ok(http.StatusOK, "POST", "/api/v1/controls/try", map[string]any{"data": regexData(`x`, "deny"), "stage": "post", "step": map[string]any{"type": "tool", "name": "t"}})
	if decision(res) != "allow" {
		t.Fatalf("no input: %v", res)
	}

	// Nothing was stored: no control, no event.
	list := ts.ok(http.StatusOK, "GET", "/api/v1/controls", nil)
	if pg, _ := list["pagination"].(map[string]any); pg["total"] != float64(0) {
		t.Fatalf("controls after trying: %v", list)
	}
}

func TestTryControlRejectsBadRequests(t *testing.T) {
	ts := newTS(t)
	good := regexData("x", "deny")
	step := map[string]any{"type": "llm", "name": "chat", "input": "x"}
	cases := []struct {
		name   string
		body   any
		fields []string
	}{
		{"no data", map[string]any{"stage": "pre", "step": step}, []string{"data"}},
		{"bad pattern", map[string]any{"data": regexData("(", "deny"), "stage": "pre", "step": step}, []string{"data.condition.evaluator.config.pattern"}},
		{"unknown evaluator", map[string]any{"data": map[string]any{"condition": map[string]any{"selector": map[string]any{"path": "input"},
			"evaluator": map[string]any{"name": "nope"}}, "action": map[string]any{"decision": "deny"}}, "stage": "pre", "step": step}, []string{"data.condition.evaluator.name"}},
		{"bad stage", map[string]any{"data": good, "stage": "later", "step": step}, []string{"stage"}},
		{"no step", map[string]any{"data": good, "stage": "pre"}, []string{"step"}},
		{"nameless step", map[string]any{"data": good, "stage": "pre", "step": map[string]any{"type": "llm"}}, []string{"step.name"}},
		{"everything at once", map[string]any{"stage": "x"}, []string{"data", "stage", "step"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := ts.expectProblem(http.StatusUnprocessableEntity, problem.CodeValidation, "POST", "/api/v1/controls/try", c.body)
			var got []string
			for _, e := range p.Errors {
				got = append(got, e.Field)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.fields) {
				t.Fatalf("problem fields = %v, want %v (%+v)", got, c.fields, p)
			}
		})
	}
	ts.expectProblem(http.StatusBadRequest, problem.CodeInvalidJSON, "POST", "/api/v1/controls/try", `{"data":`)
}
