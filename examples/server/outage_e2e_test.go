package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard/store/storetest"
)

// TestDatabaseOutageAndRecoveryPostgres runs the server on PostgreSQL behind a TCP proxy, cuts the
// proxy and restores it (issue 3 "Bad input", issue 4 point 3):
//
//   - during the outage every control-plane read and write answers 503 DATABASE_UNAVAILABLE with a
//     problem body, never a 500; /health answers 200 with "database": "unavailable" and /ready 503;
//   - POST /evaluation for an agent whose engine is already compiled keeps answering from that engine
//     (the last policy it saw: fail static, not fail closed), even when a write just before the outage
//     made that engine stale and its revalidation fails; an agent never evaluated before cannot be
//     loaded and gets the 503;
//   - once the proxy listens again on the same port, everything works within a deadline without a
//     restart (/ready answers 200 again), and every control, version, agent and link written before the outage is still there.
func TestDatabaseOutageAndRecoveryPostgres(t *testing.T) {
	pgURL := storetest.PostgresURL(t)
	u, err := url.Parse(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.addr
	// Observability on with an hour's flush interval: events are written only at shutdown.
	env := map[string]string{"DATABASE_URL": u.String(), "OBSERVABILITY_ENABLED": "true", "OBSERVABILITY_FLUSH_INTERVAL_SECONDS": "3600"}
	p := startServer(t, env, "serve", "--migrate")

	// Before the outage: two controls (one edited, so it has two versions), two agents linked to the
	// first; only cached-bot is evaluated, so only its engine is compiled.
	deny := int64(p.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "block-ssn", "data": regex(`\d{3}-\d{2}-\d{4}`, "deny")})["control_id"].(float64))
	other := int64(p.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "steer-email", "data": regex(`send email`, "steer")})["control_id"].(float64))
	p.call(200, "PUT", controlPath(other)+"/data", map[string]any{"data": regex(`send mail`, "steer")})
	for _, agent := range []string{"cached-bot", "cold-bot"} {
		p.call(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": agent},
			"steps": []any{map[string]any{"type": "llm", "name": "chat"}}})
		p.call(200, "POST", fmt.Sprintf("/api/v1/agents/%s/controls/%d", agent, deny), nil)
	}
	if got := p.decide("cached-bot", "pre", "ssn 123-45-6789"); got != "deny" {
		t.Fatalf("before the outage: %s, want deny", got)
	}
	// A write after the compilation marks every cached engine stale: cached-bot's first evaluation in
	// the outage must revalidate, fail to reach the database and fall back to the engine it has.
	p.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "unlinked", "data": regex("unlinked", "deny")})
	reads := []string{
		"/api/v1/controls", controlPath(deny), controlPath(other) + "/data", controlPath(other) + "/versions",
		controlPath(other) + "/versions/1", "/api/v1/agents", "/api/v1/agents/cold-bot", "/api/v1/agents/cold-bot/controls",
	}
	before := map[string]any{}
	for _, path := range reads {
		before[path] = p.call(200, "GET", path, nil)
	}

	proxy.cut()

	outage := []struct{ method, path string }{
		{"GET", "/api/v1/controls"},
		{"GET", controlPath(deny)},
		{"GET", controlPath(other) + "/data"},
		{"GET", controlPath(other) + "/versions"},
		{"GET", controlPath(other) + "/versions/1"},
		{"GET", "/api/v1/agents"},
		{"GET", "/api/v1/agents/cold-bot"},
		{"GET", "/api/v1/agents/cold-bot/controls"},
		{"PUT", "/api/v1/controls"},
		{"PATCH", controlPath(deny)},
		{"PUT", controlPath(deny) + "/data"},
		{"DELETE", controlPath(other)},
		{"POST", controlPath(other) + "/versions/1/restore"},
		{"POST", "/api/v1/agents/initAgent"},
		{"PATCH", "/api/v1/agents/cold-bot"},
		{"POST", fmt.Sprintf("/api/v1/agents/cold-bot/controls/%d", other)},
		{"DELETE", fmt.Sprintf("/api/v1/agents/cold-bot/controls/%d", deny)},
		{"POST", "/api/v1/evaluation"}, // cold-bot: no compiled engine to fall back on
		{"POST", "/api/v1/observability/events/query"},
		{"GET", "/api/v1/observability/stats?agent_name=cached-bot"},
		{"GET", fmt.Sprintf("/api/v1/observability/stats/controls/%d?agent_name=cached-bot", deny)},
	}
	bodies := map[string]any{
		"PUT /api/v1/controls":                    map[string]any{"name": "during-outage", "data": regex("x", "deny")},
		"PATCH " + controlPath(deny):              map[string]any{"enabled": false},
		"PUT " + controlPath(deny) + "/data":      map[string]any{"data": regex("y", "deny")},
		"POST /api/v1/agents/initAgent":           map[string]any{"agent": map[string]any{"agent_name": "new-bot"}},
		"PATCH /api/v1/agents/cold-bot":           map[string]any{"agent_description": "changed"},
		"POST /api/v1/observability/events/query": map[string]any{"agent_name": "cached-bot"},
		"POST /api/v1/evaluation":                 map[string]any{"agent_name": "cold-bot", "stage": "pre", "step": map[string]any{"type": "llm", "name": "chat", "input": "ssn 123-45-6789"}},
	}
	for _, r := range outage {
		status, header, b := p.do(r.method, r.path, bodies[r.method+" "+r.path], nil)
		var prob map[string]any
		_ = json.Unmarshal(b, &prob)
		if status != http.StatusServiceUnavailable || prob["error_code"] != "DATABASE_UNAVAILABLE" ||
			prob["status"] != float64(503) || !strings.HasPrefix(header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("during the outage %s %s = %d %s (%s), want a 503 DATABASE_UNAVAILABLE problem", r.method, r.path, status, b, header.Get("Content-Type"))
		}
	}
	// The compiled engine of cached-bot keeps enforcing the policy it had.
	for input, want := range map[string]string{"ssn 123-45-6789": "deny", "hello": "allow"} {
		if got := p.decide("cached-bot", "pre", input); got != want {
			t.Errorf("during the outage cached-bot %q: %s, want %s from its compiled engine", input, got, want)
		}
	}
	// Events posted during the outage are accepted into the buffer (written at the next flush).
	var posted struct{ Received, Enqueued, Dropped int }
	p.callInto(202, "POST", "/api/v1/observability/events", map[string]any{"events": []any{map[string]any{
		"control_execution_id": "7f0b2c7e-4a43-4f55-9d0e-1d2a3b4c5d6e", "agent_name": "outage-agent", "control_id": deny,
		"control_name": "block-ssn", "check_stage": "pre", "step_type": "llm", "step_name": "chat", "action": "deny",
		"matched": true, "confidence": 1, "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "source": "sdk"}}}, &posted)
	if posted.Enqueued != 1 {
		t.Errorf("POST /observability/events during the outage: %+v, want 1 enqueued", posted)
	}
	if !strings.Contains(p.stderr.String(), "using the cached engine") {
		t.Errorf("no log line says cached-bot's stale engine was used for lack of the database:\n%s", p.stderr)
	}
	if h := p.call(200, "GET", "/health", nil); h["database"] != "unavailable" {
		t.Errorf("/health during the outage: %v, want database unavailable", h)
	}
	// Readiness follows the database (a probe takes the replica out of the load balancer); liveness does not.
	if status, header, b := p.do("GET", "/ready", nil, nil); status != http.StatusServiceUnavailable ||
		!strings.Contains(string(b), `"DATABASE_UNAVAILABLE"`) || !strings.HasPrefix(header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("/ready during the outage: %d %s, want a 503 DATABASE_UNAVAILABLE problem", status, b)
	}
	if t.Failed() {
		t.FailNow()
	}

	proxy.restore(t)
	restored := time.Now()

	// Within the deadline the server uses the database again, without a restart.
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, _, b := p.do("GET", "/api/v1/controls", nil, nil)
		if status == http.StatusOK {
			t.Logf("the server used the database again %v after it came back", time.Since(restored))
			break
		}
		if status != http.StatusServiceUnavailable {
			t.Fatalf("while recovering GET /api/v1/controls = %d %s, want 503 or 200", status, b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery within 30s of the database coming back: %d %s\n%s", status, b, p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if h := p.call(200, "GET", "/health", nil); h["database"] != "ok" {
		t.Fatalf("/health after recovery: %v, want database ok", h)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		status, _, b := p.do("GET", "/ready", nil, nil)
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/ready after recovery: %d %s, want 200 within 30s", status, b)
		}
	}
	// Nothing written before the outage is lost, and nothing attempted during it was written.
	for _, path := range reads {
		if after := p.call(200, "GET", path, nil); !reflect.DeepEqual(after, before[path]) {
			t.Errorf("GET %s after the outage:\n%v\nbefore:\n%v", path, after, before[path])
		}
	}
	p.call(404, "GET", "/api/v1/agents/new-bot", nil)
	// Reads, writes and evaluation all work again; a change made now is enforced at once.
	if got := p.decide("cold-bot", "pre", "ssn 123-45-6789"); got != "deny" {
		t.Fatalf("cold-bot after recovery: %s, want deny", got)
	}
	p.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "after-outage", "data": regex("z", "deny")})
	p.call(200, "PUT", controlPath(deny)+"/data", map[string]any{"data": regex(`forbidden`, "deny")})
	for _, agent := range []string{"cached-bot", "cold-bot"} {
		if got := p.decide(agent, "pre", "forbidden"); got != "deny" {
			t.Fatalf("%s after an edit following the recovery: %s, want deny", agent, got)
		}
		if got := p.decide(agent, "pre", "ssn 123-45-6789"); got != "allow" {
			t.Fatalf("%s after an edit following the recovery, old pattern: %s, want allow", agent, got)
		}
	}
	p.stop()
	if strings.Contains(p.stderr.String(), "panic") {
		t.Fatalf("the server logged a panic:\n%s", p.stderr)
	}

	// The shutdown flush, after the recovery, wrote the events accepted during the outage: the posted
	// one and the server's record of cached-bot's evaluations answered from its cached engine.
	p = startServer(t, env, "serve")
	if _, q := p.queryAll(map[string]any{"agent_name": "outage-agent"}); q.Total != 1 {
		t.Errorf("events posted during the outage and stored: %d, want 1", q.Total)
	}
	if _, q := p.queryAll(map[string]any{"agent_name": "cached-bot"}); q.Total < 3 {
		t.Errorf("server events of cached-bot stored: %d, want at least 3 (before, during and after the outage)", q.Total)
	}
	p.stop()
}
