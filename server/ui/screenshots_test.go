package ui_test

// GUARD_SCREENSHOTS=1 go test -run TestScreenshots ./server/ui/ seeds a realistic data set and writes
// the dashboard page's screenshots (docs/dashboard.md) of the main pages, at desktop (1280 px) and phone (390 px) widths, into
// docs/screenshots/.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
)

// seedShowcase fills the server with agents, controls, links, versions and an hour of events.
func seedShowcase(a *app) (controlID int64) {
	a.initAgent("support-bot", "answers customer questions about orders")
	a.initAgent("billing-agent", "issues refunds and invoices")
	a.initAgent("research-assistant", "searches internal documents")
	ssn := a.createControl("block-ssn", regexControl(`\b\d{3}-\d{2}-\d{4}\b`, "deny", "pre"))
	steer := a.createControl("steer-refund-policy", regexControl(`(?i)refund`, "steer", "pre"))
	warn := a.createControl("warn-competitor-names", regexControl(`(?i)acme|globex`, "warn", "post"))
	logc := a.createControl("log-tool-calls", regexControl(`.`, "log", "pre", "post"))
	a.createControl("allow-internal-docs", regexControl(`^internal:`, "allow", "pre"))
	a.call("PUT", "/api/v1/controls", map[string]any{"name": "draft-pii-filter"}, http.StatusOK, nil)
	for _, id := range []int64{ssn, steer, warn, logc} {
		a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil, http.StatusOK, nil)
	}
	a.call("POST", fmt.Sprintf("/api/v1/agents/billing-agent/controls/%d", steer), nil, http.StatusOK, nil)
	// A control in shadow: the overview shows what it would have denied, apart from the figures.
	shadowData := regexControl(`[\w.]+@[\w.]+`, "deny", "pre")
	shadowData["mode"] = "shadow"
	shadow := a.createControl("block-emails", shadowData)
	a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", shadow), nil, http.StatusOK, nil)
	// Two more versions of block-ssn for the history page.
	v2 := regexControl(`\b\d{3}-?\d{2}-?\d{4}\b`, "deny", "pre", "post")
	v2["description"] = "blocks US social security numbers, with or without dashes"
	v2["action"] = map[string]any{"decision": "deny", "metadata": map[string]any{"severity": "high", "compliance": "SOC2"}}
	a.call("PUT", fmt.Sprintf("/api/v1/controls/%d/data", ssn), map[string]any{"data": v2}, http.StatusOK, nil)
	a.call("PATCH", fmt.Sprintf("/api/v1/controls/%d", ssn), map[string]any{"enabled": false}, http.StatusOK, nil)
	a.call("PATCH", fmt.Sprintf("/api/v1/controls/%d", ssn), map[string]any{"enabled": true}, http.StatusOK, nil)

	// Live evaluations, then an hour of synthetic events so the chart has a shape.
	for _, in := range []string{"my ssn is 123-45-6789", "I want a refund", "hello", "compare with acme", "internal: roadmap"} {
		a.evaluate("support-bot", "pre", in)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	controls := []struct {
		id     int64
		name   string
		action string
		rate   float64
		shadow bool
	}{{ssn, "block-ssn", "deny", .15, false}, {steer, "steer-refund-policy", "steer", .3, false}, {warn, "warn-competitor-names", "warn", .1, false},
		{logc, "log-tool-calls", "log", .9, false}, {shadow, "block-emails", "deny", .08, true}}
	// The fleet: most traffic is support-bot's, some billing-agent's and research-assistant's.
	agents := []string{"support-bot", "support-bot", "support-bot", "billing-agent", "billing-agent", "research-assistant"}
	now := time.Now().UTC()
	var events []map[string]any
	for m := 58; m >= 1; m-- {
		at := now.Add(-time.Duration(m) * time.Minute)
		for _, c := range controls {
			n := 1 + rnd.IntN(4)
			for range n {
				agent := agents[rnd.IntN(len(agents))]
				matched := rnd.Float64() < c.rate*(1+0.8*float64((m/10)%3))
				errMsg := ""
				if c.action == "warn" && rnd.IntN(12) == 0 { // the competitor list times out now and then
					errMsg, matched = "evaluator timed out after 1000 ms", false
				}
				events = append(events, map[string]any{
					"control_execution_id": uuid.NewString(), "agent_name": agent, "control_id": c.id, "control_name": c.name, "shadow": c.shadow,
					"check_stage": "pre", "step_type": "llm", "step_name": "chat", "action": c.action, "matched": matched,
					"confidence": 1.0, "timestamp": at.Add(time.Duration(rnd.IntN(50)) * time.Second).Format(time.RFC3339Nano),
					"execution_duration_ms": 0.05 + rnd.Float64()/10, "evaluator_name": "regex", "selector_path": "input", "source": "sdk",
					"error_message": errMsg, "trace_id": fmt.Sprintf("%016x%016x", rnd.Uint64(), rnd.Uint64()), "span_id": fmt.Sprintf("%016x", rnd.Uint64()),
				})
			}
		}
	}
	a.call("POST", "/api/v1/observability/events", map[string]any{"events": events}, http.StatusAccepted, nil)
	a.flushEvents()
	return ssn
}

func TestScreenshots(t *testing.T) {
	if os.Getenv("GUARD_SCREENSHOTS") != "1" {
		t.Skip("set GUARD_SCREENSHOTS=1 to write docs/screenshots/*.png")
	}
	dir := filepath.Join("..", "..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, vp := range []struct {
		suffix        string
		width, height int
	}{{"desktop", 1280, 800}, {"mobile", 390, 844}} {
		t.Run(vp.suffix, func(t *testing.T) {
			a := startApp(t, appOptions{width: vp.width, height: vp.height})
			id := seedShowcase(a)
			shots := []struct {
				name, route string
				prepare     func()
			}{
				{"overview", "#/overview", func() {
					a.waitJS("the chart", `!!document.querySelector('#overview-chart svg [data-action="deny"]')`)
					a.waitJS("the shadow control", `/block-emails/.test((document.getElementById('shadow-controls') || {}).textContent || '')`)
				}},
				{"control-activity", fmt.Sprintf("#/controls/%d/activity", id), func() {
					a.waitJS("the chart", `!!document.querySelector('#activity-chart svg [data-action="deny"]')`)
					// The tooltip of the busiest bucket, as a mouse over it shows it.
					a.do("hover a bucket", evalVoid(`(() => { const b = [...document.querySelectorAll('#activity-chart a.bucket')].pop(); b.dispatchEvent(new MouseEvent('mouseenter')); })()`))
				}},
				{"event-detail", "#/events", func() {
					a.waitJS("events", `document.querySelectorAll('#events-results tbody tr').length > 5`)
					a.click(`#events-results button[data-details]`)
					a.waitJS("the dialog", `!!document.querySelector('#event-detail[open]')`)
				}},
				{"agents", "#/agents", nil},
				{"agent-detail", "#/agents/support-bot", func() {
					a.waitJS("the chart", `!!document.querySelector('#stats-chart svg [data-action="log"]')`)
				}},
				{"controls", "#/controls", nil},
				{"try-it", fmt.Sprintf("#/controls/%d", id), func() {
					a.waitJS("the form valid", `!!document.getElementById('valid-mark') && document.getElementById('condition-form').dataset.ready === 'true'`)
					a.setValue("#try-input", "my ssn is 123-45-6789")
					a.click("#try-run")
					a.waitJS("the result", `!!document.getElementById('try-summary')`)
				}},
				{"control-editor", fmt.Sprintf("#/controls/%d", id), func() {
					a.waitJS("the form valid", `!!document.getElementById('valid-mark')`)
					a.setValue("#ctl-condition", `{
  "selector": {"path": "input"},
  "evaluator": {"name": "regex", "config": {"pattern": "(\\d{3}-\\d{2}"}}
}`)
					a.waitJS("the pattern problem", `!!document.querySelector('.problem[data-path="data.condition.evaluator.config.pattern"]')`)
				}},
				{"history", fmt.Sprintf("#/controls/%d/history", id), func() {
					a.setValue("#diff-from", "1")
					a.waitJS("the diff", `/removed/.test(document.getElementById('diff-summary').textContent) && document.querySelectorAll('#diff-output .add').length > 2`)
				}},
				{"events", "#/events", func() {
					a.waitJS("events", `document.querySelectorAll('#events-results tbody tr').length > 5`)
					a.setValue("#ev-limit", "10") // a new page size applies at once
					a.waitJS("ten events", `document.querySelectorAll('#events-results tbody tr').length === 10`)
				}},
			}
			shots = append(shots, struct {
				name, route string
				prepare     func()
			}{"evaluators", "#/evaluators", nil})
			a.open("#/overview")
			for _, s := range shots {
				a.goTo(s.route)
				if s.prepare != nil {
					s.prepare()
				}
				a.do("blur", evalVoid(`document.activeElement && document.activeElement.blur()`))
				writeShot(t, a, filepath.Join(dir, s.name+"-"+vp.suffix+".png"))
			}
			a.noPageErrors()

			// The sign-in form of a server with authentication, after a wrong key.
			l := startApp(t, appOptions{width: vp.width, height: vp.height, auth: true})
			l.load("#/agents")
			l.signIn("wrong-key")
			l.waitJS("the rejection", `!!document.getElementById('login-error')`)
			writeShot(t, l, filepath.Join(dir, "login-"+vp.suffix+".png"))
		})
	}
}

// writeShot saves a full-page PNG of what a shows.
func writeShot(t *testing.T, a *app, path string) {
	t.Helper()
	a.do("scroll to top", evalVoid(`window.scrollTo(0, 0)`))
	ctx, cancel := context.WithTimeout(a.ctx, stepTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", path, len(png))
}
