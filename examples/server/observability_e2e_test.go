package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The observability end-to-end test runs the real server binary: events that got a 202 survive a
// SIGTERM and a restart although the flush interval is an hour, because shutdown flushes the buffer.

// startObs runs "serve --migrate" on dbURL with observability on and a one-hour flush interval.
func startObs(t *testing.T, dbURL string) *proc {
	t.Helper()
	return startServer(t, map[string]string{"GUARD_API_KEY_ENABLED": "false", "DATABASE_URL": dbURL,
		"OBSERVABILITY_ENABLED": "true", "OBSERVABILITY_FLUSH_INTERVAL_SECONDS": "3600"}, "serve", "--migrate")
}

// obsQuery is the answer of POST /api/v1/observability/events/query.
type obsQuery struct {
	Events []struct {
		ID      string `json:"control_execution_id"`
		Agent   string `json:"agent_name"`
		Source  string `json:"source"`
		TraceID string `json:"trace_id"`
		SpanID  string `json:"span_id"`
	} `json:"events"`
	Total int `json:"total"`
}

// queryAll pages through every event matching filter.
func (p *proc) queryAll(filter map[string]any) (ids map[string]bool, q obsQuery) {
	p.t.Helper()
	ids = map[string]bool{}
	for offset := 0; ; offset += 1000 {
		body := map[string]any{"limit": 1000, "offset": offset}
		for k, v := range filter {
			body[k] = v
		}
		var page obsQuery
		p.callInto(http.StatusOK, http.MethodPost, "/api/v1/observability/events/query", body, &page)
		q.Total = page.Total
		q.Events = append(q.Events, page.Events...)
		for _, e := range page.Events {
			ids[e.ID] = true
		}
		if len(page.Events) < 1000 {
			return ids, q
		}
	}
}

func TestObservabilityEventsSurviveGracefulRestart(t *testing.T) {
	dbURL := "sqlite://" + filepath.Join(t.TempDir(), "guard.db")
	// Reads do not wait for the buffer here, so that the test can see that nothing is written before
	// the shutdown.
	p := startServer(t, map[string]string{"GUARD_API_KEY_ENABLED": "false", "DATABASE_URL": dbURL,
		"OBSERVABILITY_ENABLED": "true", "OBSERVABILITY_FLUSH_INTERVAL_SECONDS": "3600", "OBSERVABILITY_READ_WAIT_MS": "0"}, "serve", "--migrate")

	// The observability routes are part of the server: a binary without them fails here (it used to skip).
	if status, _, body := p.do(http.MethodPost, "/api/v1/observability/events/query", map[string]any{}, nil); status != http.StatusOK {
		t.Fatalf("POST /api/v1/observability/events/query = %d, want 200: %s", status, body)
	}

	// Events posted by a client: three batches, 300 events, under one full batch (500) so that nothing
	// is written before shutdown.
	const agent = "e2e-obs-agent"
	sent := map[string]bool{}
	accepted := 0
	for batch := 0; batch < 3; batch++ {
		events := make([]map[string]any, 100)
		for i := range events {
			id := uuid.NewString()
			sent[id] = true
			events[i] = map[string]any{
				"control_execution_id": id, "agent_name": agent, "control_id": 1 + i%4,
				"control_name": fmt.Sprintf("control-%d", 1+i%4), "check_stage": "pre", "step_type": "llm",
				"step_name": "chat", "action": "deny", "matched": i%2 == 0, "confidence": 0.75,
				"timestamp": time.Now().UTC().Add(-time.Duration(batch*100+i) * time.Second).Format(time.RFC3339Nano),
				"source":    "sdk",
			}
		}
		var got struct{ Received, Enqueued, Dropped int }
		p.callInto(http.StatusAccepted, http.MethodPost, "/api/v1/observability/events", map[string]any{"events": events}, &got)
		if got.Received != 100 || got.Enqueued != 100 || got.Dropped != 0 {
			t.Fatalf("202 body = %+v, want 100 received and enqueued", got)
		}
		accepted += got.Enqueued
	}

	// One evaluation on the server: its controls become events with source server and the trace ids.
	var ctl struct {
		ID int64 `json:"control_id"`
	}
	p.callInto(http.StatusOK, http.MethodPut, "/api/v1/controls", map[string]any{"name": "e2e-obs-ssn", "data": map[string]any{
		"condition": map[string]any{"selector": map[string]any{"path": "input"},
			"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": `\d{3}-\d{2}-\d{4}`}}},
		"action": map[string]any{"decision": "deny"},
	}}, &ctl)
	p.callInto(http.StatusOK, http.MethodPost, "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": "e2e-obs-server"}, "steps": []any{map[string]any{"type": "llm", "name": "chat"}}}, nil)
	p.callInto(http.StatusOK, http.MethodPost, fmt.Sprintf("/api/v1/agents/e2e-obs-server/controls/%d", ctl.ID), nil, nil)
	status, _, body := p.do(http.MethodPost, "/api/v1/evaluation", map[string]any{"agent_name": "e2e-obs-server", "stage": "pre",
		"step": map[string]any{"type": "llm", "name": "chat", "input": "ssn 123-45-6789"}},
		map[string]string{"X-Trace-Id": "e2e-trace", "X-Span-Id": "e2e-span"})
	if status != http.StatusOK || !strings.Contains(string(body), `"deny"`) {
		t.Fatalf("POST /evaluation = %d %s, want a deny", status, body)
	}

	// The Prometheus text on /metrics counts what just happened.
	p.checkMetrics(accepted)

	// With an hour's flush interval, no full batch and reads that do not wait for the buffer
	// (OBSERVABILITY_READ_WAIT_MS=0), nothing is in the database yet.
	if _, q := p.queryAll(map[string]any{"agent_name": agent}); q.Total != 0 {
		t.Fatalf("%d events were written before shutdown; the test cannot tell the shutdown flush works", q.Total)
	}

	p.stop()
	p = startObs(t, dbURL)

	ids, q := p.queryAll(map[string]any{"agent_name": agent})
	if q.Total != accepted || len(ids) != accepted {
		t.Fatalf("after the restart the store holds %d events (%d distinct), %d got a 202", q.Total, len(ids), accepted)
	}
	for id := range sent {
		if !ids[id] {
			t.Fatalf("event %s got a 202 but is not stored", id)
		}
	}
	_, q = p.queryAll(map[string]any{"trace_id": "e2e-trace"})
	if q.Total != 1 || q.Events[0].Source != "server" || q.Events[0].SpanID != "e2e-span" || q.Events[0].Agent != "e2e-obs-server" {
		t.Fatalf("server-recorded events of the evaluation = %+v, want one with source server and the trace ids", q)
	}
	p.stop()
}

// checkMetrics scrapes /metrics, parses it with the Prometheus text parser and checks the counters of
// the requests above: posted events, the evaluation, and the HTTP requests by route pattern.
func (p *proc) checkMetrics(posted int) {
	p.t.Helper()
	res, err := http.Get(p.base + "/metrics")
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		p.t.Fatalf("parse /metrics: %v", err)
	}
	value := func(name string, labels map[string]string) float64 {
		var sum float64
	next:
		for _, m := range fams[name].GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue next
				}
			}
			sum += metricValue(m)
		}
		return sum
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"guard_events_received_total", nil, float64(posted + 1)}, // the posted events and the evaluation's
		{"guard_evaluations_total", map[string]string{"decision": "deny"}, 1},
		{"guard_control_matches_total", map[string]string{"action": "deny"}, 1},
		{"guard_http_requests_total", map[string]string{"route": "/api/v1/observability/events", "method": "POST", "status": "202"}, 3},
		{"guard_http_requests_total", map[string]string{"route": "/api/v1/evaluation", "method": "POST", "status": "200"}, 1},
		{"go_goroutines", nil, 1},
		{"process_cpu_seconds_total", nil, 1e-9},
		{"guard_build_info", map[string]string{"version": version, "goversion": runtime.Version()}, 1},
	} {
		if got := value(c.name, c.labels); got < c.min {
			p.t.Errorf("%s%v = %v, want at least %v", c.name, c.labels, got, c.min)
		}
	}
	if got := value("guard_events_dropped_total", nil); got != 0 {
		p.t.Errorf("guard_events_dropped_total = %v, want 0", got)
	}
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	}
	return 0
}
