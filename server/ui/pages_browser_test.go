package ui_test

// Lists, filters, pagination, rename, enable/disable, delete with force, evaluators and events.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

func TestAgentsSearchAndPagination(t *testing.T) {
	a := startApp(t, appOptions{})
	for i := range 23 {
		a.initAgent(fmt.Sprintf("bot-%02d", i), "")
	}
	a.initAgent("billing-agent", "refunds")
	a.open("#/agents")
	rows := `document.querySelectorAll('#agents-results tbody tr').length`
	a.waitJS("a first page of 20", rows+` === 20 && /24 in all, page 1/.test(document.querySelector('#agents-results .pager').textContent)`)
	a.click("#agents-results .pager button:nth-of-type(2)")
	a.waitJS("a second page of 4", rows+` === 4 && /page 2/.test(document.querySelector('#agents-results .pager').textContent)`)
	a.click("#agents-results .pager button:nth-of-type(1)")
	a.waitJS("back to page 1", rows+` === 20`)

	a.setValue("#agent-search", "billing")
	a.do("search", evalVoid(`document.getElementById('agent-search').form.requestSubmit()`))
	a.waitJS("one match", rows+` === 1 && document.querySelector('#agents-results tbody a').textContent === 'billing-agent'`)
	a.setValue("#agent-search", "nothing-like-this")
	a.do("search", evalVoid(`document.getElementById('agent-search').form.requestSubmit()`))
	a.waitJS("the empty message", `/No agent matches/.test(document.getElementById('agents-results').textContent)`)
	a.noPageErrors()
}

func TestControlsFilters(t *testing.T) {
	a := startApp(t, appOptions{})
	a.createControl("pre-deny", regexControl("a", "deny", "pre"))
	post := a.createControl("post-warn", regexControl("b", "warn", "post"))
	a.call("PATCH", fmt.Sprintf("/api/v1/controls/%d", post), map[string]any{"enabled": false}, http.StatusOK, nil)
	a.open("#/controls")
	names := `[...document.querySelectorAll('#controls-results tbody a')].map(x => x.textContent).join(',')`
	a.waitJS("both controls", names+` === 'post-warn,pre-deny'`)
	cases := []struct{ sel, value, want string }{
		{"#flt-enabled", "false", "post-warn"},
		{"#flt-enabled", "true", "pre-deny"},
		{"#flt-stage", "post", ""},
		{"#flt-enabled", "", "post-warn"},
	}
	for _, c := range cases {
		a.setValue(c.sel, c.value)
		a.do("filter", evalVoid(`document.getElementById('flt-name').form.requestSubmit()`))
		if c.want == "" {
			a.waitJS("no control", `/No controls match/.test(document.getElementById('controls-results').textContent)`)
		} else {
			a.waitJS(c.want, names+fmt.Sprintf(` === %q`, c.want))
		}
	}
	a.noPageErrors()
}

func TestRenameToggleAndDeleteWithForce(t *testing.T) {
	a := startApp(t, appOptions{})
	a.initAgent("support-bot", "")
	a.initAgent("billing-agent", "")
	id := a.createControl("block-ssn", regexControl(`\d{3}-\d{2}-\d{4}`, "deny", "pre"))
	for _, ag := range []string{"support-bot", "billing-agent"} {
		a.call("POST", fmt.Sprintf("/api/v1/agents/%s/controls/%d", ag, id), nil, http.StatusOK, nil)
	}
	route := fmt.Sprintf("#/controls/%d", id)
	a.open(route)

	// Rename through the form.
	a.setValue("#ctl-name", "block-us-ssn")
	a.waitJS("valid", `!!document.getElementById('valid-mark')`)
	a.click("#save-control")
	a.waitJS("saved", `/Saved as version/.test((document.getElementById('saved') || {}).textContent || '') && document.querySelector('h1').textContent === 'Control block-us-ssn'`)

	// Disable with the button.
	a.click("#toggle-enabled")
	a.waitJS("the Enable button", `(document.getElementById('toggle-enabled') || {}).textContent === 'Enable'`)
	var got struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
	}
	a.call("GET", fmt.Sprintf("/api/v1/controls/%d", id), nil, http.StatusOK, &got)
	if got.Name != "block-us-ssn" || got.Enabled {
		t.Fatalf("after rename and disable: %+v", got)
	}

	// Delete: the dialog lists the agents still using it, then force unlinks and deletes.
	a.click("#delete-control")
	a.click("#confirm-delete")
	a.waitJS("the agents in use", `(() => { const l = document.querySelectorAll('#in-use li'); return l.length === 2 && l[0].textContent === 'billing-agent' && l[1].textContent === 'support-bot'; })()`)
	a.click("#force-delete")
	a.waitRendered("#/controls")
	a.call("GET", fmt.Sprintf("/api/v1/controls/%d", id), nil, http.StatusNotFound, nil)

	// The deleted control's page leads to its history, which is still readable.
	a.goTo(fmt.Sprintf("#/controls/%d", id))
	a.click("#history-link")
	a.waitRendered(fmt.Sprintf("#/controls/%d/history", id))
	if h := a.text("h1"); h != "History of block-us-ssn (deleted)" {
		t.Fatalf("history heading of a deleted control = %q", h)
	}
	a.waitJS("the deleted event", `[...document.querySelectorAll('#versions td')].some(td => td.textContent === 'deleted')`)

	// Cancel keeps the control and leaves no dialog behind; Escape too.
	other := a.createControl("other", regexControl("x", "log", "pre"))
	a.goTo(fmt.Sprintf("#/controls/%d", other))
	a.click("#delete-control")
	a.click("#cancel-delete")
	a.waitJS("no dialog", `!document.getElementById('delete-dialog')`)
	a.click("#delete-control")
	a.waitJS("the dialog open", `!!document.querySelector('#delete-dialog[open]')`)
	a.do("escape", chromedp.KeyEvent(kb.Escape))
	a.waitJS("no dialog after Escape", `!document.getElementById('delete-dialog')`)
	a.call("GET", fmt.Sprintf("/api/v1/controls/%d", other), nil, http.StatusOK, nil)
	a.noPageErrors()
}

func TestEvaluatorsAndEvents(t *testing.T) {
	a := startApp(t, appOptions{})
	a.initAgent("support-bot", "")
	deny := a.createControl("block-ssn", regexControl(`\d{3}-\d{2}-\d{4}`, "deny", "pre"))
	logc := a.createControl("log-all", regexControl(`.`, "log", "pre"))
	for _, id := range []int64{deny, logc} {
		a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil, http.StatusOK, nil)
	}
	a.evaluate("support-bot", "pre", "ssn 123-45-6789")
	a.evaluate("support-bot", "pre", "hello")
	a.flushEvents()

	a.open("#/evaluators")
	a.waitJS("the regex evaluator and its schema", `(() => { const s = document.getElementById('ev-regex'); return s && /pattern/.test(s.closest('section').querySelector('pre').textContent); })()`)

	// A bare #/events opens on matches (scope_browser_test.go); an empty matched parameter asks for all.
	a.goTo("#/events?matched=")
	rows := `document.querySelectorAll('#events-results tbody tr').length`
	// A matched deny may end an evaluation before log-all runs: the ssn gives one or two events, hello two.
	a.waitJS("the events", rows+` >= 3`)
	total := eval[int](a, "rows", rows)
	a.do("only deny", evalVoid(`document.getElementById('ev-action-deny').click()`))
	a.click("#events-search")
	a.waitJS("two deny events", rows+` === 2`)
	a.setValue("#ev-matched", "true")
	a.click("#events-search")
	a.waitJS("one matched deny", rows+` === 1`)
	if got := a.text("#events-results tbody tr"); !strings.Contains(got, "block-ssn") || !strings.Contains(got, "yes") {
		t.Fatalf("matched deny row = %q", got)
	}
	a.click("#events-reset")
	a.waitJS("all events again", rows+fmt.Sprintf(` === %d`, total))
	a.noPageErrors()
}

// TestMarkupInDataIsText: names, descriptions and metadata from the API are shown as text, never run.
func TestMarkupInDataIsText(t *testing.T) {
	a := startApp(t, appOptions{})
	const evil = `<img src=x onerror="window.__xss=1"><b>bold</b>`
	a.call("POST", "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": "bot", "agent_description": evil, "agent_metadata": map[string]any{"note": evil}},
		"steps": []map[string]any{{"type": "tool", "name": "x", "description": evil}}, "conflict_mode": "overwrite"}, http.StatusOK, nil)
	data := regexControl("a", "deny", "pre")
	data["description"] = evil
	id := a.createControl("c1", data)
	a.call("POST", fmt.Sprintf("/api/v1/agents/bot/controls/%d", id), nil, http.StatusOK, nil)
	for _, r := range []string{"#/agents", "#/agents/bot", fmt.Sprintf("#/controls/%d", id), fmt.Sprintf("#/controls/%d/history", id)} {
		a.open(r)
		if eval[bool](a, "xss marker", `window.__xss === 1 || !!document.querySelector('#main img, #main b')`) {
			t.Fatalf("%s: markup from the API was interpreted", r)
		}
	}
	a.goTo("#/agents/bot")
	if got := a.text("#main"); !strings.Contains(got, `<b>bold</b>`) {
		t.Fatalf("the description is not shown as text: %q", got)
	}
	a.noPageErrors()
}
