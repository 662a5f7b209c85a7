package server

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/guardrail-control/guard/server/problem"
)

// TestInitAgentToolsIsSteps: tools is another name of steps; giving both is a 422 on tools, and a bad
// step under tools is named under tools.
func TestInitAgentToolsIsSteps(t *testing.T) {
	ts := newTS(t)
	ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "tools-agent"},
		"tools": []map[string]any{{"type": "tool", "name": "search"}, {"type": "llm", "name": "chat"}}})
	steps := ts.ok(200, "GET", "/api/v1/agents/tools-agent", nil)["steps"].([]any)
	if len(steps) != 2 || steps[0].(map[string]any)["name"] != "search" {
		t.Fatalf("steps registered under tools: %v", steps)
	}
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
		code  string
	}{
		{"both", map[string]any{"agent": map[string]any{"agent_name": "tools-agent"}, "steps": []any{}, "tools": []any{}}, "tools", "conflict"},
		{"bad tool", map[string]any{"agent": map[string]any{"agent_name": "tools-agent"}, "tools": []map[string]any{{"type": "tool"}}}, "tools.0.name", "required"},
	} {
		p := ts.expectProblem(422, problem.CodeValidation, "POST", "/api/v1/agents/initAgent", tc.body)
		if len(p.Errors) != 1 || p.Errors[0].Field != tc.field || p.Errors[0].Code != tc.code {
			t.Errorf("%s: %+v, want one %s on %s", tc.name, p.Errors, tc.code, tc.field)
		}
	}
}

// TestInitAgentOverwriteChanges: initAgent says what it changed, in the reference's terms.
func TestInitAgentOverwriteChanges(t *testing.T) {
	ts := newTS(t)
	type step = map[string]any
	init := func(mode string, desc string, steps ...step) map[string]any {
		return ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "ch-agent", "agent_description": desc},
			"steps": steps, "conflict_mode": mode})
	}
	keys := func(m map[string]any, k string) []string {
		var out []string
		for _, e := range m["overwrite_changes"].(map[string]any)[k].([]any) {
			out = append(out, e.(map[string]any)["type"].(string)+"/"+e.(map[string]any)["name"].(string))
		}
		return out
	}
	first := init("strict", "a", step{"type": "llm", "name": "chat"}, step{"type": "tool", "name": "search"})
	if first["overwrite_applied"] != false || !reflect.DeepEqual(keys(first, "steps_added"), []string{"llm/chat", "tool/search"}) {
		t.Fatalf("creation: %v", first)
	}
	over := init("overwrite", "b", step{"type": "llm", "name": "chat", "description": "new"}, step{"type": "tool", "name": "shell"})
	ch := over["overwrite_changes"].(map[string]any)
	if over["overwrite_applied"] != true || ch["metadata_changed"] != true || !reflect.DeepEqual(keys(over, "steps_added"), []string{"tool/shell"}) ||
		!reflect.DeepEqual(keys(over, "steps_updated"), []string{"llm/chat"}) || !reflect.DeepEqual(keys(over, "steps_removed"), []string{"tool/search"}) {
		t.Fatalf("overwrite: %v", over)
	}
	for _, k := range []string{"evaluators_added", "evaluators_updated", "evaluators_removed", "evaluator_removals"} {
		if l, ok := ch[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s = %v, want []", k, ch[k])
		}
	}
	same := init("overwrite", "b", step{"type": "llm", "name": "chat", "description": "new"}, step{"type": "tool", "name": "shell"})
	if same["overwrite_applied"] != false || same["overwrite_changes"].(map[string]any)["metadata_changed"] != false || len(keys(same, "steps_added")) != 0 {
		t.Fatalf("an identical registration: %v", same)
	}
}

// TestControlDataReadIsWritable: control data as the answers write it (the reference's full form, with
// nulls) is accepted back unchanged; a template other than null is a 422 naming data.template.
func TestControlDataReadIsWritable(t *testing.T) {
	ts := newTS(t)
	data := regexData("x", "steer")
	data["action"].(map[string]any)["steering_context"] = map[string]any{"message": "m"}
	data["condition"] = map[string]any{"and": []any{data["condition"], map[string]any{"not": data["condition"]}}}
	id := ts.createControl("round-trip", data)
	path := fmt.Sprintf("/api/v1/controls/%d", id)
	read := ts.ok(200, "GET", path, nil)["data"].(map[string]any)
	for _, k := range []string{"template", "template_values"} {
		if v, ok := read[k]; !ok || v != nil {
			t.Fatalf("%s: %v %v, want null", k, v, ok)
		}
	}
	leaf := read["condition"].(map[string]any)["and"].([]any)[0].(map[string]any)
	if v, ok := leaf["and"]; !ok || v != nil || leaf["not"] != nil {
		t.Fatalf("a leaf's other shapes must be null: %v", leaf)
	}
	ts.ok(200, "PUT", path+"/data", map[string]any{"data": read})
	again := ts.ok(200, "GET", path, nil)["data"].(map[string]any)
	if !reflect.DeepEqual(again, read) {
		t.Fatalf("written back, the data changed:\n%v\n%v", read, again)
	}
	read["template"] = map[string]any{"parameters": map[string]any{}}
	p := ts.expectProblem(422, problem.CodeValidation, "PUT", path+"/data", map[string]any{"data": read})
	if len(p.Errors) != 1 || p.Errors[0].Field != "data.template" {
		t.Fatalf("a template: %+v", p.Errors)
	}
}
