package ui_test

// More of issue 17's dashboard points, at desktop and phone widths: the overview over a chosen range,
// deny and warn told apart by shape and line as well as colour, the statistics of the agent and control
// pages above the fold, a control's chart buckets leading to its own events, and "Try it" on a step taken
// from a recorded event.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestOverviewRangeAndSeriesShapes: the overview's figures follow the chosen time range (a denial three
// hours old counts in 24h, not in 1h), and the deny and warn series differ in marker and line style, not
// only in colour.
func TestOverviewRangeAndSeriesShapes(t *testing.T) {
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			a := startApp(t, appOptions{width: w.width, height: w.height})
			deny, _ := seedFleet(a)
			old := time.Now().UTC().Add(-3 * time.Hour)
			a.call("POST", "/api/v1/observability/events", map[string]any{"events": []map[string]any{{
				"control_execution_id": uuid.NewString(), "agent_name": "support-bot", "control_id": deny, "control_name": "block-ssn",
				"check_stage": "pre", "step_type": "llm", "step_name": "chat", "action": "deny", "matched": true, "confidence": 1,
				"timestamp": old.Format(time.RFC3339Nano), "source": "sdk"}}}, http.StatusAccepted, nil)
			a.flushEvents()
			a.open("#/overview")
			deniedIs := func(n string) string {
				return fmt.Sprintf(`(document.querySelector('#overview-body [data-stat="deny"]') || {}).textContent === '%s' && document.getElementById('overview-body').getAttribute('aria-busy') === 'false'`, n)
			}
			a.waitJS("3 denials in the last hour", deniedIs("3"))

			// Shapes: deny is a solid line with squares, warn a dashed line with triangles (paths).
			a.waitJS("the series", `!!document.querySelector('#overview-chart g[data-action="deny"]') && !!document.querySelector('#overview-chart g[data-action="warn"]')`)
			got := eval[string](a, "series styles", `['deny', 'warn'].map(k => {
				const g = document.querySelector('#overview-chart g[data-action="' + k + '"]');
				const line = g.querySelector('path[fill="none"]');
				const markers = [...g.children].filter(e => e !== line);
				return k + ':' + (line.getAttribute('stroke-dasharray') || 'solid') + ':' + [...new Set(markers.map(m => m.tagName))].join(',') + ':' + line.getAttribute('stroke');
			}).join(' ')`)
			if got != "deny:solid:rect:#b42318 warn:3 3:path:#8a6d00" {
				t.Fatalf("deny and warn series = %q", got)
			}
			// The legend draws the same shapes as the chart.
			if !eval[bool](a, "legend swatches", `!!document.querySelector('#ov-series-deny svg rect') && !!document.querySelector('#ov-series-warn svg path') && !document.querySelector('#ov-series-warn svg rect')`) {
				t.Fatal("the legend does not show the series' markers")
			}

			// A wider range takes in the older denial, and its link asks for events from before it.
			a.setValue("#ov-range", "24h")
			a.waitJS("4 denials in 24 hours", deniedIs("4"))
			href := eval[string](a, "denials link", `document.querySelector('#overview-body [data-stat="deny"]').closest('a').getAttribute('href')`)
			i := strings.Index(href, "from=")
			if i < 0 {
				t.Fatalf("denials link %q has no from", href)
			}
			from, err := time.Parse(time.RFC3339, strings.SplitN(strings.ReplaceAll(href[i+5:], "%3A", ":"), "&", 2)[0])
			if err != nil || !from.Before(old) {
				t.Fatalf("denials link %q: from %v (%v) is not before the older denial %v", href, from, err, old)
			}
			a.do("follow the denials", evalVoid(`document.querySelector('#overview-body [data-stat="deny"]').closest('a').click()`))
			a.waitJS("the 4 denials", `location.hash.startsWith('#/events?') && document.getElementById('events-results')?.getAttribute('aria-busy') === 'false' && document.querySelectorAll('#events-results tbody tr').length === 4`)
			a.noPageErrors()
		})
	}
}

// TestStatisticsAboveTheFold: on the agent page and on a control's activity page, the figures are seen
// without scrolling, and a bucket of the control's chart leads to that control's events of the bucket.
func TestStatisticsAboveTheFold(t *testing.T) {
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			a := startApp(t, appOptions{width: w.width, height: w.height})
			deny, _ := seedFleet(a)
			aboveFold := func(sel string) bool {
				return eval[bool](a, sel+" above the fold", fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return r.height > 0 && r.bottom <= window.innerHeight; })()`, sel))
			}

			a.open("#/agents/support-bot")
			a.waitJS("the agent's figures", `(document.querySelector('#stats-totals [data-stat="deny"]') || {}).textContent === '2'`)
			if !aboveFold("#stats-totals .figures") {
				t.Fatal("the agent's figures are below the fold")
			}

			route := fmt.Sprintf("#/controls/%d/activity", deny)
			a.open(route)
			a.waitJS("the control's figures", `(document.querySelector('#activity-body [data-stat="deny"]') || {}).textContent === '3'`)
			if !aboveFold("#activity-body .figures") {
				t.Fatal("the control's figures are below the fold")
			}
			a.waitJS("bucket links", `document.querySelectorAll('#activity-chart a.bucket').length > 0`)
			href := eval[string](a, "bucket href", `[...document.querySelectorAll('#activity-chart a.bucket')].pop().getAttribute('href')`)
			if !strings.Contains(href, fmt.Sprintf("control=%d", deny)) || !strings.Contains(href, "from=") || !strings.Contains(href, "to=") {
				t.Fatalf("bucket link = %q", href)
			}
			a.do("follow the bucket", evalVoid(`[...document.querySelectorAll('#activity-chart a.bucket')].pop().dispatchEvent(new MouseEvent('click', { bubbles: true }))`))
			a.waitJS("the bucket's events", fmt.Sprintf(`location.hash === %q && document.getElementById('events-results')?.getAttribute('aria-busy') === 'false' && document.querySelectorAll('#events-results tbody tr').length > 0`, href))
			for _, r := range eval[[]string](a, "rows", eventRows) {
				if !strings.Contains(r, "|block-ssn|") {
					t.Fatalf("row %q among the events of block-ssn's bucket", r)
				}
			}
			a.noPageErrors()
		})
	}
}

// TestTryItOnARecordedEvent: in the editor of a saved control, "Try it" offers the control's recorded
// events; picking one fills the step's type, name and stage (events keep no payload: the input is typed),
// and the draft is evaluated on it.
func TestTryItOnARecordedEvent(t *testing.T) {
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			a := startApp(t, appOptions{width: w.width, height: w.height})
			a.initAgent("support-bot", "")
			data := regexControl(`\d{3}-\d{2}-\d{4}`, "deny", "post")
			data["condition"].(map[string]any)["selector"] = map[string]any{"path": "output"}
			deny := a.createControl("block-ssn", data)
			a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", deny), nil, http.StatusOK, nil)
			a.call("POST", "/api/v1/evaluation", map[string]any{"agent_name": "support-bot", "stage": "post",
				"step": map[string]any{"type": "tool", "name": "lookup_order", "input": map[string]any{"order": 1}, "output": "ssn 123-45-6789"}}, http.StatusOK, nil)
			a.flushEvents()

			a.open(fmt.Sprintf("#/controls/%d", deny))
			a.waitJS("the recorded event", `document.getElementById('try-source')?.dataset.ready === 'true' && !!document.querySelector('#try-source option[value="event:0"]')`)
			if got := eval[string](a, "group", `document.querySelector('#try-source option[value="event:0"]').parentElement.label`); got != "Recent events of this control" {
				t.Fatalf("event group = %q", got)
			}
			a.setValue("#try-source", "event:0")
			if got := eval[string](a, "step", `[...['try-type', 'try-name', 'try-stage']].map(id => document.getElementById(id).value).join('/')`); got != "tool/lookup_order/post" {
				t.Fatalf("step from the event = %q", got)
			}
			a.setValue("#try-output", "your ssn: 987-65-4321")
			a.click("#try-run")
			a.waitJS("a deny", `/Decision\s*deny/.test((document.getElementById('try-summary') || {}).textContent || '')`)
			if js := a.text("#try-json"); !strings.Contains(js, `"control_name": "draft"`) || !strings.Contains(js, `"decision": "deny"`) {
				t.Fatalf("try result = %s", js)
			}
			a.noPageErrors()
		})
	}
}
