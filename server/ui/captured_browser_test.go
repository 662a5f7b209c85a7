package ui_test

// Captured steps as samples (issues 14 and 17): the Try it panel offers an agent's captured steps, which
// fill the whole step (payload included, redacted as stored), and "Use as test" turns the step being tried
// into one of the control's tests.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// capturedOption is the value of the captured-step option of the Try it picker whose label holds text.
func capturedOption(a *app, text string) string {
	a.t.Helper()
	a.waitJS("the captured step "+text, fmt.Sprintf(`document.getElementById('try-source')?.dataset.ready === 'true' &&
		[...document.querySelectorAll('#try-source option[value^="captured:support-bot:"]')].some(o => o.textContent.includes(%q))`, text))
	return eval[string](a, "option "+text, fmt.Sprintf(`[...document.querySelectorAll('#try-source option[value^="captured:support-bot:"]')].find(o => o.textContent.includes(%q)).value`, text))
}

func TestTryItOnACapturedStepAndUseAsTest(t *testing.T) {
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			a := startApp(t, appOptions{width: w.width, height: w.height, capture: []string{"support-bot"}, captureRedact: []string{"context.user_email"}})
			a.initAgent("support-bot", "answers customers")
			id := a.createControl("block-ssn", regexControl(`\d{3}-\d{2}-\d{4}`, "deny", "pre"))
			a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil, http.StatusOK, nil)
			// Real traffic: what POST /evaluation evaluates for a captured agent is kept, redacted.
			ctx := map[string]any{"user_email": "ann@example.com", "tier": "gold"}
			for _, in := range []string{"my ssn is 123-45-6789", "hello there"} {
				a.call("POST", "/api/v1/evaluation", map[string]any{"agent_name": "support-bot", "stage": "pre",
					"step": map[string]any{"type": "llm", "name": "chat", "input": in, "context": ctx}}, http.StatusOK, nil)
			}
			a.call("POST", "/api/v1/evaluation", map[string]any{"agent_name": "support-bot", "stage": "post",
				"step": map[string]any{"type": "tool", "name": "lookup_order", "input": map[string]any{"order": 42}, "output": "shipped"}}, http.StatusOK, nil)
			a.flushCaptured()

			a.open(fmt.Sprintf("#/controls/%d", id))
			a.waitJS("the form to be valid", `!!document.getElementById('valid-mark')`)
			v := capturedOption(a, "123-45-6789")
			if got := eval[string](a, "group", fmt.Sprintf(`document.querySelector('#try-source option[value=%q]').parentElement.label`, v)); got != "Captured steps of support-bot" {
				t.Fatalf("captured group = %q", got)
			}
			if n := eval[int](a, "captured options", `document.querySelectorAll('#try-source option[value^="captured:"]').length`); n != 3 {
				t.Fatalf("%d captured steps offered, want 3", n)
			}
			// Picking it fills the whole step from what was captured: the real input, the context as stored.
			a.setValue("#try-source", v)
			fields := eval[map[string]string](a, "the panel", `Object.fromEntries(['try-type', 'try-name', 'try-stage', 'try-input', 'try-output', 'try-context'].map(id => [id, document.getElementById(id).value]))`)
			if fields["try-type"] != "llm" || fields["try-name"] != "chat" || fields["try-stage"] != "pre" || fields["try-input"] != "my ssn is 123-45-6789" || fields["try-output"] != "" {
				t.Fatalf("panel = %v", fields)
			}
			var gotCtx map[string]any
			if err := json.Unmarshal([]byte(fields["try-context"]), &gotCtx); err != nil || gotCtx["user_email"] != "[REDACTED]" || gotCtx["tier"] != "gold" {
				t.Fatalf("context = %q (%v)", fields["try-context"], err)
			}
			if note := a.text("#try-source-note"); !strings.Contains(note, "captured") || !strings.Contains(note, "redacted") {
				t.Fatalf("note = %q", note)
			}
			a.click("#try-run")
			a.waitJS("a deny", `/Decision\s*deny/.test((document.getElementById('try-summary') || {}).textContent || '')`)
			if s := a.text("#try-summary"); !strings.Contains(s, "the control matched") {
				t.Fatalf("summary = %q", s)
			}

			// Use as test: the step and its stage go to the Tests form, expecting what the try found.
			a.click("#try-use-as-test")
			a.waitJS("the tests form filled", `document.getElementById('test-step').value.includes('123-45-6789')`)
			var step map[string]any
			if err := json.Unmarshal([]byte(eval[string](a, "test step", `document.getElementById('test-step').value`)), &step); err != nil {
				t.Fatal(err)
			}
			if step["type"] != "llm" || step["name"] != "chat" || step["input"] != "my ssn is 123-45-6789" || step["context"].(map[string]any)["user_email"] != "[REDACTED]" {
				t.Fatalf("test step = %v", step)
			}
			if got := eval[string](a, "stage and expect", `document.getElementById('test-stage').value + '/' + document.getElementById('test-expect').value + '/' + document.activeElement.id`); got != "pre/match/test-name" {
				t.Fatalf("stage/expect/focus = %q", got)
			}
			if s := a.text("#test-add-status"); !strings.Contains(s, "matched when tried") {
				t.Fatalf("status = %q", s)
			}
			if s := a.text("#try-use-status"); !strings.Contains(s, "Tests section") {
				t.Fatalf("try status = %q", s)
			}
			a.setValue("#test-name", "real ssn")
			a.click("#add-test")
			a.waitJS("the test passing live", `(document.getElementById('tests-summary') || {}).textContent === '1 passing'`)

			// A captured step the control lets through makes a no_match test.
			a.setValue("#try-source", capturedOption(a, "hello there"))
			a.click("#try-run")
			a.waitJS("an allow", `/Decision\s*allow/.test((document.getElementById('try-summary') || {}).textContent || '')`)
			a.click("#try-use-as-test")
			a.waitJS("the tests form filled", `document.getElementById('test-step').value.includes('hello there')`)
			if got := a.text("#test-add-status"); !strings.Contains(got, "did not match when tried") {
				t.Fatalf("status = %q", got)
			}
			a.click("#add-test")
			a.waitJS("both tests passing live", `(document.getElementById('tests-summary') || {}).textContent === '2 passing'`)
			if probs := eval[[]string](a, "a11y checks", a11yProblems); len(probs) > 0 {
				t.Errorf("at %d px:\n  %s", w.width, strings.Join(probs, "\n  "))
			}

			// Saved, the tests carry the real step.
			a.click("#save-control")
			a.waitJS("saved", `!!document.getElementById('saved')`)
			var ctl struct {
				Data struct {
					Tests []struct {
						Name   string         `json:"name"`
						Stage  string         `json:"stage"`
						Step   map[string]any `json:"step"`
						Expect any            `json:"expect"`
					} `json:"tests"`
				} `json:"data"`
			}
			a.call("GET", fmt.Sprintf("/api/v1/controls/%d", id), nil, http.StatusOK, &ctl)
			if ts := ctl.Data.Tests; len(ts) != 2 || ts[0].Name != "real ssn" || ts[0].Step["input"] != "my ssn is 123-45-6789" || ts[0].Expect != "match" ||
				ts[1].Step["input"] != "hello there" || ts[1].Expect != "no_match" {
				t.Fatalf("saved tests = %+v", ts)
			}
			a.noPageErrors()
		})
	}
}

// A regular key cannot read captured steps: the picker does not offer them (and asks for none).
func TestTryItOffersNoCapturedStepsToARegularKey(t *testing.T) {
	a := startApp(t, appOptions{auth: true, capture: []string{"support-bot"}})
	a.initAgent("support-bot", "answers customers")
	id := a.createControl("block-ssn", regexControl(`\d{3}-\d{2}-\d{4}`, "deny", "pre"))
	a.call("POST", "/api/v1/evaluation", map[string]any{"agent_name": "support-bot", "stage": "pre",
		"step": map[string]any{"type": "llm", "name": "chat", "input": "my ssn is 123-45-6789"}}, http.StatusOK, nil)
	a.flushCaptured()
	a.load(fmt.Sprintf("#/controls/%d", id))
	a.signIn(regularKey)
	a.waitRendered(fmt.Sprintf("#/controls/%d", id))
	a.waitJS("the sources", `document.getElementById('try-source')?.dataset.ready === 'true' && !!document.querySelector('#try-source option[value^="step:support-bot:"]')`)
	if n := eval[int](a, "captured options", `document.querySelectorAll('#try-source option[value^="captured:"]').length`); n != 0 {
		t.Fatalf("%d captured steps offered to a regular key", n)
	}
	if !eval[bool](a, "use as test disabled", `document.getElementById('try-use-as-test').disabled`) {
		t.Fatal("Use as test is enabled for a regular key")
	}
	a.noPageErrors()
}
