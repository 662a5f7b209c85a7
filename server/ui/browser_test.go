package ui_test

// The harness of the dashboard's browser tests: it finds Chromium, starts a real guard server over a
// fresh SQLite store with the dashboard mounted, opens a headless browser on it and gives the scenarios
// small helpers that always wait for a condition under a deadline (never a fixed sleep).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/server"
	"github.com/guardrail-control/guard/server/capture"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/server/ui"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// chromiumEnv names the variable that points the tests at a Chromium binary (.ci/chromium.sh sets it).
const chromiumEnv = "GUARD_TEST_CHROMIUM"

// stepTimeout bounds every wait of a scenario.
const stepTimeout = 20 * time.Second

// Keys of the server started with authentication.
const (
	adminKey   = "admin-key-for-tests"
	regularKey = "regular-key-for-tests"
)

// chromiumPath returns the Chromium binary to drive. Without one the test is skipped, except under
// CI=true or when GUARD_TEST_CHROMIUM names a browser that is not there: then a missing browser is a
// failure, since CI must run these tests.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if env := os.Getenv(chromiumEnv); env != "" {
		p, err := exec.LookPath(env)
		if err != nil {
			t.Fatalf("%s=%s: no such executable: %v", chromiumEnv, env, err)
		}
		return p
	}
	for _, c := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("no Chromium found (set %s to its path, or install the Debian package chromium; .ci/chromium.sh does both)", chromiumEnv)
	if os.Getenv("CI") == "true" {
		t.Fatalf("browser tests must run under CI=true: %s", msg)
	}
	t.Skipf("browser tests skipped: %s", msg)
	return ""
}

// app is a running guard server with the dashboard, and a browser tab on it.
type app struct {
	t    *testing.T
	url  string
	st   *store.Store
	rec  *observability.Recorder
	cap  *capture.Recorder // nil unless appOptions.capture names agents
	auth bool
	ctx  context.Context // the browser tab

	mu      sync.Mutex
	console []string // uncaught exceptions and console errors of the page
}

type appOptions struct {
	auth          bool
	width, height int
	registry      *evaluator.Registry // nil: the built-in evaluators
	capture       []string            // agents whose steps are captured (GUARD_CAPTURE_AGENTS); nil: none
	captureRedact []string            // GUARD_CAPTURE_REDACT
	keys          []server.Key        // named keys (GUARD_API_KEYS_FILE), beside adminKey and regularKey
}

// startApp starts the server and the browser. The dashboard is mounted the way the server binary mounts
// it, with server.WithUI(ui.Handler()); observability records events with a short flush interval.
func startApp(t *testing.T, o appOptions) *app {
	t.Helper()
	chromium := chromiumPath(t)
	if o.width == 0 {
		o.width, o.height = 1280, 900
	}
	st := storetest.SQLite(t)
	rec := observability.NewRecorder(st, observability.RecorderConfig{FlushInterval: 50 * time.Millisecond})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rec.Close(ctx)
	})
	// The listener comes first so the server knows its loopback address and checks Host and Origin as
	// the server binary does: the dashboard must work under those checks.
	ts := httptest.NewUnstartedServer(nil)
	opts := []server.Option{
		server.WithListenAddr(ts.Listener.Addr().String()),
		server.WithVersion("ui-test"),
		server.WithObservability(true, rec),
		server.WithUI(ui.Handler()),
		server.WithPolicyPollInterval(20 * time.Millisecond),
	}
	if o.auth {
		opts = append(opts, server.WithAuth(true, []string{regularKey}, []string{adminKey}), server.WithKeys(o.keys))
	}
	if o.registry != nil {
		opts = append(opts, server.WithRegistry(o.registry))
	}
	var capRec *capture.Recorder
	if o.capture != nil {
		var err error
		capRec, err = capture.New(st, capture.Config{Agents: o.capture, RedactPaths: o.captureRedact, FlushInterval: time.Hour})
		if err != nil {
			t.Fatalf("capture.New: %v", err)
		}
		t.Cleanup(func() { _ = capRec.Close(context.Background()) })
		opts = append(opts, server.WithCapture(capRec))
	}
	srv, err := server.New(st, opts...)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ts.Config.Handler = srv
	ts.Start()
	t.Cleanup(ts.Close)

	a := &app{t: t, url: ts.URL, st: st, rec: rec, cap: capRec, auth: o.auth}
	a.ctx = newBrowser(t, chromium, o.width, o.height, a.recordConsole)
	return a
}

// newBrowser starts headless Chromium with a fresh profile and returns a context bound to one tab.
func newBrowser(t *testing.T, chromium string, width, height int, onConsole func(chromedp.ConsoleMessage)) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first action starts the browser and ties it to the context it runs with: that must be the tab's
	// own context, not one with a deadline (its end would kill the browser).
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("starting Chromium (%s): %v", chromium, err)
	}
	if onConsole != nil {
		go func() {
			for m, err := range chromedp.Console(ctx) {
				if err != nil {
					return
				}
				onConsole(m)
			}
		}()
	}
	return ctx
}

func (a *app) recordConsole(m chromedp.ConsoleMessage) {
	// A failed fetch (a 422 from live validation, a 403 for a read-only key) is logged by the browser as
	// "Failed to load resource": that is the API answering, not a page error.
	if !m.IsException() && m.Type != "error" || strings.Contains(m.Text, "Failed to load resource") {
		return
	}
	a.mu.Lock()
	a.console = append(a.console, m.String())
	a.mu.Unlock()
}

// consoleErrors returns the page errors seen so far.
func (a *app) consoleErrors() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.console...)
}

// do runs browser actions under the step deadline; what names the step in the failure.
func (a *app) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(a.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		a.t.Fatalf("%s: %v\npage errors: %v\npage text:\n%s", what, err, a.consoleErrors(), a.pageText())
	}
}

// eval evaluates a JavaScript expression and decodes its value.
func eval[T any](a *app, what, expr string) T {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(a.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		a.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// waitJS waits until the JavaScript expression is truthy.
func (a *app) waitJS(what, expr string) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(a.ctx, stepTimeout+5*time.Second)
	defer cancel()
	// An exception (an element not drawn yet after a route change) means "not yet", not a failure: the
	// condition is polled until it holds or the time is up, and the last exception is reported then.
	guarded := `(() => { try { return !!(` + expr + `); } catch (e) { window.__waitErr = String(e); return false; } })()`
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](guarded,
		chromedp.WithPollingTimeout(stepTimeout), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		ectx, ecancel := context.WithTimeout(a.ctx, 3*time.Second)
		last, _ := chromedp.Run(ectx, chromedp.Evaluate[string](`String(window.__waitErr || "")`))
		ecancel()
		a.t.Fatalf("waiting for %s: %v\nlast exception of the condition: %q\npage errors: %v\npage text:\n%s", what, err, last, a.consoleErrors(), a.pageText())
	}
}

// pageText is the visible text of the page, for failure messages.
func (a *app) pageText() string {
	ctx, cancel := context.WithTimeout(a.ctx, 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return "(unavailable: " + err.Error() + ")"
	}
	return s
}

// open loads the dashboard at the given route (a fragment such as "#/agents") and waits until the page
// has rendered it.
func (a *app) open(route string) {
	a.t.Helper()
	a.load(route)
	a.waitRendered(route)
}

// load loads the dashboard at the given route without waiting for it (a server with authentication
// shows the login form first).
func (a *app) load(route string) {
	a.t.Helper()
	a.do("navigate to "+route, chromedp.Navigate(a.url+"/ui/"+route))
}

// goTo switches route inside the loaded page and waits until it has rendered.
func (a *app) goTo(route string) {
	a.t.Helper()
	a.do("go to "+route, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = %q`, route)))
	a.waitRendered(route)
}

// waitRendered waits for the router's marker: main carries the rendered route and is no longer busy.
func (a *app) waitRendered(route string) {
	a.t.Helper()
	a.waitJS("route "+route+" rendered", fmt.Sprintf(
		`(() => { const m = document.getElementById('main'); return m && m.dataset.route === %q && m.getAttribute('aria-busy') === 'false'; })()`, route))
}

// setValue sets the value of a form field the way typing does: it fires input and change events.
func (a *app) setValue(selector, value string) {
	a.t.Helper()
	a.do("set "+selector, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		if (!el) throw new Error('no element ' + %q);
		el.value = %q;
		el.dispatchEvent(new Event('input', { bubbles: true }));
		el.dispatchEvent(new Event('change', { bubbles: true }));
	})()`, selector, selector, value)))
}

// click waits for the element to be visible and enabled, then clicks it.
func (a *app) click(selector string) {
	a.t.Helper()
	a.do("click "+selector,
		chromedp.WaitVisible(chromedp.CSS(selector)),
		chromedp.WaitEnabled(chromedp.CSS(selector)),
		chromedp.Click(chromedp.CSS(selector)))
}

// text returns the text content of the first element matching selector ("" when there is none).
func (a *app) text(selector string) string {
	a.t.Helper()
	return eval[string](a, "text of "+selector, fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ''`, selector))
}

// call sends one API request from Go (with the admin key when authentication is on) and decodes the
// JSON answer into out (when not nil); it fails the test unless the status is want.
func (a *app) call(method, path string, body any, want int, out any) {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.url+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if a.auth {
		req.Header.Set("X-API-Key", adminKey)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		a.t.Fatalf("%s %s = %d, want %d: %s", method, path, res.StatusCode, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			a.t.Fatalf("%s %s: decoding %s: %v", method, path, data, err)
		}
	}
}

// initAgent registers an agent with one llm step and one tool step.
func (a *app) initAgent(name, description string) {
	a.t.Helper()
	a.call("POST", "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": name, "agent_description": description, "agent_version": "1.0.0",
			"agent_metadata": map[string]any{"team": "support"}},
		"steps": []map[string]any{
			{"type": "llm", "name": "chat", "description": "answers customers"},
			{"type": "tool", "name": "lookup_order", "description": "reads an order"},
		},
		"conflict_mode": "overwrite",
	}, http.StatusOK, nil)
}

// createControl creates a control through the API and returns its id.
func (a *app) createControl(name string, data map[string]any) int64 {
	a.t.Helper()
	var res struct {
		ControlID int64 `json:"control_id"`
	}
	a.call("PUT", "/api/v1/controls", map[string]any{"name": name, "data": data}, http.StatusOK, &res)
	return res.ControlID
}

// regexControl is control data denying text that matches pattern.
func regexControl(pattern, decision string, stages ...string) map[string]any {
	d := map[string]any{
		"description": "blocks " + pattern,
		"scope":       map[string]any{"stages": stages},
		"condition": map[string]any{"selector": map[string]any{"path": "input"},
			"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": pattern}}},
		"action": map[string]any{"decision": decision},
		"tags":   []string{"pii"},
	}
	if decision == "steer" {
		d["action"] = map[string]any{"decision": "steer",
			"steering_context": map[string]any{"message": "remove the personal data", "required_actions": []string{"redact"}}}
	}
	return d
}

// evaluate sends one POST /evaluation and returns the decision.
func (a *app) evaluate(agent, stage, input string) string {
	a.t.Helper()
	var res struct {
		Decision string `json:"decision"`
	}
	a.call("POST", "/api/v1/evaluation", map[string]any{"agent_name": agent, "stage": stage,
		"step": map[string]any{"type": "llm", "name": "chat", "input": input}}, http.StatusOK, &res)
	return res.Decision
}

// flushEvents writes the buffered observability events now.
func (a *app) flushEvents() {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	if err := a.rec.Flush(ctx); err != nil {
		a.t.Fatalf("flush events: %v", err)
	}
}

// flushCaptured writes the buffered captured steps now (the recorder's own interval is an hour).
func (a *app) flushCaptured() {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	if err := a.cap.Flush(ctx); err != nil {
		a.t.Fatalf("flush captured steps: %v", err)
	}
}

// noPageErrors fails the test when the page logged errors or threw.
func (a *app) noPageErrors() {
	a.t.Helper()
	if errs := a.consoleErrors(); len(errs) > 0 {
		a.t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// evalVoid is an action evaluating expr for its effect.
func evalVoid(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](expr)
}
