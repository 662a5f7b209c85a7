package mcpgateway

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// LocalGuard checks calls against a fixed list of controls in-process, with no server at all (guard mcp
// --controls FILE): every control is evaluated here, whatever its execution. Matches are logged (deny,
// steer and warn at warn level, the others at info); there is no server to record events.
type LocalGuard struct {
	e   *guard.Engine
	log *zap.Logger
}

// NewLocalGuard compiles controls (from client.LoadControlsFile, for instance). Evaluators reg does not
// have make their controls fall to on_error; reg nil means evaluator.Default. logger nil logs nothing.
func NewLocalGuard(controls []guard.Control, reg *evaluator.Registry, logger *zap.Logger) (*LocalGuard, error) {
	return NewLocalGuardSessions(controls, reg, nil, logger)
}

// NewLocalGuardSessions is NewLocalGuard whose session state is kept in sessions (nil: in memory), e.g. a
// Redis store (sessionredis) shared with the agent's other processes.
func NewLocalGuardSessions(controls []guard.Control, reg *evaluator.Registry, sessions guard.SessionStore, logger *zap.Logger) (*LocalGuard, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	opts := []guard.Option{guard.WithRegistry(reg), guard.WithExecution(guard.ExecutionSDK, guard.ExecutionServer), guard.WithLogger(logger)}
	if sessions != nil {
		opts = append(opts, guard.WithSessionStore(sessions))
	}
	e := guard.New(opts...)
	if err := e.UpdateTolerant(controls); err != nil {
		for _, cp := range guard.ProblemsByControl(err) {
			logger.Warn("control does not compile in this process; it is evaluated as an error (its on_error decides)",
				zap.String("control", controls[cp.Index].Name), zap.Error(&guard.ValidationError{Problems: cp.Problems}))
		}
	}
	return &LocalGuard{e: e, log: logger}, nil
}

// CheckStep implements Guard. One deadline, guard.DefaultEvaluationTimeout (or ctx's, when sooner),
// bounds the stage's evaluation as a whole, as in the server and the client library; controls it leaves
// unevaluated fall to their on_error (deny by default). Shadow controls are not evaluated here: there is
// nowhere to record what they would have decided.
func (g *LocalGuard) CheckStep(ctx context.Context, step *guard.Step, stage guard.Stage) error {
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > guard.DefaultEvaluationTimeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, guard.DefaultEvaluationTimeout)
		defer cancel()
	}
	res, err := g.e.Evaluate(ctx, step, stage)
	if err != nil {
		return err
	}
	*step = *res.RedactedStep(step) // a redacting control matched: the gateway hands on the redacted payload
	for i := range res.Matches {
		m := &res.Matches[i]
		f := []zap.Field{zap.String("step_type", step.Type), zap.String("step_name", step.Name), zap.String("stage", string(stage)),
			zap.Int64("control_id", m.ControlID), zap.String("control_name", m.ControlName), zap.String("action", string(m.Action))}
		switch m.Action {
		case guard.DecisionDeny, guard.DecisionSteer, guard.DecisionWarn:
			g.log.Warn("control matched", f...)
		default:
			g.log.Info("control matched", f...)
		}
	}
	for i := range res.Errors {
		g.log.Warn("control evaluation failed", zap.String("step_name", step.Name), zap.String("stage", string(stage)),
			zap.String("control_name", res.Errors[i].ControlName), zap.String("error", res.Errors[i].Result.Error))
	}
	return res.Err()
}

// SyncSteps implements Guard: there is no registration without a server; the steps' session labels
// (from the tools' annotations) replace those the engine applies. Call it once with Gateway.Steps before
// serving, so that the labels apply from the first call.
func (g *LocalGuard) SyncSteps(_ context.Context, steps []guard.StepSchema) error {
	g.e.SetStepLabels(guard.LabelsOfSteps(steps))
	return nil
}
