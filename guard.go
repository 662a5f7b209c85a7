package guard

import (
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/guardrail-control/guard/evaluator"
)

// Engine evaluates steps against a compiled, immutable snapshot of controls. It is safe for concurrent
// use: Evaluate and Check read the current snapshot without locks, Update compiles a new one off the hot
// path and swaps it in only when every control compiled (UpdateTolerant swaps it in anyway, with what
// does not compile degraded to evaluator errors). Create one with New; the zero Engine works too
// (default options, no controls).
type Engine struct {
	cfg  engineConfig
	snap atomic.Pointer[snapshot]
	// shadow evaluates the shadow controls (see EvaluateShadow); nil when there are none, so that an
	// engine without shadow controls pays nothing for them.
	shadow atomic.Pointer[Engine]
}

type engineConfig struct {
	registry       *evaluator.Registry
	executions     map[Execution]bool
	logger         *zap.Logger
	maxConcurrency int
	noRunPrefilter bool           // tests only: compare results with and without the run prefilter
	shadow         bool           // compile the shadow controls (mode shadow) instead of the enforced ones
	liveIndexMin   int            // tests only: candidates from which the live index is used (0: default, <0: never)
	sess           *sessionShared // session state: store, agent name, step labels (session_eval.go)
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

// WithMaxConcurrency bounds how many controls with external evaluators one evaluation runs at once
// (default DefaultMaxConcurrency; values below 1 mean 1).
func WithMaxConcurrency(n int) Option { return func(c *engineConfig) { c.maxConcurrency = n } }

// New returns an engine with no controls: every step is allowed until Update is called.
func New(opts ...Option) *Engine {
	cfg := engineConfig{
		registry:       evaluator.Default,
		executions:     map[Execution]bool{ExecutionServer: true},
		logger:         zap.NewNop(),
		maxConcurrency: DefaultMaxConcurrency,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = zap.NewNop()
	}
	cfg.logger = cfg.logger.Named("agent_control.engine")
	if cfg.registry == nil {
		cfg.registry = evaluator.Default
	}
	if sh := cfg.sessions(); sh.stepLabels == nil {
		sh.stepLabels = &StepLabels{} // SetStepLabels replaces its content, never the pointer
	}
	e := &Engine{cfg: cfg}
	empty, _ := compile(nil, &cfg, false)
	e.snap.Store(empty)
	return e
}

// Update validates and compiles controls and, only if all of them are valid, replaces the engine's
// snapshot. A *ValidationError names each problem with the path controls.<index>.<field>. For controls
// that were valid when saved and must keep being enforced even where they no longer compile, see
// UpdateTolerant.
//
// Disabled controls, and controls whose execution the engine does not run (see WithExecution), are
// validated (their evaluator names are not checked: their runner may know evaluators this engine does
// not) and then dropped: they cost nothing at evaluation time.
func (e *Engine) Update(controls []Control) error { return e.update(controls, false) }

// update compiles controls (strictly or tolerantly, see compile) and swaps in the snapshot, if any.
func (e *Engine) update(controls []Control, tolerant bool) error {
	cfg := e.cfg
	if cfg.registry == nil { // the zero Engine
		cfg.registry = evaluator.Default
		cfg.executions = map[Execution]bool{ExecutionServer: true}
		cfg.logger = zap.NewNop()
	}
	s, err := compile(controls, &cfg, tolerant)
	if s == nil {
		return err
	}
	sh, err := compileShadow(controls, cfg, tolerant, err)
	if sh == nil && err != nil && !tolerant {
		return err
	}
	if sh != nil {
		markShadowCounters(sh.load(), s)
	}
	e.shadow.Store(sh)
	e.snap.Store(s)
	cfg.logger.Debug("controls compiled", zap.Int("controls", len(controls)), zap.Int("active", len(s.controls)),
		zap.Bool("degraded", err != nil))
	return err
}

// emptySnapshot is what a zero Engine evaluates against until its first Update.
var emptySnapshot, _ = compile(nil, &engineConfig{registry: evaluator.Default}, false)

// load returns the current snapshot.
func (e *Engine) load() *snapshot {
	if s := e.snap.Load(); s != nil {
		return s
	}
	return emptySnapshot
}
