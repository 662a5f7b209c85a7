package server

import (
	"context"
	"strings"
	"testing"
)

func TestEvaluationRecordsEventsAndMetrics(t *testing.T) {
	ts, rec := fullServer(t)
	ts.initAgent("bot")
	ts.link("bot", ts.createControl("c", regexData("bad", "deny")))
	ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": "pre",
		"step": map[string]any{"type": "llm", "name": "chat", "input": "bad"}}, TraceIDHeader, "trace-1", SpanIDHeader, "span-1")
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	q := ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{"agent_name": "bot"})
	evs := q["events"].([]any)
	if len(evs) != 1 {
		t.Fatalf("events: %v", q)
	}
	ev := evs[0].(map[string]any)
	if ev["trace_id"] != "trace-1" || ev["span_id"] != "span-1" || ev["matched"] != true || ev["control_name"] != "c" || ev["source"] != "server" {
		t.Fatalf("event: %v", ev)
	}
	r := ts.do("GET", "/metrics", nil)
	if r.Code != 200 || !strings.Contains(string(r.Body), "guard_") {
		t.Fatalf("metrics: %d", r.Code)
	}
	if !strings.Contains(string(r.Body), `/api/v1/evaluation`) {
		t.Fatalf("metrics lack the route pattern label")
	}
}

func TestObservabilityDisabled(t *testing.T) {
	ts := newTS(t)
	ts.expectProblem(503, "OBSERVABILITY_DISABLED", "GET", "/api/v1/observability/stats?agent_name=x", nil)
	ts.expectProblem(404, "NOT_FOUND", "GET", "/metrics", nil)
}
