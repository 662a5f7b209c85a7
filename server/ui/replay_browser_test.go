package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
)

// TestReplayBeforeSave: the control editor's "Replay against the last 24 h" shows, before any save,
// which captured steps a tightened condition would change; the stored control stays as it was.
func TestReplayBeforeSave(t *testing.T) {
	a := startApp(t, appOptions{})
	a.initAgent("support-bot", "answers customers")
	id := a.createControl("block-drop", regexControl("drop table", "deny", "pre"))
	a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil, http.StatusOK, nil)
	route := fmt.Sprintf("#/controls/%d", id)
	a.open(route)
	a.waitJS("the form to be valid", `!!document.getElementById('valid-mark')`)
	// Nothing captured yet: the replay shows the server's problem, naming the range and the setting.
	a.click("#replay-24h")
	a.waitJS("the problem", `((document.querySelector('#replay-result .error-box') || {}).textContent || '').includes('start_time: no step of any agent was captured')`)
	if got := a.text("#replay-result .error-box"); !strings.Contains(got, "GUARD_CAPTURE_AGENTS") {
		t.Fatalf("problem = %q", got)
	}
	// Steps captured in the last hours (what GUARD_CAPTURE_AGENTS keeps from POST /evaluation), and one
	// older than 24 h that the replay leaves out.
	now := time.Now()
	var steps []guard.CapturedStep
	for i, in := range []string{"drop table users", "delete from users", "hello", "delete from orders <b>x</b>"} {
		body, _ := json.Marshal(guard.Step{Type: "llm", Name: "chat", Input: in})
		steps = append(steps, guard.CapturedStep{AgentName: "support-bot", Stage: guard.StagePre, StepType: "llm", StepName: "chat",
			Step: body, Decision: guard.DecisionAllow, Time: now.Add(-time.Duration(i+1) * time.Hour)})
	}
	old, _ := json.Marshal(guard.Step{Type: "llm", Name: "chat", Input: "delete from archive"})
	steps = append(steps, guard.CapturedStep{AgentName: "support-bot", Stage: guard.StagePre, StepType: "llm", StepName: "chat",
		Step: old, Decision: guard.DecisionAllow, Time: now.Add(-30 * time.Hour)})
	if err := a.st.InsertCapturedSteps(context.Background(), steps); err != nil {
		t.Fatal(err)
	}

	// Unchanged: nothing would change.
	a.click("#replay-24h")
	a.waitJS("the replay of the saved control", `!!document.getElementById('replay-summary')`)
	if got := a.text("#replay-summary"); got != "4 captured steps replayed: no decision would change." {
		t.Fatalf("summary = %q", got)
	}
	// Tighten the condition and replay the edit.
	a.setValue("#ctl-condition", `{"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "drop table|delete from"}}}`)
	a.click("#replay-24h")
	a.waitJS("the replay of the edit", `(document.getElementById('replay-summary') || {}).textContent !== undefined && document.getElementById('replay-summary').textContent.includes('would change')`)
	if got := a.text("#replay-summary"); got != "4 captured steps replayed: 2 would change decision with this edit." {
		t.Fatalf("summary = %q", got)
	}
	if got := a.text(`#replay-diff tr[data-kind="allow_to_deny"]`); got != "allow → deny2" {
		t.Fatalf("changes row = %q", got)
	}
	if got := a.text("#replay-control"); got != "This control matched 1 step; with the edit it matches 3 (+2 newly, −0 no longer)." {
		t.Fatalf("control line = %q", got)
	}
	samples := eval[[]string](a, "samples", `[...document.querySelectorAll('#replay-diff .replay-sample')].map(s => s.textContent)`)
	if len(samples) != 2 || !strings.Contains(samples[0]+samples[1], "delete from users") || !strings.Contains(samples[0]+samples[1], "<b>x</b>") {
		t.Fatalf("samples = %q", samples)
	}
	if n := eval[int](a, "markup", `document.querySelectorAll('#replay-diff b').length`); n != 0 {
		t.Fatal("step content was rendered as markup")
	}
	// Nothing was saved.
	var got struct {
		Version int `json:"version"`
	}
	a.call("GET", fmt.Sprintf("/api/v1/controls/%d", id), nil, http.StatusOK, &got)
	if got.Version != 1 {
		t.Fatalf("the replay saved the control: version %d", got.Version)
	}
	// A draft that does not validate is refused in the page, not sent.
	a.setValue("#ctl-condition", `{not json`)
	a.click("#replay-24h")
	a.waitJS("the notice", `(document.getElementById('replay-result') || {}).textContent === 'Fix the problems of the form first.'`)
	a.noPageErrors()
}
