package ui_test

// The operator's daily flows, driven through the dashboard in a real browser.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// controlCondition is the condition the form's JSON editor gets in the tests.
const controlCondition = `{
  "selector": {"path": "input"},
  "evaluator": {"name": "regex", "config": {"pattern": "\\b\\d{3}-\\d{2}-\\d{4}\\b"}}
}`

func TestCreateControlThroughForm(t *testing.T) {
	a := startApp(t, appOptions{})
	a.open("#/controls")
	a.click("#new-control")
	a.waitRendered("#/controls/new")

	a.setValue("#ctl-name", "block-ssn")
	a.setValue("#ctl-description", "no social security numbers")
	a.setValue("#ctl-tags", "pii, compliance")
	a.setValue("#ctl-condition", controlCondition)
	a.waitJS("the form to be valid", `!!document.getElementById('valid-mark')`)
	a.click("#save-control")

	a.waitJS("the editor of the new control", `/^#\/controls\/\d+$/.test(location.hash) && document.getElementById('main').getAttribute('aria-busy') === 'false'`)
	id := strings.TrimPrefix(eval[string](a, "hash", `location.hash`), "#/controls/")
	var got struct {
		Name string `json:"name"`
		Data struct {
			Description string         `json:"description"`
			Tags        []string       `json:"tags"`
			Condition   map[string]any `json:"condition"`
			Action      struct {
				Decision string `json:"decision"`
			} `json:"action"`
			Scope struct {
				Stages []string `json:"stages"`
			} `json:"scope"`
		} `json:"data"`
	}
	a.call("GET", "/api/v1/controls/"+id, nil, http.StatusOK, &got)
	if got.Name != "block-ssn" || got.Data.Description != "no social security numbers" || got.Data.Action.Decision != "deny" ||
		strings.Join(got.Data.Tags, ",") != "pii,compliance" || strings.Join(got.Data.Scope.Stages, ",") != "pre" {
		t.Fatalf("stored control = %+v", got)
	}
	cond, _ := json.Marshal(got.Data.Condition)
	if !strings.Contains(string(cond), `\\d{3}-\\d{2}-\\d{4}`) {
		t.Fatalf("stored condition = %s", cond)
	}
	if v := a.text("h1"); v != "Control block-ssn" {
		t.Fatalf("heading after create = %q", v)
	}

	// The list shows it.
	a.goTo("#/controls")
	a.waitJS("the control in the list", `[...document.querySelectorAll('#controls-results a')].some(x => x.textContent === 'block-ssn')`)
	a.noPageErrors()
}

func TestValidationProblemsNextToFields(t *testing.T) {
	a := startApp(t, appOptions{})
	a.open("#/controls/new")
	a.setValue("#ctl-name", "steer-it")

	cases := []struct {
		name  string
		setup func()
		field string // data-field of the problems box
		path  string // data-path of the problem
		text  string // in the problem's text
	}{
		{"steer without a message", func() { a.setValue("#ctl-decision", "steer") },
			"steering_message", "data.action.steering_context.message", "must not be empty"},
		{"bad regex pattern", func() {
			a.setValue("#ctl-decision", "deny")
			a.setValue("#ctl-condition", `{"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "(unclosed"}}}`)
		}, "condition", "data.condition.evaluator.config.pattern", "condition.evaluator.config.pattern"},
		{"condition that is not JSON", func() { a.setValue("#ctl-condition", `{"selector": `) },
			"condition", "data.condition", "not valid JSON"},
		{"empty stages", func() {
			a.setValue("#ctl-condition", controlCondition)
			a.do("uncheck pre", evalVoid(`document.getElementById('ctl-stage-pre').click()`))
		}, "stages", "data.scope.stages", ""},
		{"name with a space", func() {
			a.do("check pre", evalVoid(`document.getElementById('ctl-stage-pre').click()`))
			a.setValue("#ctl-name", "bad name")
		}, "name", "name", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.setup()
			sel := fmt.Sprintf(`.problems[data-field=%q] .problem[data-path=%q]`, c.field, c.path)
			a.waitJS("a problem at "+c.path, fmt.Sprintf(`!!document.querySelector(%q)`, sel))
			if got := a.text(sel); !strings.Contains(got, c.text) {
				t.Fatalf("problem text = %q, want it to contain %q", got, c.text)
			}
			// The field is marked invalid and points at its problems.
			if !eval[bool](a, "aria-invalid", fmt.Sprintf(`(() => { const box = document.querySelector(%q).closest('.problems');
				return !!document.querySelector('[aria-invalid="true"][aria-describedby~="' + box.id + '"]'); })()`, sel)) {
				t.Fatalf("no input marked aria-invalid for the problems box of %s", c.field)
			}
		})
	}
	// Fixing everything clears every problem.
	a.setValue("#ctl-name", "good-name")
	a.waitJS("the form to be valid again", `!!document.getElementById('valid-mark') && !document.querySelector('.problem')`)
	a.noPageErrors()
}

func TestLinkControlAndWatchStatistics(t *testing.T) {
	a := startApp(t, appOptions{})
	a.initAgent("support-bot", "answers customers")
	id := a.createControl("block-ssn", regexControl(`\b\d{3}-\d{2}-\d{4}\b`, "deny", "pre"))
	a.createControl("log-refunds", regexControl(`refund`, "log", "pre", "post"))

	a.open("#/agents")
	a.waitJS("the agent in the list", `[...document.querySelectorAll('#agents-results a')].some(x => x.textContent === 'support-bot')`)
	a.click(`#agents-results a[href="#/agents/support-bot"]`)
	a.waitRendered("#/agents/support-bot")
	if got := a.text("#agent-steps-table"); !strings.Contains(got, "lookup_order") || !strings.Contains(got, "chat") {
		t.Fatalf("steps table = %q", got)
	}

	// Link through the form.
	a.setValue("#link-control", fmt.Sprint(id))
	a.click("#link-submit")
	a.waitJS("the linked control row", fmt.Sprintf(`!!document.querySelector('#linked-controls a[href="#/controls/%d"]')`, id))
	var links struct {
		Controls []struct {
			ControlID int64 `json:"control_id"`
		} `json:"controls"`
	}
	a.call("GET", "/api/v1/agents/support-bot/controls", nil, http.StatusOK, &links)
	if len(links.Controls) != 1 || links.Controls[0].ControlID != id {
		t.Fatalf("links after the form = %+v", links)
	}

	// Statistics start empty, then follow POST /evaluation.
	a.waitJS("empty statistics", `(document.querySelector('[data-stat="execution_count"]') || {}).textContent === '0'`)
	if d := a.evaluate("support-bot", "pre", "my ssn is 123-45-6789"); d != "deny" {
		t.Fatalf("decision = %q, want deny", d)
	}
	if d := a.evaluate("support-bot", "pre", "hello"); d != "allow" {
		t.Fatalf("decision = %q, want allow", d)
	}
	a.flushEvents()
	a.click("#stats-refresh")
	a.waitJS("two evaluations, one deny", `(() => {
		const v = (k) => (document.querySelector('[data-stat="' + k + '"]') || {}).textContent;
		return v('execution_count') === '2' && v('match_count') === '1' && v('deny') === '1';
	})()`)
	a.waitJS("a deny line in the chart", `!!document.querySelector('#stats-chart svg [data-action="deny"]')`)
	if got := a.text("#stats-controls"); !strings.Contains(got, "block-ssn") {
		t.Fatalf("per-control statistics = %q", got)
	}

	// Disable through the toggle, then unlink.
	a.click(fmt.Sprintf("#enabled-%d", id))
	a.waitJS("the control disabled", fmt.Sprintf(`(() => { const c = document.getElementById('enabled-%d'); return c && !c.checked && !c.disabled && c.closest('label').textContent.startsWith('disabled'); })()`, id))
	var ctl struct {
		Enabled bool `json:"enabled"`
	}
	a.call("GET", fmt.Sprintf("/api/v1/controls/%d", id), nil, http.StatusOK, &ctl)
	if ctl.Enabled {
		t.Fatal("the control is still enabled after the toggle")
	}
	a.click(fmt.Sprintf(`button[data-unlink="%d"]`, id))
	a.waitJS("no linked control", `!document.querySelector('#linked-controls a') && /No controls linked/.test(document.getElementById('linked-controls').textContent)`)
	a.noPageErrors()
}

func TestRestoreEarlierVersion(t *testing.T) {
	a := startApp(t, appOptions{})
	id := a.createControl("block-ssn", regexControl(`\d{3}-\d{2}-\d{4}`, "deny", "pre"))
	a.call("PUT", fmt.Sprintf("/api/v1/controls/%d/data", id), map[string]any{"data": regexControl(`\d{9}`, "warn", "pre", "post")}, http.StatusOK, nil)

	a.open(fmt.Sprintf("#/controls/%d", id))
	a.click("#history-link")
	route := fmt.Sprintf("#/controls/%d/history", id)
	a.waitRendered(route)
	// The default diff compares the two newest versions: the pattern and the decision changed.
	a.waitJS("the diff", `(() => { const d = document.getElementById('diff-output'); return d && d.querySelector('.del') && d.querySelector('.add'); })()`)
	diff := a.text("#diff-output")
	for _, want := range []string{`- `, `+ `, `"warn"`, `"deny"`} {
		if !strings.Contains(diff, want) {
			t.Fatalf("diff lacks %q:\n%s", want, diff)
		}
	}
	a.click(`button[data-restore="1"]`)
	a.waitJS("the restored message", `/Restored version 1 as version 3/.test((document.getElementById('restored') || {}).textContent || '')`)
	var got struct {
		Version int `json:"version"`
		Data    struct {
			Action struct {
				Decision string `json:"decision"`
			} `json:"action"`
		} `json:"data"`
	}
	a.call("GET", fmt.Sprintf("/api/v1/controls/%d", id), nil, http.StatusOK, &got)
	if got.Version != 3 || got.Data.Action.Decision != "deny" {
		t.Fatalf("after restore: version %d, decision %q; want 3, deny", got.Version, got.Data.Action.Decision)
	}
	a.waitJS("the new version in the list", `[...document.querySelectorAll('#versions td')].some(td => td.textContent === 'restored')`)
	a.noPageErrors()
}

// TestObserveDecisionIsKept: a control saved with observe (the reference implementation's name of log)
// shows observe in the editor, and saving the form keeps it observe.
func TestObserveDecisionIsKept(t *testing.T) {
	a := startApp(t, appOptions{})
	id := a.createControl("watch-refunds", regexControl(`refund`, "observe", "pre"))
	route := fmt.Sprintf("#/controls/%d", id)
	a.open(route)
	a.waitRendered(route)
	if v := eval[string](a, "decision", `document.getElementById('ctl-decision').value`); v != "observe" {
		t.Fatalf("the editor shows decision %q, want observe", v)
	}
	a.setValue("#ctl-description", "kept as observe")
	a.waitJS("valid", `!!document.getElementById('valid-mark')`)
	a.click("#save-control")
	a.waitJS("saved", `/Saved as version/.test((document.getElementById('saved') || {}).textContent || '')`)
	var got struct {
		Data struct {
			Description string `json:"description"`
			Action      struct {
				Decision string `json:"decision"`
			} `json:"action"`
		} `json:"data"`
	}
	a.call("GET", fmt.Sprintf("/api/v1/controls/%d", id), nil, http.StatusOK, &got)
	if got.Data.Description != "kept as observe" || got.Data.Action.Decision != "observe" {
		t.Fatalf("stored after saving the form: %+v", got.Data)
	}
	a.noPageErrors()
}
