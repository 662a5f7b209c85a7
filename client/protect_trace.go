package client

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/guardrail-control/guard"
)

// tracerName is the instrumentation scope of the client's spans.
const tracerName = "github.com/guardrail-control/guard/client"

// Span names and attributes of the client (the server's are in server/tracing; the client does not
// import the OpenTelemetry SDK).
const (
	spanProtect = "guard.protect"
	spanCheck   = "guard.check"
	spanCall    = "guard.call"

	attrAgentName = "guard.agent.name"
	attrStepType  = "guard.step.type"
	attrStepName  = "guard.step.name"
	attrStage     = "guard.stage"
	attrOutcome   = "guard.outcome"
)

// startProtectSpan starts guard.protect, a child of the span of ctx.
func (a *Agent) startProtectSpan(ctx context.Context, cfg *protectConfig) (context.Context, trace.Span) {
	return a.tracer.Start(ctx, spanProtect, trace.WithAttributes(
		attribute.String(attrAgentName, a.name),
		attribute.String(attrStepType, cfg.stepType),
		attribute.String(attrStepName, cfg.stepName),
	))
}

// endOTelSpan records how a call or a stage ended and ends sp. A deny or a steer is a decision, not a
// failure: only other errors (an input that cannot be encoded, the caller's cancellation, the
// function's own error) mark the span as failed.
func endOTelSpan(sp trace.Span, stage guard.Stage, err error) {
	o := outcome(err)
	sp.SetAttributes(attribute.String(attrStage, string(stage)), attribute.String(attrOutcome, o))
	if o == "error" {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, "")
	}
	sp.End()
}

// checkStage is check inside a guard.check span when the agent has a tracer.
func (a *Agent) checkStage(ctx context.Context, step *guard.Step, stage guard.Stage, cfg *protectConfig) (redacted bool, err error) {
	if a.tracer == nil {
		return a.check(ctx, step, stage, cfg)
	}
	ctx, sp := a.tracer.Start(ctx, spanCheck)
	redacted, err = a.check(ctx, step, stage, cfg)
	endOTelSpan(sp, stage, err)
	return redacted, err
}

// callFn calls the protected function, inside a guard.call span when the agent has a tracer.
func callFn[In, Out any](ctx context.Context, a *Agent, fn func(context.Context, In) (Out, error), in In) (Out, error) {
	if a.tracer == nil {
		return fn(ctx, in)
	}
	ctx, sp := a.tracer.Start(ctx, spanCall)
	out, err := fn(ctx, in)
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, "")
	}
	sp.End()
	return out, err
}
