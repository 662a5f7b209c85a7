package ui_test

// The dashboard with a named key limited to agents, the recent changes, and the list and page details of
// issue 26.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/server"
)

const (
	scopedViewerKey = "alpha-viewer-key-for-tests"
	releaseKey      = "release-manager-key-for-tests"
)

// TestDashboardScopedKeyAndRecentChanges: signed in with a key limited to alpha-*, every page shows
// alpha-bot's things only; the overview's and the control's recent changes show the deny -> warn change
// with the name of the key that made it; the shadow control is marked in the list; the events page opens
// on matches.
func TestDashboardScopedKeyAndRecentChanges(t *testing.T) {
	a := startApp(t, appOptions{auth: true, keys: []server.Key{
		{Name: "alpha-viewer", Key: scopedViewerKey, Agents: []string{"alpha-*"}},
		{Name: "release-manager", Key: releaseKey, Admin: true},
	}})
	a.initAgent("alpha-bot", "alpha's agent")
	a.initAgent("bravo-bot", "bravo's agent")
	alpha := a.createControl("alpha-ctl", regexControl(`\d{9}`, "deny", "pre"))
	bravo := a.createControl("bravo-ctl", regexControl(`secret`, "deny", "pre"))
	shadow := regexControl(`maybe`, "deny", "pre")
	shadow["mode"] = "shadow"
	shadowID := a.createControl("alpha-shadow", shadow)
	for agent, id := range map[string]int64{"alpha-bot": alpha, "bravo-bot": bravo} {
		a.call("POST", fmt.Sprintf("/api/v1/agents/%s/controls/%d", agent, id), nil, http.StatusOK, nil)
	}
	a.call("POST", fmt.Sprintf("/api/v1/agents/alpha-bot/controls/%d", shadowID), nil, http.StatusOK, nil)
	// The release manager turns alpha-ctl's deny into a warn.
	req, _ := http.NewRequest("PUT", fmt.Sprintf("%s/api/v1/controls/%d/data", a.url, alpha),
		strings.NewReader(`{"data": {"scope": {"stages": ["pre"]}, "condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "\\d{9}"}}}, "action": {"decision": "warn"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", releaseKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("PUT data as release-manager: %v %v", res, err)
	}
	res.Body.Close()
	a.evaluate("alpha-bot", "pre", "123456789")
	a.evaluate("bravo-bot", "pre", "a secret")
	a.flushEvents()

	a.load("#/overview")
	a.signIn(scopedViewerKey)
	a.waitRendered("#/overview")
	a.waitJS("the recent changes", `!!document.querySelector('#ov-changes tr[data-audit-id]')`)
	changes := a.text("#ov-changes")
	for _, want := range []string{"release-manager", "data changed", `~ data.action.decision: "deny" -> "warn"`, "alpha-bot"} {
		if !strings.Contains(changes, want) {
			t.Errorf("the overview's recent changes lack %q:\n%s", want, changes)
		}
	}
	a.waitJS("the overview's figures", `!!document.querySelector('#overview-body [data-stat="execution_count"]')`)
	for _, route := range []string{"#/overview", "#/agents", "#/controls", "#/events", fmt.Sprintf("#/controls/%d/history", alpha)} {
		a.goTo(route)
		a.waitRendered(route)
		a.waitJS("the page's data", `!document.querySelector('[aria-busy="true"]')`)
		if txt := a.pageText(); strings.Contains(txt, "bravo") {
			t.Errorf("%s shows bravo to a key limited to alpha-*:\n%s", route, txt)
		}
	}
	a.goTo("#/agents")
	a.waitJS("alpha-bot listed", `/alpha-bot/.test(document.getElementById('main').textContent)`)
	a.goTo("#/controls")
	a.waitJS("the shadow mark", `!!document.querySelector('#controls-results .badge.shadow')`)
	if row := eval[string](a, "shadow row", `document.querySelector('#controls-results .badge.shadow').closest('tr').textContent`); !strings.Contains(row, "alpha-shadow") {
		t.Errorf("the shadow mark is on %q", row)
	}
	a.goTo(fmt.Sprintf("#/controls/%d/history", alpha))
	a.waitJS("the control's recent changes", `!!document.querySelector('#control-changes tr[data-audit-id]')`)
	if c := a.text("#control-changes"); !strings.Contains(c, "release-manager") || !strings.Contains(c, `"deny" -> "warn"`) {
		t.Errorf("the control's recent changes:\n%s", c)
	}
	a.goTo("#/events")
	a.waitRendered("#/events")
	if v := eval[string](a, "matched filter", `document.getElementById('ev-matched').value`); v != "true" {
		t.Errorf("the events page opens with matched=%q, want true", v)
	}
	a.goTo(fmt.Sprintf("#/controls/%d", bravo))
	a.waitJS("the control not found", `/does not exist/.test(document.getElementById('main').textContent)`)
	a.noPageErrors()
}

// TestByControlTableAt390: on a phone the agent page's "By control" table is a list of cards, nothing is
// cut off (no horizontal scroll of the page).
func TestByControlTableAt390(t *testing.T) {
	a := startApp(t, appOptions{width: 390, height: 844})
	a.initAgent("support-bot", "answers customers")
	id := a.createControl("block-a-rather-long-control-name", regexControl(`\d{9}`, "deny", "pre"))
	a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil, http.StatusOK, nil)
	a.evaluate("support-bot", "pre", "123456789")
	a.flushEvents()
	a.load("#/agents/support-bot")
	a.waitJS("the by-control table", `!!document.querySelector('#stats-controls table.stack')`)
	if w := eval[float64](a, "page width", `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the agent page is %v px wide at 390", w)
	}
	a.noPageErrors()
}
