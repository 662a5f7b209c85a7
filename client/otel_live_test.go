package client

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/otlptest"
	"github.com/guardrail-control/guard/server"
	"github.com/guardrail-control/guard/server/tracing"
)

// TestLiveTraceReachesTheServerSpan: what an operator sees in a tracing backend. The application's own
// span (handle-request) contains guard.protect > guard.check recorded by the client, and the real server,
// exporting over OTLP to an in-process receiver, records its guard.evaluation span in the same trace as
// the child of that guard.check span, with the agent's stored events carrying the same trace id.
func TestLiveTraceReachesTheServerSpan(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL())
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	serverTP, err := tracing.NewProvider(context.Background(), "test", tracing.ProtocolHTTPProtobuf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serverTP.Shutdown(context.Background()) })
	ls := startLiveServerObs(t, true, server.WithTracerProvider(serverTP))

	appSpans := tracetest.NewSpanRecorder()
	appTP := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(appSpans))
	cfg := testConfig(ls.url())
	cfg.TracerProvider = appTP
	a := initAgent(t, cfg)
	mustCreate(t, ls.admin(t), a.Name(), ctl(0, "block-ssn", guard.ExecutionServer, guard.DecisionDeny, "input", `\d{3}-\d{2}-\d{4}`, guard.StagePre))
	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}

	ctx, root := appTP.Tracer("app").Start(context.Background(), "handle-request")
	_, callErr := Protect(a, echo, StepName("chat"))(ctx, "my ssn is 123-45-6789")
	root.End()
	if callErr == nil {
		t.Fatal("the server control did not deny")
	}
	if err := serverTP.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range appSpans.Ended() {
		byName[s.Name()] = s
	}
	protect, check := byName["guard.protect"], byName["guard.check"]
	if protect == nil || check == nil || protect.Parent().SpanID() != root.SpanContext().SpanID() || check.Parent().SpanID() != protect.SpanContext().SpanID() {
		t.Fatalf("client spans %v: not handle-request > guard.protect > guard.check", byName)
	}
	spans := rcv.Spans()
	if len(spans) != 1 || spans[0].GetName() != tracing.EvaluationSpan {
		t.Fatalf("server spans %+v, want one %s", spans, tracing.EvaluationSpan)
	}
	sp := spans[0]
	if sp.TraceIDHex() != root.SpanContext().TraceID().String() || sp.ParentSpanIDHex() != check.SpanContext().SpanID().String() {
		t.Fatalf("server span trace %s parent %s, want trace %s parent %s (guard.check)", sp.TraceIDHex(), sp.ParentSpanIDHex(),
			root.SpanContext().TraceID(), check.SpanContext().SpanID())
	}
	if a := sp.Attrs(); a[tracing.AttrAgentName] != "test-agent" || a[tracing.AttrDecision] != "deny" || len(sp.GetEvents()) != 1 {
		t.Fatalf("server span attributes %v, %d control events", a, len(sp.GetEvents()))
	}

	if err := ls.rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	page, err := ls.admin(t).QueryEvents(context.Background(), guard.EventQuery{TraceID: root.SpanContext().TraceID().String()})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 || page.Events[0].ControlName != "block-ssn" || page.Events[0].SpanID != check.SpanContext().SpanID().String() {
		t.Fatalf("events of the trace: %+v", page.Events)
	}
}
