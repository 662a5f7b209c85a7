package guard

import (
	"context"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/guardrail-control/guard/evaluator"
)

// Engine evaluates steps against a compiled, immutable snapshot of controls. It is safe for concurrent
// use: Evaluate and Check read the current snapshot without locks, Update compiles a new one off the hot
// path and swaps it in only when every control compiled.
type Engine struct {
	cfg  engineConfig
	snap atomic.Pointer[snapshot]
}

type engineConfig struct {
	registry   *evaluator.Registry
	executions map[Execution]bool
	logger     *zap.Logger
}

// Option configures an Engine.
type Option func(*engineConfig)

// WithRegistry makes the engine build evaluators from r instead of evaluator.Default.
func WithRegistry(r *evaluator.Registry) Option { return func(c *engineConfig) { c.registry = r } }

// WithExecution says where the engine runs: it evaluates only controls whose execution is one of ex.
// The default is ExecutionServer.
func WithExecution(ex ...Execution) Option {
	return func(c *engineConfig) {
		c.executions = make(map[Execution]bool, len(ex))
		for _, e := range ex {
			c.executions[e] = true
		}
	}
}

// WithLogger sets the logger; the engine logs under the name agent_control.engine. Default: no logging.
func WithLogger(l *zap.Logger) Option { return func(c *engineConfig) { c.logger = l } }

// New returns an engine with no controls: every step is allowed until Update is called.
func New(opts ...Option) *Engine {
	cfg := engineConfig{
		registry:   evaluator.Default,
		executions: map[Execution]bool{ExecutionServer: true},
		logger:     zap.NewNop(),
	}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.logger = cfg.logger.Named("agent_control.engine")
	e := &Engine{cfg: cfg}
	e.snap.Store(&snapshot{})
	return e
}

// snapshot is an immutable compiled set of controls. (Placeholder: the compiler is being written.)
type snapshot struct{}

// Update validates and compiles controls and, only if all of them are valid, replaces the engine's
// snapshot. A *ValidationError names each problem with the path controls.<index>.<field>.
func (e *Engine) Update(controls []Control) error {
	panic("not implemented yet")
}

// Evaluate checks step at stage against every enabled control that applies and returns the full result.
// It fails only for an invalid stage or a nil step; evaluator failures are reported inside the result.
func (e *Engine) Evaluate(ctx context.Context, step *Step, stage Stage) (*Result, error) {
	panic("not implemented yet")
}

// Check is the decision-only form of Evaluate: it returns nil when the step may proceed,
// *ControlViolationError for a deny, *ControlSteerError for a steer. It builds no per-control list.
func (e *Engine) Check(ctx context.Context, step *Step, stage Stage) error {
	panic("not implemented yet")
}

// Applies reports whether any enabled control of the snapshot applies to step at stage.
func (e *Engine) Applies(step *Step, stage Stage) bool {
	panic("not implemented yet")
}

// Err returns the blocking outcome of r as an error: *ControlViolationError for deny, *ControlSteerError
// for steer, nil otherwise.
func (r *Result) Err() error {
	panic("not implemented yet")
}
