package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/guardrail-control/guard/internal/otlptest"
	"github.com/guardrail-control/guard/server/tracing"
)

// TestOTelExportE2E runs the binary with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an in-process OTLP
// receiver: an evaluation sent with a traceparent becomes a guard.evaluation span, child of the caller's
// span, with a span event per control, and its events carry the caller's trace ids. The batch delay is an
// hour, so the span arrives only because SIGTERM flushes the exporter. Over OTLP/HTTP and OTLP/gRPC.
func TestOTelExportE2E(t *testing.T) {
	for _, protocol := range []string{tracing.ProtocolHTTPProtobuf, tracing.ProtocolGRPC} {
		t.Run(protocol, func(t *testing.T) { testOTelExportE2E(t, protocol) })
	}
}

func testOTelExportE2E(t *testing.T, protocol string) {
	rcv := otlptest.NewReceiver()
	if protocol == tracing.ProtocolGRPC {
		var err error
		if rcv, err = otlptest.NewGRPCReceiver(); err != nil {
			t.Fatal(err)
		}
	}
	defer rcv.Close()
	const traceID, parentID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	db := filepath.Join(t.TempDir(), "guard.db")
	p := startServer(t, map[string]string{
		"DATABASE_URL":                db,
		"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL(),
		"OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
		"OTEL_SERVICE_NAME":           "guard-e2e",
		"OTEL_BSP_SCHEDULE_DELAY":     "3600000",
		"OBSERVABILITY_ENABLED":       "true",
	}, "serve", "--migrate")
	id := int64(p.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "block-ssn", "data": regex(`\b\d{3}-\d{2}-\d{4}\b`, "deny")})["control_id"].(float64))
	p.call(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "support-bot"}})
	p.call(200, "POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil)
	code, _, body := p.do(http.MethodPost, "/api/v1/evaluation", map[string]any{"agent_name": "support-bot", "stage": "pre",
		"step": map[string]any{"type": "llm", "name": "chat", "input": "my ssn is 123-45-6789"}},
		map[string]string{"traceparent": "00-" + traceID + "-" + parentID + "-01", "tracestate": "vendor=e2e"})
	if code != http.StatusOK {
		t.Fatalf("evaluation: %d %s", code, body)
	}
	if len(rcv.Spans()) != 0 {
		t.Fatalf("a span was exported before the batch delay or the shutdown")
	}
	p.stop()
	sp, ok := rcv.WaitFor(10*time.Second, func(s otlptest.Span) bool { return s.GetName() == tracing.EvaluationSpan })
	if !ok {
		t.Fatalf("no evaluation span received after shutdown\n%s", p.stderr)
	}
	if sp.TraceIDHex() != traceID || sp.ParentSpanIDHex() != parentID || sp.GetTraceState() != "vendor=e2e" {
		t.Fatalf("span trace %s parent %s state %q", sp.TraceIDHex(), sp.ParentSpanIDHex(), sp.GetTraceState())
	}
	if sp.Resource["service.name"] != "guard-e2e" {
		t.Fatalf("resource %v", sp.Resource)
	}
	a := sp.Attrs()
	if a[tracing.AttrAgentName] != "support-bot" || a[tracing.AttrDecision] != "deny" || len(sp.GetEvents()) != 1 {
		t.Fatalf("attributes %v, %d events", a, len(sp.GetEvents()))
	}
	ea := otlptest.Attributes(sp.GetEvents()[0].GetAttributes())
	if ea[tracing.AttrControlName] != "block-ssn" || ea[tracing.AttrControlID] != id || ea[tracing.AttrControlMatched] != true {
		t.Fatalf("control event %v", ea)
	}

	// The events, written at shutdown, carry the caller's ids; read them back after a restart.
	p2 := startServer(t, map[string]string{"DATABASE_URL": db}, "serve")
	_, q := p2.queryAll(map[string]any{"agent_name": "support-bot"})
	if len(q.Events) != 1 || q.Events[0].TraceID != traceID || q.Events[0].SpanID != parentID {
		t.Fatalf("events %+v", q.Events)
	}
}
