package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
)

// DefaultStepType is the step type of a protected function when no StepType option is given.
const DefaultStepType = "llm"

// ProtectOption configures Protect.
type ProtectOption func(*protectConfig)

type protectConfig struct {
	stepType string
	stepName string
	policy   string
}

// StepType sets the step type ("llm", "tool" or any registered type); default "llm".
func StepType(t string) ProtectOption { return func(c *protectConfig) { c.stepType = t } }

// StepName sets the step name the controls see. The default is the bare name of the function ("search"
// for pkg.search, "Search" for a method value); anonymous functions need this option.
func StepName(n string) ProtectOption { return func(c *protectConfig) { c.stepName = n } }

// Policy sets a label recorded in logs and in the metadata of the events of this step; it does not
// change which controls apply.
func Policy(label string) ProtectOption { return func(c *protectConfig) { c.policy = label } }

// Protect wraps fn so that each call is checked against the agent's controls:
//
//   - before the call, stage pre on the input; after it, stage post on the output (with the input still
//     in the step). A function that returns an error is not checked at post.
//   - deny returns *guard.ControlViolationError and steer *guard.ControlSteerError (use errors.As); at pre
//     fn is then not called, at post its output is withheld (the zero Out is returned).
//   - warn logs a warning; log and allow only record. Evaluator errors follow each control's on_error.
//   - a control with action.redact that matched replaces what it found: at pre fn receives the redacted
//     input (and the step keeps it for post), at post the redacted output is returned instead of fn's.
//     The redacted JSON value is turned back into In or Out through encoding/json; if it does not fit,
//     Protect fails rather than hand on the original.
//
// sdk controls are evaluated in-process. server controls are evaluated by POST /evaluation, and only when
// at least one of them applies to the step; when the server cannot answer, or with
// Config.LocalServerControls, they are evaluated in-process from the snapshot instead.
//
// In and Out are turned into JSON values for selectors (input.query, output.0.text): strings, numbers,
// booleans, map[string]any and []any directly, anything else through encoding/json (so json tags apply).
// Context metadata for selectors (context.user_role) comes from WithStepContext, trace ids from WithTrace
// or the OpenTelemetry span of ctx (Config.TracerProvider adds guard's own spans).
func Protect[In, Out any](a *Agent, fn func(context.Context, In) (Out, error), opts ...ProtectOption) func(context.Context, In) (Out, error) {
	cfg := protectConfig{stepType: DefaultStepType}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.stepName == "" {
		cfg.stepName = funcName(fn)
	}
	return func(ctx context.Context, in In) (Out, error) {
		var zero Out
		ctx, sp := a.startSpan(ctx, &cfg)
		input, err := toJSONValue(in)
		if err != nil {
			err = fmt.Errorf("guard client: step %q: input %w", cfg.stepName, err)
			sp.end(guard.StagePre, err)
			return zero, err
		}
		step := guard.Step{Type: cfg.stepType, Name: cfg.stepName, Input: input}
		if m, ok := ctx.Value(stepContextKey{}).(map[string]any); ok {
			step.Context = m
		}
		redacted, err := a.checkStage(ctx, &step, guard.StagePre, &cfg)
		if err == nil && redacted {
			in, err = fromJSONValue[In](step.Input)
		}
		if err != nil {
			sp.end(guard.StagePre, err)
			return zero, err
		}
		out, err := callFn(ctx, a, fn, in)
		if err != nil {
			sp.end(guard.StagePost, err)
			return out, err
		}
		if step.Output, err = toJSONValue(out); err != nil {
			err = fmt.Errorf("guard client: step %q: output %w", cfg.stepName, err)
			sp.end(guard.StagePost, err)
			return zero, err
		}
		redacted, err = a.checkStage(ctx, &step, guard.StagePost, &cfg)
		if err == nil && redacted {
			out, err = fromJSONValue[Out](step.Output)
		}
		if err != nil {
			sp.end(guard.StagePost, err)
			return zero, err
		}
		sp.end(guard.StagePost, nil)
		return out, nil
	}
}

// check evaluates one stage: sdk controls in-process, then server controls (server or in-process). Deny
// from either wins over steer; an sdk deny skips the server. When a redacting control matched, the step's
// payload for the stage (input at pre, output at post) is replaced by its redacted form, in step itself,
// before the step is recorded or sent on, and redacted is true: the server controls see what the sdk
// controls redacted, so the server never receives it.
func (a *Agent) check(ctx context.Context, step *guard.Step, stage guard.Stage, cfg *protectConfig) (redacted bool, err error) {
	p := a.pol.Load()
	// One deadline (Config.EvaluationTimeout) bounds all of this stage's in-process evaluations: the
	// enforced sdk controls, the server controls when evaluated in-process, and the shadow controls of
	// either, which run after the enforced ones on what those left (issue 23: each pass had a deadline
	// of its own, so a stage could take four). The HTTP call keeps its own timeout (Config.Timeout).
	ectx, cancel := a.evaluationContext(ctx)
	defer cancel()
	shadow := a.events != nil && p.sdk.HasShadow()
	var shadowRes *guard.Result
	shadowDone := false
	if shadow {
		// Shadow sdk controls are recorded whatever the decision turns out to be (deferred: after the
		// enforced ones, before cancel), on the step as the agent gave it, before any redaction. When
		// the enforced controls were evaluated, the shadow ones were with them (EvaluateWithShadow: on
		// the session state before the step); otherwise they are evaluated now.
		given := *step
		defer func() {
			if shadowDone {
				a.recordShadow(ectx, &given, stage, cfg, shadowRes)
			} else {
				a.observeShadow(ectx, p.sdk, &given, stage, cfg)
			}
		}()
	}
	var steer error
	if p.sdk.Applies(step, stage) {
		var err error
		if a.quiet() && !p.sdk.Redacts() {
			// Nothing to record, log or redact: the decision-only path builds no per-control results.
			err = p.sdk.Check(ectx, step, stage)
		} else {
			var res *guard.Result
			var eerr error
			if shadow {
				res, shadowRes, eerr = p.sdk.EvaluateWithShadow(ectx, step, stage)
				shadowDone = eerr == nil
			} else {
				res, eerr = p.sdk.Evaluate(ectx, step, stage)
			}
			if eerr != nil {
				return redacted, eerr
			}
			redacted = applyRedaction(step, res) || redacted
			a.observe(ctx, step, stage, cfg, res, true)
			err = res.Err()
		}
		if err != nil {
			if isDeny(err) || !steerErr(err) {
				return redacted, err
			}
			steer = err
		}
	}
	if p.srv.Applies(step, stage) {
		evalStep := step
		if grant := a.rememberedGrant(ctx, step, stage); grant != "" {
			// The same step was refused for approval before and a person approved it since.
			evalStep = withGrant(step, grant)
		}
		res, err := a.evaluateServer(ctx, ectx, p, evalStep, stage, cfg)
		if evalStep != step {
			step.Input, step.Output = evalStep.Input, evalStep.Output // what a redacting control replaced
		}
		if err != nil {
			return redacted, err
		}
		if res.Approval != nil && res.Approval.Status == guard.ApprovalGranted {
			a.forgetStep(step, stage)
		}
		if res.Approval != nil && res.Approval.Status == guard.ApprovalRequired && res.Approval.ID != "" {
			// A person may approve this step (approval.go): wait for it when configured, else say so.
			if res, err = a.awaitApproval(ctx, p, step, stage, cfg, res); err != nil {
				return res.Redacted != nil || redacted, err
			}
		}
		redacted = res.Redacted != nil || redacted
		if err := res.Err(); err != nil {
			if isDeny(err) || steer == nil {
				return redacted, err
			}
		}
	}
	return redacted, steer
}

// applyRedaction replaces step's payload by the redacted one of res, if any, and reports whether it did.
func applyRedaction(step *guard.Step, res *guard.Result) bool {
	if res.Redacted == nil {
		return false
	}
	*step = *res.RedactedStep(step)
	return true
}

// evaluateServer evaluates the server controls: by POST /evaluation, or in-process (Config.
// LocalServerControls, the agent not registered yet, or the server failing). ctx is the caller's (the
// HTTP call has its own timeout); ectx carries the stage's one in-process evaluation deadline.
func (a *Agent) evaluateServer(ctx, ectx context.Context, p *policy, step *guard.Step, stage guard.Stage, cfg *protectConfig) (*guard.Result, error) {
	local := a.s.LocalServerControls || time.Now().UnixNano() < a.evalDownUntil.Load() || !a.registered.Load()
	if local && a.approvalAtServer(step, nil) {
		local = false // only the server consumes a grant (approval_local.go)
	}
	if !local {
		res, err := a.api.Evaluate(ctx, a.name, *step, stage)
		if err == nil {
			if a.evalFailing.CompareAndSwap(true, false) {
				a.logProtect.Info("server evaluation works again", zap.String("agent", a.name))
			}
			applyRedaction(step, res)
			a.observe(ctx, step, stage, cfg, res, false)
			return res, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		a.evalDownUntil.Store(time.Now().Add(evalBackoff).UnixNano())
		if !a.evalFailing.Swap(true) {
			a.logProtect.Warn("server evaluation failed; evaluating the server controls of the snapshot in-process",
				zap.String("agent", a.name), zap.Error(err))
		}
	}
	given := *step
	shadow := a.events != nil && p.srv.HasShadow()
	var res, shadowRes *guard.Result
	var err error
	if shadow {
		// The shadow controls with the enforced ones, on the session state before the step.
		res, shadowRes, err = p.srv.EvaluateWithShadow(ectx, step, stage)
	} else {
		res, err = p.srv.Evaluate(ectx, step, stage)
	}
	if err != nil {
		return nil, err
	}
	if a.approvalAtServer(step, res) {
		// Only the server opens approval requests (approval_local.go).
		if sres, err := a.api.Evaluate(ctx, a.name, *step, stage); err == nil {
			applyRedaction(step, sres)
			a.observe(ctx, step, stage, cfg, sres, false)
			return sres, nil
		}
	}
	applyRedaction(step, res)
	a.observe(ctx, step, stage, cfg, res, true)
	// The server records its shadow controls itself when it evaluates; in-process, the client does, on
	// what the enforced controls left of the deadline and on the step they saw.
	if shadow {
		a.recordShadow(ectx, &given, stage, cfg, shadowRes)
	}
	return res, nil
}

// evaluationContext bounds one in-process evaluation by Config.EvaluationTimeout, unless ctx already
// ends sooner (or the timeout is off).
func (a *Agent) evaluationContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := a.s.EvaluationTimeout
	if d <= 0 {
		return ctx, func() {}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// quiet reports whether in-process evaluations need no per-control results: no events, no logs.
func (a *Agent) quiet() bool { return a.events == nil && a.steps == nil && !a.s.log.enabled }

func isDeny(err error) bool {
	var v *guard.ControlViolationError
	return errors.As(err, &v)
}

func steerErr(err error) bool {
	var s *guard.ControlSteerError
	return errors.As(err, &s)
}

// fromJSONValue turns a redacted JSON value back into T through encoding/json.
func fromJSONValue[T any](v any) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return out, fmt.Errorf("guard client: the redacted value does not fit %T: %w", out, err)
	}
	return out, nil
}
