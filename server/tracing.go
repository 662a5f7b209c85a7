package server

import (
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
	"github.com/guardrail-control/guard/server/tracing"
)

// WithTracerProvider makes POST /evaluation record one span per evaluation on tp (a child of the
// request's W3C traceparent), with a span event per evaluated control. nil, the default, records nothing
// and costs the handler one nil check.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracerProvider = tp }
}

// traceContext reads traceparent and tracestate; the propagator is stateless.
var traceContext propagation.TraceContext

// startEvaluationSpan starts the evaluation span of r and returns r with the span in its context. The
// parent is the request's traceparent; without a valid one, X-Trace-Id and X-Span-Id when they are W3C
// ids (what the reference SDKs send), taken as a sampled remote parent; otherwise the span is a root.
func (s *Server) startEvaluationSpan(r *http.Request) (*http.Request, trace.Span) {
	ctx := traceContext.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	if !trace.SpanContextFromContext(ctx).IsValid() {
		if sc, ok := headerSpanContext(r.Header); ok {
			ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
		}
	}
	ctx, sp := s.tracer.Start(ctx, tracing.EvaluationSpan,
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String("http.request.method", r.Method),
			attribute.String("http.route", apiPrefix+"/evaluation"),
		))
	return r.WithContext(ctx), sp
}

// headerSpanContext is the remote span context of X-Trace-Id and X-Span-Id when both are W3C ids.
func headerSpanContext(h http.Header) (trace.SpanContext, bool) {
	tid, sid := h.Get(TraceIDHeader), h.Get(SpanIDHeader)
	if !tracing.ValidTraceID(tid) || !tracing.ValidSpanID(sid) {
		return trace.SpanContext{}, false
	}
	traceID, err1 := trace.TraceIDFromHex(tid)
	spanID, err2 := trace.SpanIDFromHex(sid)
	if err1 != nil || err2 != nil {
		return trace.SpanContext{}, false
	}
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled, Remote: true,
	}), true
}

// endEvaluationSpan records the outcome of the evaluation on sp and ends it: the request's agent, stage
// and step, the decision, and one span event per evaluated control.
func endEvaluationSpan(sp trace.Span, agent string, step *guard.Step, stage guard.Stage, res *guard.Result) {
	defer sp.End()
	if !sp.IsRecording() { // not sampled: nothing would be exported
		return
	}
	sp.SetAttributes(
		attribute.Int("http.response.status_code", http.StatusOK),
		attribute.String(tracing.AttrAgentName, agent),
		attribute.String(tracing.AttrStage, string(stage)),
		attribute.String(tracing.AttrStepType, step.Type),
		attribute.String(tracing.AttrStepName, step.Name),
		attribute.String(tracing.AttrDecision, string(res.Decision)),
		attribute.Bool(tracing.AttrIsSafe, res.IsSafe),
		attribute.Int(tracing.AttrMatchCount, len(res.Matches)),
		attribute.Int(tracing.AttrErrorCount, len(res.Errors)),
		attribute.Int(tracing.AttrNonMatchCount, len(res.NonMatches)),
	)
	// One timestamp (the end of the evaluation, when the durations are known) and one attribute buffer
	// for every event: the SDK copies the attributes of each.
	at := trace.WithTimestamp(time.Now())
	attrs := make([]attribute.KeyValue, 0, 9)
	for _, list := range [][]guard.ControlResult{res.Matches, res.Errors, res.NonMatches} {
		for i := range list {
			attrs = appendControlAttributes(attrs[:0], &list[i])
			sp.AddEvent(tracing.ControlEvent, at, trace.WithAttributes(attrs...))
		}
	}
}

// appendControlAttributes appends the attributes of one control's span event to attrs.
func appendControlAttributes(attrs []attribute.KeyValue, cr *guard.ControlResult) []attribute.KeyValue {
	attrs = append(attrs,
		attribute.Int64(tracing.AttrControlID, cr.ControlID),
		attribute.String(tracing.AttrControlName, cr.ControlName),
		attribute.String(tracing.AttrControlAction, string(cr.Action)),
		attribute.Bool(tracing.AttrControlMatched, cr.Result.Matched),
		attribute.Float64(tracing.AttrConfidence, cr.Result.Confidence),
		attribute.Float64(tracing.AttrDurationMS, float64(cr.Duration.Microseconds())/1000),
	)
	if cr.EvaluatorName != "" {
		attrs = append(attrs, attribute.String(tracing.AttrEvaluator, cr.EvaluatorName))
	}
	if cr.ControlExecutionID != "" {
		attrs = append(attrs, attribute.String(tracing.AttrExecutionID, cr.ControlExecutionID))
	}
	if cr.Result.Error != "" {
		attrs = append(attrs, attribute.String(tracing.AttrControlError, cr.Result.Error))
	}
	return attrs
}

// failEvaluationSpan records a request that ended with err and ends sp. As HTTP server spans do, only a
// 5xx marks the span as failed; a client mistake (4xx) is recorded by its status and code.
func failEvaluationSpan(sp trace.Span, err error) {
	defer sp.End()
	if !sp.IsRecording() {
		return
	}
	pe := problem.From(err)
	sp.SetAttributes(
		attribute.Int("http.response.status_code", pe.Status),
		attribute.String(tracing.AttrErrorCode, pe.Code),
	)
	if pe.Status >= 500 {
		sp.SetStatus(codes.Error, pe.Code)
	}
}
