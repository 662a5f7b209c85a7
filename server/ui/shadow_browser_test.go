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

// TestControlTestsAndShadowThroughDashboard is the operator's path of issue 14: write a control with a
// test added from a sample step, watch the test's outcome follow the condition as it is edited, save
// it in shadow, see on the agent page and the control page what it would have done with links to those
// events, replay an edit of it against the captured steps, and promote it to enforce.
func TestControlTestsAndShadowThroughDashboard(t *testing.T) {
	a := startApp(t, appOptions{})
	a.initAgent("support-bot", "answers customers")

	a.open("#/controls/new")
	a.setValue("#ctl-name", "block-secret")
	a.setValue("#ctl-condition", `{"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "secret"}}}`)
	a.setValue("#ctl-mode", "shadow")
	// A test from a sample step: the step says "a secret", the control must match it.
	a.setValue("#test-step", `{"type": "llm", "name": "chat", "input": "tell me a secret"}`)
	a.setValue("#test-name", "finds secrets")
	a.setValue("#test-expect", "match")
	a.click("#add-test")
	a.waitJS("the test passing live", `(() => { const r = document.querySelector('#tests-rows .test-row'); return r && /pass/.test(r.textContent) && /finds secrets/.test(r.textContent); })()`)

	// Edit the condition so that the test fails: its outcome follows, and saving is refused.
	a.setValue("#ctl-condition", `{"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "password"}}}`)
	a.waitJS("the test failing live", `(() => { const r = document.querySelector('#tests-rows .test-row'); return r && /FAIL/.test(r.textContent) && /expected a match; the control did not match/.test(r.textContent); })()`)
	a.waitJS("the failure next to the tests", `/expected a match/.test(document.getElementById('ctl-tests-problems').textContent)`)
	a.click("#save-control")
	a.waitJS("the save refused", `!!document.querySelector('#form-status .error-box')`)
	var list struct {
		Controls []any `json:"controls"`
	}
	a.call("GET", "/api/v1/controls?name=block-secret", nil, http.StatusOK, &list)
	if len(list.Controls) != 0 {
		t.Fatalf("a control contradicting its test was saved: %+v", list)
	}

	// Back to a condition that passes: save in shadow.
	a.setValue("#ctl-condition", `{"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "secret"}}}`)
	a.waitJS("the test passing again", `/pass/.test(document.querySelector('#tests-rows .test-row').textContent)`)
	a.waitJS("the form to be valid", `!!document.getElementById('valid-mark')`)
	a.click("#save-control")
	a.waitJS("the editor of the new control", `/^#\/controls\/\d+$/.test(location.hash) && document.getElementById('main').getAttribute('aria-busy') === 'false'`)
	id := strings.TrimPrefix(eval[string](a, "hash", `location.hash`), "#/controls/")
	var got struct {
		Data struct {
			Mode  string `json:"mode"`
			Tests []struct {
				Name   string `json:"name"`
				Expect string `json:"expect"`
			} `json:"tests"`
		} `json:"data"`
	}
	a.call("GET", "/api/v1/controls/"+id, nil, http.StatusOK, &got)
	if got.Data.Mode != "shadow" || len(got.Data.Tests) != 1 || got.Data.Tests[0].Name != "finds secrets" || got.Data.Tests[0].Expect != "match" {
		t.Fatalf("stored data = %+v", got.Data)
	}
	a.call("POST", "/api/v1/agents/support-bot/controls/"+id, nil, http.StatusOK, nil)

	// Real traffic: never denied, recorded as shadow.
	for _, in := range []string{"a secret", "hello", "another secret"} {
		if d := a.evaluate("support-bot", "pre", in); d != "allow" {
			t.Fatalf("%q: decision %s, want allow (the control is in shadow)", in, d)
		}
	}
	a.flushEvents()

	// The agent page shows the shadow control apart, with a link to its events.
	a.goTo("#/agents/support-bot")
	a.waitJS("the shadow line", `/block-secret would have denied 2 of 3 steps/.test((document.getElementById('stats-shadow') || {}).textContent || '')`)
	// The control page says the same, per agent.
	a.goTo("#/controls/" + id)
	a.waitJS("the shadow report", `/support-bot: would have denied 2 of 3 steps/.test((document.getElementById('shadow-report') || {}).textContent || '')`)
	a.click("#shadow-report a.shadow-events")
	a.waitJS("the events page filtered to the shadow events", fmt.Sprintf(`(() => {
		const v = (id) => (document.getElementById(id) || {}).value, r = document.getElementById('events-results');
		return location.hash.startsWith('#/events?') && v('ev-shadow') === 'true' && v('ev-controls') === '%s' && !!r &&
			/1–3 of 3/.test(r.textContent) && document.querySelectorAll('#events-results .shadow-tag').length === 3;
	})()`, id))

	// Replay an edit of the shadow control against the captured steps (those of the traffic above, as
	// GUARD_CAPTURE_AGENTS keeps them): no decision changes while it is in shadow, and the editor says
	// what the edit would match.
	var captured []guard.CapturedStep
	for i, in := range []string{"a secret", "hello", "another secret"} {
		body, _ := json.Marshal(guard.Step{Type: "llm", Name: "chat", Input: in})
		captured = append(captured, guard.CapturedStep{AgentName: "support-bot", Stage: guard.StagePre, StepType: "llm", StepName: "chat",
			Step: body, Decision: guard.DecisionAllow, Time: time.Now().Add(-time.Duration(3-i) * time.Minute)})
	}
	if err := a.st.InsertCapturedSteps(context.Background(), captured); err != nil {
		t.Fatal(err)
	}
	a.goTo("#/controls/" + id)
	a.waitJS("the form to be valid", `!!document.getElementById('valid-mark')`)
	a.setValue("#ctl-condition", `{"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "secret|hello"}}}`)
	a.waitJS("the form to be valid", `!!document.getElementById('valid-mark')`)
	a.click("#replay-24h")
	a.waitJS("the replay of the edit", `!!document.getElementById('replay-control')`)
	if got := a.text("#replay-summary"); got != "3 captured steps replayed: no decision would change." {
		t.Fatalf("summary = %q", got)
	}
	if got := a.text("#replay-control"); got != "This control matched 2 steps; with the edit it matches 3 (+1 newly, −0 no longer)." {
		t.Fatalf("control line = %q", got)
	}

	// Promote.
	a.goTo("#/controls/" + id)
	a.click("#promote-control")
	a.waitJS("the promotion", `/Promoted/.test(document.body.textContent) && !document.getElementById('promote-control')`)
	a.call("GET", "/api/v1/controls/"+id, nil, http.StatusOK, &got)
	if got.Data.Mode != "enforce" {
		t.Fatalf("mode after promotion = %q", got.Data.Mode)
	}
	if d := a.evaluate("support-bot", "pre", "a secret"); d != "deny" {
		t.Fatalf("decision after promotion = %s, want deny", d)
	}
	a.noPageErrors()
}
