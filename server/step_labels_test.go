package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/store/storetest"
)

// labelGate denies a step of a session that holds both private and egress: a session control keyed
// on labels that only the agent's step schemas declare.
const labelGate = `{"enabled": true, "scope": {"stages": ["pre"]},
  "condition": {"selector": {"path": "session.labels"}, "evaluator": {"name": "list", "config": {"values": ["private", "egress"], "logic": "all"}}},
  "action": {"decision": "deny"}}`

// TestStepSchemaLabels: labels registered with initAgent are stored, returned by GET agent, applied when
// the server evaluates the agent's steps, and follow a new registration (the engine is rebuilt).
func TestStepSchemaLabels(t *testing.T) {
	ts := newTS(t)
	ts.initAgent("bot",
		map[string]any{"type": "tool", "name": "read_db", "labels": []string{"private"}},
		map[string]any{"type": "tool", "name": "post", "labels": []string{"egress"}},
		map[string]any{"type": "tool", "name": "plain"})
	got := ts.ok(200, "GET", "/api/v1/agents/bot", nil)
	steps := got["steps"].([]any)
	if l := steps[0].(map[string]any)["labels"]; len(l.([]any)) != 1 || l.([]any)[0] != "private" {
		t.Fatalf("GET agent: %v", got)
	}
	if _, has := steps[2].(map[string]any)["labels"]; has {
		t.Fatalf("a step without labels: %v", steps[2])
	}
	ts.link("bot", ts.createControl("gate", jsonMap(t, labelGate)))
	if d := decision(ts.sessionStep("bot", "read_db", "s1")); d != "allow" {
		t.Fatalf("read_db: %s", d)
	}
	res := ts.sessionStep("bot", "post", "s1")
	if decision(res) != "deny" || !strings.Contains(res["reason"].(string), "step 1 (read_db) added label private") {
		t.Fatalf("post after read_db: %v", res)
	}
	if d := decision(ts.sessionStep("bot", "post", "s2")); d != "allow" {
		t.Fatalf("post alone: %s", d)
	}

	// A registration without the labels (overwrite): the engine follows.
	ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "bot"}, "conflict_mode": "overwrite",
		"steps": []any{map[string]any{"type": "tool", "name": "read_db"}, map[string]any{"type": "tool", "name": "post", "labels": []string{"egress"}}}})
	ts.sessionStep("bot", "read_db", "s3")
	if d := decision(ts.sessionStep("bot", "post", "s3")); d != "allow" {
		t.Fatalf("read_db no longer private: post %s", d)
	}
	// A strict registration adding a labelled step: it counts at once.
	ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "bot"},
		"steps": []any{map[string]any{"type": "tool", "name": "read_mail", "labels": []string{"private"}}}})
	ts.sessionStep("bot", "read_mail", "s4")
	if d := decision(ts.sessionStep("bot", "post", "s4")); d != "deny" {
		t.Fatalf("post after read_mail: %s", d)
	}
	// remove_steps of a labelled step: it counts no more.
	ts.ok(200, "PATCH", "/api/v1/agents/bot", map[string]any{"remove_steps": []any{map[string]any{"type": "tool", "name": "read_mail"}}})
	ts.sessionStep("bot", "read_mail", "s5")
	if d := decision(ts.sessionStep("bot", "post", "s5")); d != "allow" {
		t.Fatalf("post after a removed read_mail: %s", d)
	}
}

// TestStepSchemaLabelsBadInput: a malformed labels value is a 422 naming the field; unknown fields of a
// step are still ignored.
func TestStepSchemaLabelsBadInput(t *testing.T) {
	ts := newTS(t)
	many := make([]string, 33)
	for i := range many {
		many[i] = "l" + strings.Repeat("x", i)
	}
	for _, tc := range []struct {
		name   string
		labels any
		field  string
	}{
		{"not a list", "egress", "steps.0.labels"},
		{"not strings", []any{1}, "steps.0.labels.0"},
		{"empty label", []string{""}, "steps.0.labels.0"},
		{"bad characters", []string{"ok", "no spaces"}, "steps.0.labels.1"},
		{"too long", []string{strings.Repeat("a", 65)}, "steps.0.labels.0"},
		{"too many", many, "steps.0.labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ts.expectProblem(422, "VALIDATION_ERROR", "POST", "/api/v1/agents/initAgent", map[string]any{
				"agent": map[string]any{"agent_name": "bad"}, "steps": []any{map[string]any{"type": "tool", "name": "x", "labels": tc.labels}}})
			found := false
			for _, e := range p.Errors {
				found = found || e.Field == tc.field
			}
			if !found {
				t.Fatalf("want a problem at %s: %+v", tc.field, p.Errors)
			}
		})
	}
	ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "lenient"},
		"steps": []any{map[string]any{"type": "tool", "name": "x", "labels": []string{"egress"}, "future_field": true}}})
}

func jsonMap(t *testing.T, raw string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReplayAppliesStepSchemaLabels: replaying a draft session control over captured steps gives the
// steps the labels the agent's step schemas declare, as the live evaluation does: the label gate added
// as a draft denies the captured post that followed a read of the same session.
func TestReplayAppliesStepSchemaLabels(t *testing.T) {
	st := storetest.SQLite(t)
	ts, rec := captureTS(t, st, []string{"bot"})
	ts.initAgent("bot",
		map[string]any{"type": "tool", "name": "read_db", "labels": []string{"private"}},
		map[string]any{"type": "tool", "name": "post", "labels": []string{"egress"}})
	ts.link("bot", ts.createControl("nothing", regexData("nothing-matches-this", "deny")))
	ts.sessionStep("bot", "read_db", "s1")
	ts.sessionStep("bot", "post", "s1")
	ts.sessionStep("bot", "post", "s2")
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := ts.ok(200, "POST", "/api/v1/controls/replay", map[string]any{"agent_name": "bot",
		"controls": []any{map[string]any{"name": "label-gate", "data": jsonMap(t, labelGate)}}})
	res := r["result"].(map[string]any)
	if res["steps_replayed"] != 3.0 || res["steps_changed"] != 1.0 {
		t.Fatalf("replay %v", res)
	}
	if ch := res["changes"].(map[string]any); ch["allow_to_deny"] != 1.0 {
		t.Fatalf("changes %v", ch)
	}
}
