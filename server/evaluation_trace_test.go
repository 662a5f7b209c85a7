package server

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/internal/otlptest"
	"github.com/guardrail-control/guard/server/tracing"
)

const (
	tpTraceID  = "4bf92f3577b34da6a3ce929d0e0e4736"
	tpParentID = "00f067aa0ba902b7"
	tpSampled  = "00-" + tpTraceID + "-" + tpParentID + "-01"
)

// TestEventTraceIDs: events carry X-Trace-Id/X-Span-Id when sent (they win over traceparent), otherwise
// the trace id and parent id of a valid traceparent; a malformed traceparent is ignored, never refused.
// Without any (want "" ""), the events get fresh W3C-sized ids: the reference's clients need both.
func TestEventTraceIDs(t *testing.T) {
	for _, tc := range []struct {
		name                string
		hdr                 []string
		wantTrace, wantSpan string
	}{
		{"traceparent", []string{"traceparent", tpSampled, "tracestate", "vendor=x"}, tpTraceID, tpParentID},
		{"traceparent not sampled", []string{"traceparent", "00-" + tpTraceID + "-" + tpParentID + "-00"}, tpTraceID, tpParentID},
		{"x headers", []string{TraceIDHeader, "trace-1", SpanIDHeader, "span-1"}, "trace-1", "span-1"},
		{"both: x headers win", []string{"traceparent", tpSampled, TraceIDHeader, "trace-1", SpanIDHeader, "span-1"}, "trace-1", "span-1"},
		{"x trace id alone wins", []string{"traceparent", tpSampled, TraceIDHeader, "trace-1"}, "trace-1", ""},
		{"upper-case traceparent", []string{"traceparent", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"}, "", ""},
		{"zero trace id", []string{"traceparent", "00-00000000000000000000000000000000-" + tpParentID + "-01"}, "", ""},
		{"garbage", []string{"traceparent", "not a traceparent"}, "", ""},
		{"none", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, rec := fullServer(t)
			ts.initAgent("bot")
			ts.link("bot", ts.createControl("c", regexData("bad", "deny")))
			ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": "pre",
				"step": map[string]any{"type": "llm", "name": "chat", "input": "bad"}}, tc.hdr...)
			if err := rec.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			evs := ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{"agent_name": "bot"})["events"].([]any)
			if len(evs) != 1 {
				t.Fatalf("events: %v", evs)
			}
			ev := evs[0].(map[string]any)
			gotTrace, _ := ev["trace_id"].(string)
			gotSpan, _ := ev["span_id"].(string)
			if tc.wantTrace == "" && tc.wantSpan == "" {
				if !tracing.ValidTraceID(gotTrace) || !tracing.ValidSpanID(gotSpan) {
					t.Fatalf("trace_id %q span_id %q, want fresh W3C ids", gotTrace, gotSpan)
				}
			} else if gotTrace != tc.wantTrace || gotSpan != tc.wantSpan {
				t.Fatalf("trace_id %q span_id %q, want %q %q", gotTrace, gotSpan, tc.wantTrace, tc.wantSpan)
			}
		})
	}
}

type failingEval struct{}

func (failingEval) Evaluate(context.Context, *evaluator.Data) (evaluator.Result, error) {
	return evaluator.Result{}, errors.New("upstream unavailable")
}

// tracedServer is a server exporting spans over OTLP with protocol (http/protobuf or grpc) to an
// in-process receiver, with a "failing" evaluator registered beside the built-in ones.
func tracedServer(t *testing.T, protocol string) (*tserver, *sdktrace.TracerProvider, *otlptest.Receiver) {
	t.Helper()
	rcv := otlptest.NewReceiver()
	if protocol == tracing.ProtocolGRPC {
		var err error
		if rcv, err = otlptest.NewGRPCReceiver(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(rcv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL())
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
	tp, err := tracing.NewProvider(context.Background(), "test-1.2.3", protocol)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	reg := evaluator.NewRegistry()
	for _, f := range evaluator.Default.List() {
		reg.Register(*f)
	}
	reg.Register(evaluator.Factory{Name: "failing", Description: "test", Version: "1", ConfigSchema: json.RawMessage(`{"type":"object"}`),
		New: func(map[string]any, evaluator.Options) (evaluator.Evaluator, error) { return failingEval{}, nil }})
	return newTS(t, WithTracerProvider(tp), WithRegistry(reg)), tp, rcv
}

// flushedSpans exports what the provider holds and returns the spans the receiver decoded.
func flushedSpans(t *testing.T, tp *sdktrace.TracerProvider, rcv *otlptest.Receiver) []otlptest.Span {
	t.Helper()
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return rcv.Spans()
}

// TestEvaluationSpanOTLP: with a tracer provider, POST /evaluation exports one server span, child of the
// incoming traceparent (tracestate kept), with the evaluation's attributes and one span event per
// evaluated control, decoded by a real OTLP receiver, over each protocol.
func TestEvaluationSpanOTLP(t *testing.T) {
	for _, protocol := range []string{tracing.ProtocolHTTPProtobuf, tracing.ProtocolGRPC} {
		t.Run(protocol, func(t *testing.T) { testEvaluationSpanOTLP(t, protocol) })
	}
}

func testEvaluationSpanOTLP(t *testing.T, protocol string) {
	ts, tp, rcv := tracedServer(t, protocol)
	ts.initAgent("bot")
	// The matching control warns: after a matching deny the engine may skip the remaining controls.
	warn := ts.createControl("warn-bad", regexData("bad", "warn"))
	deny := ts.createControl("block-other", regexData("other", "deny"))
	fail := ts.createControl("flaky", map[string]any{
		"condition": map[string]any{"selector": map[string]any{"path": "input"}, "evaluator": map[string]any{"name": "failing", "config": map[string]any{}}},
		"action":    map[string]any{"decision": "log"},
	})
	for _, id := range []int64{deny, warn, fail} {
		ts.link("bot", id)
	}
	res := ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": "pre",
		"step": map[string]any{"type": "tool", "name": "search", "input": "a bad query"}},
		"traceparent", tpSampled, "tracestate", "vendor=abc")

	spans := flushedSpans(t, tp, rcv)
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	sp := spans[0]
	if sp.GetName() != tracing.EvaluationSpan || sp.GetKind() != tracepb.Span_SPAN_KIND_SERVER || sp.Scope != tracing.TracerName {
		t.Fatalf("span %q kind %v scope %q", sp.GetName(), sp.GetKind(), sp.Scope)
	}
	if sp.TraceIDHex() != tpTraceID || sp.ParentSpanIDHex() != tpParentID || sp.GetTraceState() != "vendor=abc" {
		t.Fatalf("trace %s parent %s state %q: not a child of the traceparent", sp.TraceIDHex(), sp.ParentSpanIDHex(), sp.GetTraceState())
	}
	if sp.Resource["service.name"] != "guard" || sp.Resource["service.version"] != "test-1.2.3" || sp.Resource["deployment.environment.name"] != "test" {
		t.Fatalf("resource %v", sp.Resource)
	}
	a := sp.Attrs()
	for k, want := range map[string]any{
		"http.request.method": "POST", "http.route": "/api/v1/evaluation", "http.response.status_code": int64(200),
		tracing.AttrAgentName: "bot", tracing.AttrStage: "pre", tracing.AttrStepType: "tool", tracing.AttrStepName: "search",
		tracing.AttrDecision: res["decision"], tracing.AttrIsSafe: res["is_safe"],
		tracing.AttrMatchCount: int64(1), tracing.AttrErrorCount: int64(1), tracing.AttrNonMatchCount: int64(1),
	} {
		if a[k] != want {
			t.Errorf("attribute %s = %#v, want %#v", k, a[k], want)
		}
	}
	if sp.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("a 200 evaluation is not a failed span")
	}
	byName := map[string]map[string]any{}
	for _, ev := range sp.GetEvents() {
		if ev.GetName() != tracing.ControlEvent {
			t.Fatalf("event %q", ev.GetName())
		}
		ea := otlptest.Attributes(ev.GetAttributes())
		name, _ := ea[tracing.AttrControlName].(string)
		byName[name] = ea
		if d, ok := ea[tracing.AttrDurationMS].(float64); !ok || d < 0 {
			t.Errorf("%s: duration_ms %#v", name, ea[tracing.AttrDurationMS])
		}
		if id, _ := ea[tracing.AttrExecutionID].(string); len(id) != 36 {
			t.Errorf("%s: execution id %q", name, id)
		}
	}
	// Each span event says what the response says of its control.
	for _, tc := range []struct {
		list, name string
		id         int64
		evaluator  string
	}{
		{"matches", "warn-bad", warn, "regex"},
		{"non_matches", "block-other", deny, "regex"},
		{"errors", "flaky", fail, "failing"},
	} {
		ea, ok := byName[tc.name]
		if !ok {
			t.Errorf("no span event for control %s: %v", tc.name, byName)
			continue
		}
		items := res[tc.list].([]any)
		if len(items) != 1 {
			t.Fatalf("%s: %v", tc.list, items)
		}
		cr := items[0].(map[string]any)
		r := cr["result"].(map[string]any)
		errMsg, hasErr := r["error"].(string)
		if ea[tracing.AttrControlID] != tc.id || ea[tracing.AttrControlAction] != cr["action"] || ea[tracing.AttrControlMatched] != r["matched"] ||
			ea[tracing.AttrConfidence] != r["confidence"] || ea[tracing.AttrEvaluator] != tc.evaluator ||
			ea[tracing.AttrExecutionID] != cr["control_execution_id"] || (hasErr && ea[tracing.AttrControlError] != errMsg) || (!hasErr && ea[tracing.AttrControlError] != nil) {
			t.Errorf("control %s: span event %v, response %v", tc.name, ea, cr)
		}
	}
	if e := byName["flaky"][tracing.AttrControlError]; e == nil {
		t.Errorf("the failing control's event carries no error")
	}
	if len(byName) != 3 {
		t.Errorf("%d control events, want 3", len(byName))
	}
}

// TestEvaluationSpanParents: the parent of the evaluation span is the traceparent (which wins over
// X-Trace-Id/X-Span-Id), else W3C-form X headers, else none; a traceparent that is not sampled exports
// nothing (the default sampler follows the parent).
func TestEvaluationSpanParents(t *testing.T) {
	const xTrace, xSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	for _, tc := range []struct {
		name                  string
		hdr                   []string
		wantTrace, wantParent string // "" trace: a new trace id; "-": no span at all
	}{
		{"traceparent", []string{"traceparent", tpSampled}, tpTraceID, tpParentID},
		{"traceparent wins", []string{"traceparent", tpSampled, TraceIDHeader, xTrace, SpanIDHeader, xSpan}, tpTraceID, tpParentID},
		{"w3c x headers", []string{TraceIDHeader, xTrace, SpanIDHeader, xSpan}, xTrace, xSpan},
		{"other x headers: root", []string{TraceIDHeader, "trace-1", SpanIDHeader, "span-1"}, "", ""},
		{"malformed traceparent: root", []string{"traceparent", "00-xyz"}, "", ""},
		{"no header: root", nil, "", ""},
		{"not sampled", []string{"traceparent", "00-" + tpTraceID + "-" + tpParentID + "-00"}, "-", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, tp, rcv := tracedServer(t, tracing.ProtocolHTTPProtobuf)
			ts.initAgent("bot") // no control: the evaluation span is recorded all the same
			ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": "pre",
				"step": map[string]any{"type": "llm", "name": "chat", "input": "x"}}, tc.hdr...)
			spans := flushedSpans(t, tp, rcv)
			if tc.wantTrace == "-" {
				if len(spans) != 0 {
					t.Fatalf("%d spans exported for a trace that is not sampled", len(spans))
				}
				return
			}
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			}
			sp := spans[0]
			if sp.ParentSpanIDHex() != tc.wantParent {
				t.Fatalf("parent %q, want %q", sp.ParentSpanIDHex(), tc.wantParent)
			}
			if tc.wantTrace != "" && sp.TraceIDHex() != tc.wantTrace {
				t.Fatalf("trace %s, want %s", sp.TraceIDHex(), tc.wantTrace)
			}
			if tc.wantTrace == "" && (sp.TraceIDHex() == tpTraceID || sp.TraceIDHex() == xTrace || len(sp.TraceIDHex()) != 32) {
				t.Fatalf("trace %s, want a new one", sp.TraceIDHex())
			}
		})
	}
}

// TestEvaluationSpanClientError: a refused evaluation is still a span, with its status code and error
// code; a 4xx does not mark it failed (client mistakes are not server errors).
func TestEvaluationSpanClientError(t *testing.T) {
	ts, tp, rcv := tracedServer(t, tracing.ProtocolHTTPProtobuf)
	ts.expectProblem(404, "AGENT_NOT_FOUND", "POST", "/api/v1/evaluation", map[string]any{"agent_name": "ghost", "stage": "pre",
		"step": map[string]any{"type": "llm", "name": "chat", "input": "x"}}, "traceparent", tpSampled)
	ts.expectProblem(422, "VALIDATION_ERROR", "POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": "middle"},
		"traceparent", tpSampled)
	spans := flushedSpans(t, tp, rcv)
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	for i, want := range []struct {
		status int64
		code   string
	}{{404, "AGENT_NOT_FOUND"}, {422, "VALIDATION_ERROR"}} {
		a := spans[i].Attrs()
		if a["http.response.status_code"] != want.status || a[tracing.AttrErrorCode] != want.code || spans[i].ParentSpanIDHex() != tpParentID {
			t.Errorf("span %d: %v", i, a)
		}
		if spans[i].GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("span %d: a %d marked as a failed span", i, want.status)
		}
	}
}
