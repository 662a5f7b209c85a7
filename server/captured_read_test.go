package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
	"github.com/guardrail-control/guard/store/storetest"
)

// capturedFixture captures bot's steps (three evaluations: "first", "drop second" (denied), "third") and
// registers other, which is not captured. Every answer is validated against the OpenAPI document.
func capturedFixture(t *testing.T, opts ...Option) *tserver {
	t.Helper()
	st := storetest.SQLite(t)
	ts, rec := captureTS(t, st, []string{"bot"}, opts...)
	seedAgent(ts, "bot")
	seedAgent(ts, "other")
	for _, text := range []string{"first", "drop second", "third"} {
		evalText(ts, "bot", text)
	}
	evalText(ts, "other", "not captured")
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	v := newValidator(t)
	ts.onResponse = func(req *http.Request, r *resp) {
		_, pattern := ts.srv.mux.Handler(req)
		v.check(req, r, pattern)
	}
	return ts
}

// texts returns the input.text of each step of a GET /steps/captured answer, in order.
func texts(t *testing.T, m map[string]any) []string {
	t.Helper()
	var out []string
	for _, s := range m["steps"].([]any) {
		step := s.(map[string]any)["step"].(map[string]any)
		out = append(out, step["input"].(map[string]any)["text"].(string))
	}
	return out
}

func TestListCapturedStepsNewestFirstWithPayloads(t *testing.T) {
	ts := capturedFixture(t)
	m := ts.ok(200, "GET", "/api/v1/steps/captured?agent_name=%20BOT%20", nil)
	if got := strings.Join(texts(t, m), ","); got != "third,drop second,first" {
		t.Fatalf("steps %q, want newest first", got)
	}
	if m["agent_name"] != "bot" || m["limit"] != 20.0 || m["has_more"] != false {
		t.Errorf("answer %v", m)
	}
	s := m["steps"].([]any)[1].(map[string]any)
	if s["decision"] != "deny" || s["stage"] != "pre" || s["step_type"] != "tool" || s["step_name"] != "sql" ||
		s["source"] != "server" || s["agent_name"] != "bot" || s["id"] == nil || s["timestamp"] == nil {
		t.Errorf("step %v", s)
	}
	step := s["step"].(map[string]any)
	// Stored as redacted (GUARD_CAPTURE_REDACT), and answered so.
	if step["input"].(map[string]any)["password"] != "[REDACTED]" || step["context"].(map[string]any)["user_email"] != "[REDACTED]" ||
		step["context"].(map[string]any)["tenant"] != "t1" || step["type"] != "tool" || step["name"] != "sql" {
		t.Errorf("step payload %v", step)
	}

	m = ts.ok(200, "GET", "/api/v1/steps/captured?agent_name=bot&limit=2", nil)
	if got := strings.Join(texts(t, m), ","); got != "third,drop second" || m["has_more"] != true || m["limit"] != 2.0 {
		t.Errorf("limit 2: %q, %v", got, m)
	}
	// Filters: every step here is tool/sql at pre.
	for q, want := range map[string]int{"step_type=tool": 3, "step_type=llm": 0, "step_name=sql": 3, "step_name=chat": 0,
		"stage=pre": 3, "stage=post": 0, "step_type=tool&step_name=sql&stage=pre": 3} {
		if n := len(ts.ok(200, "GET", "/api/v1/steps/captured?agent_name=bot&"+q, nil)["steps"].([]any)); n != want {
			t.Errorf("%s: %d steps, want %d", q, n, want)
		}
	}
	future := url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339))
	past := url.QueryEscape(time.Now().Add(-time.Hour).Format(time.RFC3339))
	if n := len(ts.ok(200, "GET", "/api/v1/steps/captured?agent_name=bot&start_time="+future, nil)["steps"].([]any)); n != 0 {
		t.Errorf("start_time in the future: %d steps", n)
	}
	if n := len(ts.ok(200, "GET", "/api/v1/steps/captured?agent_name=bot&start_time="+past+"&end_time="+future, nil)["steps"].([]any)); n != 3 {
		t.Errorf("the last hour: %d steps", n)
	}
	// An agent that exists but is not captured has none: an empty list, not an error.
	if m := ts.ok(200, "GET", "/api/v1/steps/captured?agent_name=other", nil); len(m["steps"].([]any)) != 0 || m["has_more"] != false {
		t.Errorf("other: %v", m)
	}
}

func TestListCapturedStepsBadInput(t *testing.T) {
	ts := capturedFixture(t)
	long := strings.Repeat("x", 256)
	for _, tt := range []struct{ query, field, code string }{
		{"", "agent_name", "required"},
		{"agent_name=", "agent_name", "required"},
		{"agent_name=-bad name", "agent_name", "invalid"},
		{"agent_name=bot&stage=mid", "stage", "enum"},
		{"agent_name=bot&limit=0", "limit", "range"},
		{"agent_name=bot&limit=101", "limit", "range"},
		{"agent_name=bot&limit=ten", "limit", "range"},
		{"agent_name=bot&start_time=yesterday", "start_time", "format"},
		{"agent_name=bot&end_time=2026-13-01T00:00:00Z", "end_time", "format"},
		{"agent_name=bot&start_time=2026-01-02T00:00:00Z&end_time=2026-01-01T00:00:00Z", "start_time", "range"},
		{"agent_name=bot&step_type=" + long, "step_type", "max_length"},
		{"agent_name=bot&step_name=" + long, "step_name", "max_length"},
	} {
		b := ts.expectProblem(422, "VALIDATION_ERROR", "GET", "/api/v1/steps/captured?"+strings.ReplaceAll(tt.query, " ", "%20"), nil)
		if len(b.Errors) == 0 || b.Errors[0].Field != tt.field || b.Errors[0].Code != tt.code {
			t.Errorf("%q: errors %+v, want %s named with code %s", tt.query, b.Errors, tt.field, tt.code)
		}
	}
	b := ts.expectProblem(404, "AGENT_NOT_FOUND", "GET", "/api/v1/steps/captured?agent_name=ghost", nil)
	if len(b.Errors) != 1 || b.Errors[0].Field != "agent_name" || b.Errors[0].Code != "not_found" {
		t.Errorf("unknown agent: %+v", b.Errors)
	}
}

// The steps hold payloads: a runtime key (an agent's) cannot read them, an admin key can.
func TestListCapturedStepsNeedsTheAdminKey(t *testing.T) {
	ts := newTSOn(t, capturedFixture(t).st, WithAuth(true, []string{"runtime-key"}, []string{"admin-key"}))
	ts.expectProblem(401, problem.CodeAuthMissingKey, "GET", "/api/v1/steps/captured?agent_name=bot", nil)
	ts.expectProblem(403, problem.CodeAuthInsufficient, "GET", "/api/v1/steps/captured?agent_name=bot", nil, "X-API-Key", "runtime-key")
	if m := ts.ok(200, "GET", "/api/v1/steps/captured?agent_name=bot", nil, "X-API-Key", "admin-key"); len(m["steps"].([]any)) != 3 {
		t.Errorf("admin: %v", m)
	}
}

// An answer holds at most 8 MiB of step JSON (has_more says the rest is there), and a stored step that is
// not JSON (a hand-edited row) is answered by its type and name, not with a 500.
func TestListCapturedStepsBoundsAndBadRows(t *testing.T) {
	st := storetest.SQLite(t)
	ts := newTSOn(t, st)
	seedAgent(ts, "bot")
	now := time.Now()
	big, _ := json.Marshal(guard.Step{Type: "llm", Name: "chat", Input: strings.Repeat("x", 3<<20)})
	var steps []guard.CapturedStep
	for i := range 3 {
		steps = append(steps, guard.CapturedStep{AgentName: "bot", Stage: guard.StagePre, StepType: "llm", StepName: "chat",
			Step: big, Decision: guard.DecisionAllow, Time: now.Add(time.Duration(i-10) * time.Minute)})
	}
	steps = append(steps, guard.CapturedStep{AgentName: "bot", Stage: guard.StagePost, StepType: "tool", StepName: "sql",
		Step: json.RawMessage(`{"type":"tool","name":`), Decision: guard.DecisionDeny, Time: now.Add(-time.Minute)})
	if err := st.InsertCapturedSteps(context.Background(), steps); err != nil {
		t.Fatal(err)
	}
	m := ts.ok(200, "GET", "/api/v1/steps/captured?agent_name=bot", nil)
	got := m["steps"].([]any)
	if len(got) != 3 || m["has_more"] != true {
		t.Fatalf("%d steps (has_more %v), want the bad row and two 3 MiB steps within 8 MiB", len(got), m["has_more"])
	}
	if s := got[0].(map[string]any); s["step"].(map[string]any)["type"] != "tool" || s["step"].(map[string]any)["name"] != "sql" || s["decision"] != "deny" {
		t.Errorf("bad row answered as %v", s)
	}
	// Even a first step above the bound is answered.
	m = ts.ok(200, "GET", "/api/v1/steps/captured?agent_name=bot&stage=pre&limit=1", nil)
	if len(m["steps"].([]any)) != 1 || m["has_more"] != true {
		t.Errorf("limit 1: %d steps, has_more %v", len(m["steps"].([]any)), m["has_more"])
	}
}
