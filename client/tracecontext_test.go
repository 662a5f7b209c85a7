package client

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/guardrail-control/guard"
)

// otelContext returns a context holding a sampled remote span context with a tracestate.
func otelContext(t *testing.T) (context.Context, trace.SpanContext) {
	t.Helper()
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ts, err := trace.ParseTraceState("vendor=abc")
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts})
	return trace.ContextWithSpanContext(context.Background(), sc), sc
}

// TestHTTPClientPropagatesTraceContext: every request sent with an OpenTelemetry span in its context
// carries traceparent and tracestate, whatever the global propagator is (it adds its own fields, baggage
// here); without a span, none.
func TestHTTPClientPropagatesTraceContext(t *testing.T) {
	ctx, sc := otelContext(t)
	member, _ := baggage.NewMember("tenant", "t1")
	bag, _ := baggage.New(member)
	ctx = baggage.ContextWithBaggage(ctx, bag)
	want := fmt.Sprintf("00-%s-%s-01", sc.TraceID(), sc.SpanID())
	for _, tc := range []struct {
		name        string
		ctx         context.Context
		global      propagation.TextMapPropagator
		traceparent string
		baggage     string
	}{
		{"default global propagator", ctx, nil, want, ""},
		{"baggage-only global propagator", ctx, propagation.Baggage{}, want, "tenant=t1"},
		{"w3c global propagator", ctx, propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}), want, "tenant=t1"},
		{"no span", baggage.ContextWithBaggage(context.Background(), bag), propagation.Baggage{}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.global != nil {
				prev := otel.GetTextMapPropagator()
				otel.SetTextMapPropagator(tc.global)
				t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
			}
			srv, ch := recordingServer(t, 200, `{}`)
			c := newTestClient(t, srv.URL)
			calls := []func() error{
				func() error {
					_, err := c.Evaluate(tc.ctx, "a", guard.Step{Type: "llm", Name: "chat"}, guard.StagePre)
					return err
				},
				func() error { _, err := c.HealthCheck(tc.ctx); return err },
				func() error { _, err := c.ListEvaluators(tc.ctx); return err },
			}
			for i, call := range calls {
				if err := call(); err != nil {
					t.Fatal(err)
				}
				r := <-ch
				if got := r.header.Get("traceparent"); got != tc.traceparent {
					t.Fatalf("call %d: traceparent %q, want %q", i, got, tc.traceparent)
				}
				wantState := ""
				if tc.traceparent != "" {
					wantState = "vendor=abc"
				}
				if got := r.header.Get("tracestate"); got != wantState {
					t.Fatalf("call %d: tracestate %q", i, got)
				}
				if got := r.header.Get("baggage"); got != tc.baggage {
					t.Fatalf("call %d: baggage %q, want %q", i, got, tc.baggage)
				}
			}
		})
	}
}

// TestProtectEventsCarryOTelIDs: the events of in-process evaluations carry the ids of the OpenTelemetry
// span of the context, unless WithTrace gave others.
func TestProtectEventsCarryOTelIDs(t *testing.T) {
	octx, sc := otelContext(t)
	for _, tc := range []struct {
		name              string
		ctx               context.Context
		wantTrace, wantSp string
	}{
		{"otel span", octx, sc.TraceID().String(), sc.SpanID().String()},
		{"WithTrace wins", WithTrace(octx, "trace-1", "span-1"), "trace-1", "span-1"},
		{"none", context.Background(), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newFakeAPI(t, ctl(1, "log-x", guard.ExecutionSDK, guard.DecisionLog, "input", "x"))
			cfg := testConfig(srv.URL)
			cfg.Observability = Bool(true)
			a, err := Init(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Protect(a, echo, StepName("chat"))(tc.ctx, "x"); err != nil {
				t.Fatal(err)
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			evs := f.receivedEvents()
			if len(evs) != 2 {
				t.Fatalf("%d events", len(evs))
			}
			for _, e := range evs {
				if e.TraceID != tc.wantTrace || e.SpanID != tc.wantSp {
					t.Fatalf("event ids %q %q, want %q %q", e.TraceID, e.SpanID, tc.wantTrace, tc.wantSp)
				}
			}
		})
	}
}

// TestProtectSpans: with Config.TracerProvider, a protected call is a guard.protect span (child of the
// caller's span) with guard.check children for pre and post and a guard.call child in which the
// function runs; the server evaluation is sent with the check span as its traceparent. A deny is an
// outcome, not a failed span; the function's error is.
func TestProtectSpans(t *testing.T) {
	octx, parent := otelContext(t)
	for _, tc := range []struct {
		name        string
		input       string
		fn          func(context.Context, string) (string, error)
		wantSpans   []string // children of guard.protect, in end order
		wantOutcome string
		wantStage   string
		failedCall  bool
	}{
		{"allowed", "hello", echo, []string{"guard.check", "guard.call", "guard.check"}, "ok", "post", false},
		{"denied at pre", "a secret", echo, []string{"guard.check"}, "denied", "pre", false},
		{"function error", "hello", func(context.Context, string) (string, error) { return "", errors.New("boom") },
			[]string{"guard.check", "guard.call"}, "error", "post", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newFakeAPI(t,
				ctl(1, "deny-secret", guard.ExecutionSDK, guard.DecisionDeny, "input", "secret"),
				ctl(2, "server-log", guard.ExecutionServer, guard.DecisionLog, "input", "zzz"))
			rec := tracetest.NewSpanRecorder()
			cfg := testConfig(srv.URL)
			cfg.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			a, err := Init(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			var fnSpan trace.SpanContext
			fn := func(ctx context.Context, s string) (string, error) {
				fnSpan = trace.SpanContextFromContext(ctx)
				return tc.fn(ctx, s)
			}
			_, _ = Protect(a, fn, StepName("chat"))(octx, tc.input)

			ended := rec.Ended()
			if len(ended) != len(tc.wantSpans)+1 {
				t.Fatalf("%d spans, want %d", len(ended), len(tc.wantSpans)+1)
			}
			root := ended[len(ended)-1]
			if root.Name() != "guard.protect" || root.Parent().SpanID() != parent.SpanID() || root.SpanContext().TraceID() != parent.TraceID() {
				t.Fatalf("root %q parent %v", root.Name(), root.Parent())
			}
			attrs := map[string]string{}
			for _, kv := range root.Attributes() {
				attrs[string(kv.Key)] = kv.Value.String()
			}
			if attrs["guard.agent.name"] != "test-agent" || attrs["guard.step.name"] != "chat" || attrs["guard.outcome"] != tc.wantOutcome || attrs["guard.stage"] != tc.wantStage {
				t.Fatalf("protect attributes %v", attrs)
			}
			if failed := root.Status().Code.String() == "Error"; failed != tc.failedCall {
				t.Fatalf("protect status %v", root.Status())
			}
			var checks []string
			for i, want := range tc.wantSpans {
				s := ended[i]
				if s.Name() != want || s.Parent().SpanID() != root.SpanContext().SpanID() {
					t.Fatalf("span %d: %q parent %v, want %q under guard.protect", i, s.Name(), s.Parent().SpanID(), want)
				}
				if want == "guard.call" && fnSpan.SpanID() != s.SpanContext().SpanID() {
					t.Fatalf("the function ran outside guard.call")
				}
				if want == "guard.check" {
					checks = append(checks, fmt.Sprintf("00-%s-%s-01", s.SpanContext().TraceID(), s.SpanContext().SpanID()))
				}
			}
			f.mu.Lock()
			traces := append([]string(nil), f.evalTraces...)
			f.mu.Unlock()
			// The server control is evaluated by the server, under the check span, unless an sdk deny came first.
			if tc.wantOutcome != "denied" && (len(traces) != len(checks) || traces[0] != checks[0]) {
				t.Fatalf("evaluation traceparents %v, check spans %v", traces, checks)
			}
		})
	}
}
