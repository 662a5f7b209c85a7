package client

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
)

// observe logs the controls of one evaluation (log_control_eval; warn matches always) and, for
// in-process evaluations, queues their events (the server records its own).
func (a *Agent) observe(ctx context.Context, step *guard.Step, stage guard.Stage, cfg *protectConfig, res *guard.Result, inProcess bool) {
	a.logResult(step, stage, cfg, res)
	if !inProcess {
		return
	}
	if a.steps != nil {
		a.steps.add(a.name, step, stage, res.Decision)
	}
	if a.events == nil {
		return
	}
	a.events.add(evalRecord{res: res, agent: a.name, stepType: step.Type, stepName: step.Name, stage: stage,
		tr: traceOf(ctx), policy: cfg.policy, at: time.Now()})
}

// logResult writes the per-control logs of one evaluation.
func (a *Agent) logResult(step *guard.Step, stage guard.Stage, cfg *protectConfig, res *guard.Result) {
	sw := a.s.log
	if !sw.enabled {
		return
	}
	for i := range res.Matches {
		m := &res.Matches[i]
		switch {
		case m.Action == guard.DecisionWarn:
			a.logProtect.Warn("warn control matched", a.fields(step, stage, cfg, m)...)
		case sw.controlEval:
			a.logProtect.Info("control matched", a.fields(step, stage, cfg, m)...)
		}
	}
	if !sw.controlEval {
		return
	}
	for i := range res.Errors {
		a.logProtect.Warn("control evaluation failed", a.fields(step, stage, cfg, &res.Errors[i])...)
	}
	if a.logProtect.Core().Enabled(zap.DebugLevel) {
		for i := range res.NonMatches {
			a.logProtect.Debug("control did not match", a.fields(step, stage, cfg, &res.NonMatches[i])...)
		}
	}
}

func (a *Agent) fields(step *guard.Step, stage guard.Stage, cfg *protectConfig, cr *guard.ControlResult) []zap.Field {
	f := []zap.Field{
		zap.String("agent", a.name),
		zap.String("step_type", step.Type),
		zap.String("step_name", step.Name),
		zap.String("stage", string(stage)),
		zap.Int64("control_id", cr.ControlID),
		zap.String("control_name", cr.ControlName),
		zap.String("action", string(cr.Action)),
		zap.Float64("confidence", cr.Result.Confidence),
	}
	if cr.Result.Message != "" {
		f = append(f, zap.String("message", cr.Result.Message))
	}
	if cr.Result.Error != "" {
		f = append(f, zap.String("error", cr.Result.Error))
	}
	if cfg.policy != "" {
		f = append(f, zap.String("policy", cfg.policy))
	}
	return f
}

// span logs the start and the end of one protected call (log_span_start, log_span_end, debug level) and,
// with a tracer, is the guard.protect OpenTelemetry span.
type span struct {
	a     *Agent
	cfg   *protectConfig
	start time.Time
	on    bool
	otel  trace.Span // nil without a tracer
}

// startSpan starts the span of one protected call; ctx is returned with the OpenTelemetry span in it.
func (a *Agent) startSpan(ctx context.Context, cfg *protectConfig) (context.Context, span) {
	var sp span
	if a.tracer != nil {
		ctx, sp.otel = a.startProtectSpan(ctx, cfg)
	}
	sw := a.s.log
	if !sw.spanStart && !sw.spanEnd {
		return ctx, sp
	}
	if !a.logProtect.Core().Enabled(zap.DebugLevel) {
		return ctx, sp
	}
	sp.a, sp.cfg, sp.start, sp.on = a, cfg, time.Now(), true
	if sw.spanStart {
		a.logProtect.Debug("step started", zap.String("agent", a.name), zap.String("step_type", cfg.stepType),
			zap.String("step_name", cfg.stepName))
	}
	return ctx, sp
}

func (sp span) end(stage guard.Stage, err error) {
	if sp.otel != nil {
		endOTelSpan(sp.otel, stage, err)
	}
	if !sp.on || !sp.a.s.log.spanEnd {
		return
	}
	sp.a.logProtect.Debug("step ended", zap.String("agent", sp.a.name), zap.String("step_type", sp.cfg.stepType),
		zap.String("step_name", sp.cfg.stepName), zap.String("stage", string(stage)), zap.String("outcome", outcome(err)),
		zap.Duration("duration", time.Since(sp.start)))
}

// outcome names how a protected call or a stage ended: ok, denied, steered or error.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case steerErr(err):
		return "steered"
	case isDeny(err):
		return "denied"
	}
	return "error"
}

// observeShadow evaluates the shadow controls of eng in-process and records what they would have
// decided as shadow events. The result never reaches the caller: a shadow control never raises. Nothing
// is evaluated when there is nowhere to record it. ectx is the stage's evaluation context (its one
// deadline, partly spent by the enforced controls): a shadow pass gets no deadline of its own, and none
// starts once it has passed (ShortShadowEvaluations counts the passes skipped or cut).
func (a *Agent) observeShadow(ectx context.Context, eng *guard.Engine, step *guard.Step, stage guard.Stage, cfg *protectConfig) {
	if a.events == nil || !eng.HasShadow() {
		return
	}
	if ectx.Err() != nil {
		a.shadowShort.Add(1)
		return
	}
	res, err := eng.EvaluateShadow(ectx, step, stage)
	if ectx.Err() != nil {
		a.shadowShort.Add(1) // the deadline passed during the pass: some shadow controls were cut
	}
	if err != nil {
		return
	}
	a.addShadow(ectx, step, stage, cfg, res)
}

// recordShadow records res, the shadow result of Engine.EvaluateWithShadow (nil when the stage's deadline
// had passed once the enforced controls were evaluated: counted in ShortShadowEvaluations).
func (a *Agent) recordShadow(ectx context.Context, step *guard.Step, stage guard.Stage, cfg *protectConfig, res *guard.Result) {
	if res == nil || ectx.Err() != nil {
		a.shadowShort.Add(1)
	}
	a.addShadow(ectx, step, stage, cfg, res)
}

// addShadow records the events of a shadow result (nothing for nil or an empty one).
func (a *Agent) addShadow(ectx context.Context, step *guard.Step, stage guard.Stage, cfg *protectConfig, res *guard.Result) {
	if res == nil || len(res.Matches)+len(res.Errors)+len(res.NonMatches) == 0 {
		return
	}
	a.events.add(evalRecord{res: res, agent: a.name, stepType: step.Type, stepName: step.Name, stage: stage,
		tr: traceOf(ectx), policy: cfg.policy, at: time.Now(), shadow: true})
}
