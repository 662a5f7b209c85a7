package client

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// w3c injects traceparent and tracestate; it is stateless.
var w3c propagation.TraceContext

// injectTraceContext adds the trace context of ctx to the headers of a request when ctx holds an
// OpenTelemetry span: the fields of the application's global propagator (otel.SetTextMapPropagator:
// baggage, B3, ...) and, whatever that propagator is, the W3C traceparent and tracestate, which is what
// the server reads. Without a span nothing is added (and nothing is allocated).
func injectTraceContext(ctx context.Context, h http.Header) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	carrier := propagation.HeaderCarrier(h)
	otel.GetTextMapPropagator().Inject(ctx, carrier)
	if h.Get("traceparent") == "" {
		w3c.Inject(ctx, carrier)
	}
}

// traceOf returns the trace and span ids recorded in the events of an evaluation under ctx: those given
// with WithTrace, else those of the OpenTelemetry span in ctx, else none.
func traceOf(ctx context.Context) traceIDs {
	if t, ok := ctx.Value(traceKey{}).(traceIDs); ok {
		return t
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return traceIDs{traceID: sc.TraceID().String(), spanID: sc.SpanID().String()}
	}
	return traceIDs{}
}
