package server

import (
	"fmt"
	"reflect"
	"testing"
)

// TestJSONEvaluatorConfigStoredCanonical: a json evaluator config saved with guard's name for its schema
// (PUT /controls, PUT /controls/{id}/data) reads back in the one stored form — json_schema with the draft
// explicit — and evaluates as written; one saved with the reference's names reads back as written.
func TestJSONEvaluatorConfigStoredCanonical(t *testing.T) {
	ts := newTS(t)
	control := func(cfg map[string]any) map[string]any {
		return map[string]any{
			"condition": map[string]any{"selector": map[string]any{"path": "input"}, "evaluator": map[string]any{"name": "json", "config": cfg}},
			"action":    map[string]any{"decision": "deny"},
		}
	}
	// prefixItems exists in draft 2020-12 only: the stored form must keep that draft.
	written := map[string]any{"schema": map[string]any{"type": "array", "prefixItems": []any{map[string]any{"type": "string"}}}}
	stored := map[string]any{"json_schema": map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array", "prefixItems": []any{map[string]any{"type": "string"}}}}
	reference := map[string]any{"required_fields": []any{"to"}, "field_constraints": map[string]any{"amount": map[string]any{"max": 100.0}}}

	readConfig := func(id int64) map[string]any {
		t.Helper()
		data := ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d/data", id), nil)["data"].(map[string]any)
		return data["condition"].(map[string]any)["evaluator"].(map[string]any)["config"].(map[string]any)
	}
	id := ts.createControl("json-guard-names", control(written))
	if got := readConfig(id); !reflect.DeepEqual(got, stored) {
		t.Fatalf("after PUT /controls: config %v, want %v", got, stored)
	}
	ts.ok(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", id), map[string]any{"data": control(reference)})
	if got := readConfig(id); !reflect.DeepEqual(got, reference) {
		t.Fatalf("reference names: config %v, want them as written %v", got, reference)
	}
	ts.ok(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", id), map[string]any{"data": control(written)})
	if got := readConfig(id); !reflect.DeepEqual(got, stored) {
		t.Fatalf("after PUT /controls/{id}/data: config %v, want %v", got, stored)
	}

	agent := "json-canonical-agent"
	ts.initAgent(agent)
	ts.link(agent, id)
	for _, c := range []struct {
		input any
		want  string
	}{
		{[]any{1.0, "x"}, "deny"}, // the first item must be a string (prefixItems, draft 2020-12)
		{[]any{"a", 1.0}, "allow"},
	} {
		r := ts.do("POST", "/api/v1/evaluation", map[string]any{"agent_name": agent, "stage": "pre",
			"step": map[string]any{"type": "tool", "name": "t", "input": c.input}})
		if r.Code != 200 {
			t.Fatalf("evaluation: %d %s", r.Code, r.Body)
		}
		if got := decision(r.obj(t)); got != c.want {
			t.Fatalf("input %v: decision %s, want %s", c.input, got, c.want)
		}
	}
}
