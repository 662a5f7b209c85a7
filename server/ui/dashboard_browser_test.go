package ui_test

// The fleet pages of issue 17, at desktop and phone widths: the overview (the landing page), the events'
// live tail, URL filters and detail view, a control's activity, the links from every figure and chart
// point to the events behind it, and the schema-aware condition editor with its "Try it" panel.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

var widths = []struct {
	name          string
	width, height int
}{{"desktop", 1280, 900}, {"phone", 390, 844}}

// seedFleet registers two agents sharing a deny control, evaluates steps on both, and records two
// failing evaluations of a warn control: the overview then has denials on both agents and one control
// in error. It returns the ids of the deny and warn controls.
func seedFleet(a *app) (deny, warn int64) {
	a.initAgent("support-bot", "answers customers")
	a.initAgent("billing-agent", "refunds")
	deny = a.createControl("block-ssn", regexControl(`\d{3}-\d{2}-\d{4}`, "deny", "pre"))
	warn = a.createControl("warn-acme", regexControl(`(?i)acme`, "warn", "pre"))
	for _, ag := range []string{"support-bot", "billing-agent"} {
		for _, id := range []int64{deny, warn} {
			a.call("POST", fmt.Sprintf("/api/v1/agents/%s/controls/%d", ag, id), nil, http.StatusOK, nil)
		}
	}
	for _, in := range []string{"ssn 123-45-6789", "ssn 987-65-4321", "hello"} {
		a.evaluate("support-bot", "pre", in)
	}
	a.evaluate("billing-agent", "pre", "ssn 111-22-3333")
	a.evaluate("billing-agent", "pre", "about acme")
	var events []map[string]any
	for i := range 2 {
		events = append(events, map[string]any{"control_execution_id": uuid.NewString(), "agent_name": "billing-agent", "control_id": warn,
			"control_name": "warn-acme", "check_stage": "pre", "step_type": "llm", "step_name": "chat", "action": "warn", "matched": false,
			"confidence": 0, "timestamp": time.Now().UTC().Add(-time.Duration(i) * time.Second).Format(time.RFC3339Nano),
			"error_message": "evaluator timed out", "source": "sdk"})
	}
	a.call("POST", "/api/v1/observability/events", map[string]any{"events": events}, http.StatusAccepted, nil)
	a.flushEvents()
	return deny, warn
}

// eventRows lists the events page's rows as "agent|control|action|matched".
const eventRows = `[...document.querySelectorAll('#events-results tbody tr')].map(tr => [...tr.children].slice(1, 7).filter((_, i) => i !== 2 && i !== 3).map(td => td.textContent.trim()).join('|'))`

func TestOverviewIsTheLandingPage(t *testing.T) {
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			a := startApp(t, appOptions{width: w.width, height: w.height})
			deny, warn := seedFleet(a)
			a.load("")
			a.waitRendered("#/overview")
			stat := func(k string) string {
				return a.text(fmt.Sprintf(`#overview-body [data-stat=%q]`, k))
			}
			// support-bot: 3 steps x 2 controls minus the two denials' warn (a deny ends the
			// evaluation early or not: count what the server says instead of guessing).
			var st struct {
				Totals struct {
					ExecutionCount int64 `json:"execution_count"`
				} `json:"totals"`
			}
			a.call("GET", "/api/v1/observability/stats", nil, http.StatusOK, &st)
			a.waitJS("the figures", fmt.Sprintf(`(document.querySelector('#overview-body [data-stat="execution_count"]') || {}).textContent === '%d'`, st.Totals.ExecutionCount))
			if got := stat("deny"); got != "3" {
				t.Fatalf("denials = %q, want 3", got)
			}
			if got := stat("error_count"); got != "2" {
				t.Fatalf("errors = %q, want 2", got)
			}
			if got := stat("p95"); !strings.HasSuffix(got, "ms") {
				t.Fatalf("p95 = %q", got)
			}
			// The figures are above the fold: visible without scrolling.
			if !eval[bool](a, "figures above the fold", `document.querySelector('#overview-body .figures').getBoundingClientRect().bottom <= window.innerHeight`) {
				t.Fatal("the figures are below the fold")
			}
			if got := a.text("#top-agents tbody tr:first-child td:first-child"); got != "support-bot" {
				t.Fatalf("top agent = %q, want support-bot (2 denials)", got)
			}
			if got := a.text("#top-controls tbody tr:first-child td:first-child"); got != "block-ssn" {
				t.Fatalf("top control = %q", got)
			}
			if got := a.text("#failing-controls tbody"); !strings.Contains(got, "warn-acme") || !strings.Contains(got, "2") {
				t.Fatalf("controls in error = %q", got)
			}

			// The chart: deny and warn differ in shape, the legend hides a series, a bucket tells its figures.
			a.waitJS("deny squares", `!!document.querySelector('#overview-chart g[data-action="deny"] rect')`)
			a.click(`#ov-series-deny`)
			a.waitJS("deny hidden", `document.querySelector('#overview-chart g[data-action="deny"]').style.display === 'none' && document.getElementById('ov-series-deny').getAttribute('aria-pressed') === 'false'`)
			a.click(`#ov-series-deny`)
			a.waitJS("deny shown", `document.querySelector('#overview-chart g[data-action="deny"]').style.display === ''`)
			a.do("focus the last bucket", evalVoid(`[...document.querySelectorAll('#overview-chart a.bucket')].pop().dispatchEvent(new FocusEvent('focus'))`))
			a.waitJS("the tooltip", `(() => { const t = document.querySelector('#overview-chart .chart-tip'); return t && !t.hidden && /deny: 3/.test(t.textContent) && /evaluations/.test(t.textContent); })()`)

			// The denials of the top agent lead to exactly those events.
			a.click(`#top-agents tbody tr:first-child td:nth-child(2) a`)
			a.waitJS("the events page", `location.hash.startsWith('#/events?') && document.getElementById('main').getAttribute('aria-busy') === 'false' && document.querySelectorAll('#events-results tbody tr').length > 0 && document.getElementById('events-results').getAttribute('aria-busy') === 'false'`)
			rows := eval[[]string](a, "rows", eventRows)
			if len(rows) != 2 {
				t.Fatalf("denials of support-bot: %v", rows)
			}
			for _, r := range rows {
				if r != "support-bot|block-ssn|deny|yes" {
					t.Fatalf("row %q among the denials of support-bot", r)
				}
			}
			if got := eval[string](a, "agent filter", `document.getElementById('ev-agent').value`); got != "support-bot" {
				t.Fatalf("agent filter = %q", got)
			}

			// The errors of the failing control lead to its two failed events.
			a.goTo("#/overview")
			a.waitJS("the failing control", `!!document.querySelector('#failing-controls tbody a[href*="errored=true"]')`)
			a.click(`#failing-controls tbody a[href*="errored=true"]`)
			a.waitJS("two failed events", `location.hash.includes('errored=true') && document.querySelectorAll('#events-results tbody tr').length === 2 && [...document.querySelectorAll('#events-results tbody tr')].every(tr => /timed out/.test(tr.textContent))`)

			// A chart bucket leads to the events of its interval.
			a.goTo("#/overview")
			a.waitJS("bucket links", `document.querySelectorAll('#overview-chart a.bucket').length > 0`)
			href := eval[string](a, "bucket href", `[...document.querySelectorAll('#overview-chart a.bucket')].pop().getAttribute('href')`)
			if !strings.Contains(href, "from=") || !strings.Contains(href, "to=") {
				t.Fatalf("bucket link = %q", href)
			}
			a.do("follow the bucket", evalVoid(`[...document.querySelectorAll('#overview-chart a.bucket')].pop().dispatchEvent(new MouseEvent('click', { bubbles: true }))`))
			a.waitJS("the bucket's events", fmt.Sprintf(`location.hash === %q && document.querySelectorAll('#events-results tbody tr').length > 0`, href))
			_ = deny
			_ = warn
			a.noPageErrors()
		})
	}
}

func TestEventsLiveTailFiltersAndDetail(t *testing.T) {
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			a := startApp(t, appOptions{width: w.width, height: w.height})
			deny, _ := seedFleet(a)

			// Filters from the URL fill the form and apply.
			a.open(fmt.Sprintf("#/events?agent=billing-agent&control=%d&action=deny&matched=true", deny))
			a.waitJS("one denial of billing-agent", `document.querySelectorAll('#events-results tbody tr').length === 1`)
			if got := eval[[]string](a, "rows", eventRows); len(got) != 1 || got[0] != "billing-agent|block-ssn|deny|yes" {
				t.Fatalf("rows = %v", got)
			}
			if eval[string](a, "control filter", `document.getElementById('ev-controls').value`) != fmt.Sprint(deny) ||
				!eval[bool](a, "deny box", `document.getElementById('ev-action-deny').checked && !document.getElementById('ev-action-warn').checked`) {
				t.Fatal("the URL's filters are not in the form")
			}
			// A search writes its filters into the URL (shareable).
			a.setValue("#ev-agent", "support-bot")
			a.do("search", evalVoid(`document.getElementById('events-form').requestSubmit()`))
			a.waitJS("the URL", `location.hash.includes('agent=support-bot') && document.querySelectorAll('#events-results tbody tr').length === 2`)

			// Times carry their time zone.
			tz := eval[string](a, "time zone", `Intl.DateTimeFormat().resolvedOptions().timeZone`)
			if got := a.text("#events-tz"); !strings.Contains(got, tz) {
				t.Fatalf("time zone note = %q, want %s", got, tz)
			}
			if !eval[bool](a, "zone in times", `[...document.querySelectorAll('#events-results tbody time')].every(e => e.textContent === new Date(e.getAttribute('datetime')).toLocaleString([], { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' }) && /(UTC|GMT|[A-Z]{3})/.test(e.textContent))`) {
				t.Fatal("the times do not show their time zone")
			}

			// The detail view of one event.
			a.click(`#events-results button[data-details]`)
			a.waitJS("the detail dialog", `!!document.querySelector('#event-detail[open]')`)
			detail := a.text("#event-detail")
			for _, want := range []string{"support-bot", "block-ssn", "pre", "llm/chat", "regex", "input", "server"} {
				if !strings.Contains(detail, want) {
					t.Fatalf("detail lacks %q: %s", want, detail)
				}
			}
			a.click("#close-event")
			a.waitJS("no dialog", `!document.getElementById('event-detail')`)

			// The live tail: new events appear without a reload, and stop while paused.
			a.do("clear filters", evalVoid(`document.getElementById('events-reset').click()`))
			a.waitJS("every event", `!location.hash.includes('?') && document.querySelectorAll('#events-results tbody tr').length >= 8`)
			a.do("mark the page", evalVoid(`window.__noReload = true`))
			a.click("#events-live")
			a.waitJS("live on", `document.getElementById('events-live').getAttribute('aria-pressed') === 'true' && /Live: checked/.test(document.getElementById('live-status').textContent)`)
			a.evaluate("support-bot", "pre", "ssn 555-55-5555")
			a.flushEvents()
			a.waitJS("the new event on top", `window.__noReload === true && (() => { const r = document.querySelector('#events-results tbody tr.new'); return r && /support-bot/.test(r.textContent) && /block-ssn/.test(r.textContent); })()`)
			a.click("#events-live")
			a.waitJS("paused", `document.getElementById('events-live').getAttribute('aria-pressed') === 'false' && /paused/.test(document.getElementById('live-status').textContent)`)
			a.noPageErrors()
		})
	}
}

func TestControlActivityPage(t *testing.T) {
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			a := startApp(t, appOptions{width: w.width, height: w.height})
			deny, _ := seedFleet(a)
			a.open(fmt.Sprintf("#/controls/%d", deny))
			a.click("#activity-link")
			route := fmt.Sprintf("#/controls/%d/activity", deny)
			a.waitRendered(route)
			a.waitJS("the figures", `(document.querySelector('#activity-body [data-stat="deny"]') || {}).textContent === '3'`)
			agents := eval[[]string](a, "agents", `[...document.querySelectorAll('#activity-agents tbody tr')].map(tr => [...tr.children].map(td => td.textContent.trim()).join('|'))`)
			// support-bot evaluated block-ssn on 3 steps (2 matched), billing-agent on 2 (1 matched).
			if strings.Join(agents, ";") != "billing-agent|2|1|0;support-bot|3|2|0" {
				t.Fatalf("per agent = %v", agents)
			}
			if n := eval[int](a, "recent events", `document.querySelectorAll('#activity-events tbody tr').length`); n != 5 {
				t.Fatalf("recent events = %d, want 5", n)
			}
			// The matches of billing-agent lead to that one event.
			a.click(`#activity-agents tbody tr:first-child td:nth-child(3) a`)
			a.waitJS("its events", `location.hash.startsWith('#/events?') && document.querySelectorAll('#events-results tbody tr').length === 1 && document.getElementById('events-results').getAttribute('aria-busy') === 'false'`)
			if got := eval[[]string](a, "rows", eventRows); len(got) != 1 || got[0] != "billing-agent|block-ssn|deny|yes" {
				t.Fatalf("rows = %v", got)
			}
			a.noPageErrors()
		})
	}
}

func TestConditionFormAndTryIt(t *testing.T) {
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			a := startApp(t, appOptions{width: w.width, height: w.height})
			a.initAgent("support-bot", "")
			a.open("#/controls/new")
			a.waitJS("the form editor", `document.getElementById('condition-form').dataset.ready === 'true' && !!document.querySelector('#condition-form .cond-leaf')`)
			cond := func() map[string]any {
				var m map[string]any
				if err := json.Unmarshal([]byte(eval[string](a, "condition", `document.getElementById('ctl-condition').value`)), &m); err != nil {
					t.Fatalf("condition JSON: %v", err)
				}
				return m
			}
			// The regex leaf's form comes from its schema: pattern (required) and the flags' enum.
			if !eval[bool](a, "schema fields", `!!document.querySelector('#condition-form input[id^="cfg-pattern"]') && document.querySelectorAll('#condition-form input[type=checkbox][id^="cfg-flags-"]').length === 6`) {
				t.Fatal("the regex form lacks pattern or flags")
			}
			a.setValue(`#condition-form input[id^="cfg-pattern"]`, `\d{3}-\d{2}-\d{4}`)
			a.do("IGNORECASE", evalVoid(`document.querySelector('#condition-form input[value="IGNORECASE"]').click()`))
			if got := fmt.Sprint(cond()); got != `map[evaluator:map[config:map[flags:[IGNORECASE] pattern:\d{3}-\d{2}-\d{4}] name:regex] selector:map[path:input]]` {
				t.Fatalf("condition after the form = %s", got)
			}
			// The tree: turn the leaf into an "or", add a list leaf.
			a.setValue(`#condition-form select.cond-kind`, "or")
			a.waitJS("an or group", `!!document.querySelector('#condition-form fieldset[data-kind="or"]')`)
			a.click(`#condition-form .cond-add`)
			a.waitJS("two leaves", `document.querySelectorAll('#condition-form fieldset[data-kind="leaf"]').length === 2`)
			a.setValue(`#condition-form fieldset[data-kind="leaf"]:nth-of-type(2) select.cond-evaluator`, "list")
			a.waitJS("the list form", `!!document.querySelector('#condition-form textarea[id^="cfg-values"]')`)
			a.setValue(`#condition-form textarea[id^="cfg-values"]`, "refund\nchargeback")
			a.setValue(`#condition-form select[id^="cfg-match_mode"]`, `"contains"`)
			c := cond()
			or, _ := c["or"].([]any)
			if len(or) != 2 || fmt.Sprint(or[1]) != `map[evaluator:map[config:map[match_mode:contains values:[refund chargeback]] name:list] selector:map[path:input]]` {
				t.Fatalf("condition after the tree edits = %v", c)
			}
			// The raw JSON is still there, and editing it redraws the form.
			a.setValue("#ctl-condition", `{"not": {"selector": {"path": "output"}, "evaluator": {"name": "regex", "config": {"pattern": "x"}}}}`)
			a.waitJS("a not node", `!!document.querySelector('#condition-form fieldset[data-kind="not"]') && document.querySelector('#condition-form input.cond-path').value === 'output'`)
			a.setValue("#ctl-condition", `{"or": [`)
			a.waitJS("the broken-JSON note", `!!document.getElementById('condition-form-broken')`)

			// Try it: the draft (unsaved) on a typed step, then on a registered step.
			a.setValue("#ctl-name", "block-ssn")
			a.setValue("#ctl-condition", controlCondition)
			a.waitJS("valid", `!!document.getElementById('valid-mark')`)
			a.setValue("#try-input", "my ssn is 123-45-6789")
			a.click("#try-run")
			a.waitJS("a deny", `/Decision\s*deny/.test((document.getElementById('try-summary') || {}).textContent || '')`)
			var res struct {
				Decision string `json:"decision"`
				IsSafe   bool   `json:"is_safe"`
				Matches  []struct {
					ControlName string `json:"control_name"`
				} `json:"matches"`
			}
			if err := json.Unmarshal([]byte(a.text("#try-json")), &res); err != nil || res.Decision != "deny" || res.IsSafe || len(res.Matches) != 1 || res.Matches[0].ControlName != "draft" {
				t.Fatalf("try result = %+v (%v)", res, err)
			}
			a.waitJS("the registered steps", `document.getElementById('try-source').dataset.ready === 'true' && !!document.querySelector('#try-source option[value^="step:support-bot:"]')`)
			a.setValue("#try-source", "step:support-bot:1")
			if got := eval[string](a, "step", `document.getElementById('try-type').value + '/' + document.getElementById('try-name').value`); got != "tool/lookup_order" {
				t.Fatalf("step from the agent = %q", got)
			}
			a.setValue("#try-input", `{"order": 42}`)
			a.click("#try-run")
			a.waitJS("an allow", `/Decision\s*allow/.test((document.getElementById('try-summary') || {}).textContent || '') && /did not match/.test(document.getElementById('try-summary').textContent)`)
			// Nothing was saved by trying.
			var list struct {
				Controls []any `json:"controls"`
			}
			a.call("GET", "/api/v1/controls", nil, http.StatusOK, &list)
			if len(list.Controls) != 0 {
				t.Fatalf("trying saved something: %+v", list)
			}
			a.noPageErrors()
		})
	}
}

// TestOverviewShowsShadowControls: a control in shadow appears in the overview's own section with what it
// would have denied, apart from the figures, and its count leads to exactly its shadow events.
func TestOverviewShowsShadowControls(t *testing.T) {
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			a := startApp(t, appOptions{width: w.width, height: w.height})
			a.initAgent("support-bot", "answers customers")
			data := regexControl(`\d{3}-\d{2}-\d{4}`, "deny", "pre")
			data["mode"] = "shadow"
			id := a.createControl("ssn-draft", data)
			a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil, http.StatusOK, nil)
			for _, in := range []string{"ssn 123-45-6789", "hello", "ssn 987-65-4321"} {
				a.evaluate("support-bot", "pre", in) // allowed: a shadow control never decides
			}
			a.flushEvents()
			a.load("")
			a.waitRendered("#/overview")
			a.waitJS("the shadow section", `(document.querySelector('#shadow-controls tbody') || {}).textContent !== undefined && document.querySelector('#shadow-controls tbody').textContent.includes('ssn-draft')`)
			if got := a.text("#shadow-controls tbody tr:first-child td:nth-child(2)"); got != "2" {
				t.Fatalf("would have denied = %q, want 2", got)
			}
			if got := a.text("#shadow-controls tbody tr:first-child td:nth-child(4)"); got != "3" {
				t.Fatalf("evaluations = %q, want 3", got)
			}
			if got := a.text(`#overview-body [data-stat="deny"]`); got != "0" {
				t.Fatalf("the figures count a shadow denial: deny = %q", got)
			}
			// Every column is seen without scrolling sideways, at 390 px too (the table becomes cards).
			if wide := eval[[]string](a, "tables wider than their box", `[...document.querySelectorAll('#overview-body .table-wrap')].filter(w => w.scrollWidth > w.clientWidth + 1).map(w => w.parentElement.id)`); len(wide) > 0 {
				t.Fatalf("tables that scroll sideways: %v", wide)
			}
			a.click(`#shadow-controls tbody tr:first-child td:nth-child(2) a`)
			// The hash changes before the events page is drawn: the condition must hold off until it is.
			a.waitJS("the shadow events", `location.hash.includes('shadow=true') && document.getElementById('ev-shadow')?.value === 'true' && document.getElementById('events-results')?.getAttribute('aria-busy') === 'false' && document.querySelectorAll('#events-results tbody tr').length === 2`)
		})
	}
}
