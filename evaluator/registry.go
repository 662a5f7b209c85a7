package evaluator

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// ErrUnknownEvaluator is returned (wrapped) when a name is not registered or not available.
var ErrUnknownEvaluator = errors.New("unknown evaluator")

// OnError says what an evaluator error means for the control.
type OnError string

// The two on_error settings: fail closed (deny, the default) or fail open (allow).
const (
	OnErrorDeny  OnError = "deny"
	OnErrorAllow OnError = "allow"
)

// Default timeouts for evaluators whose config has no timeout_ms.
const (
	DefaultTimeout         = time.Second
	DefaultExternalTimeout = 10 * time.Second
)

// Built is a configured evaluator together with the common settings of its config.
type Built struct {
	Evaluator Evaluator
	Factory   *Factory
	OnError   OnError
	Timeout   time.Duration
}

// Registry maps evaluator names to factories. The zero value is not usable; use NewRegistry.
type Registry struct {
	mu        sync.RWMutex
	factories map[string]*Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{factories: make(map[string]*Factory)}
}

// Default is the process-wide registry that evaluator packages register into from init().
var Default = NewRegistry()

// Register adds f to the Default registry. It panics if the name is taken or f is incomplete, like
// database/sql.Register.
func Register(f Factory) { Default.Register(f) }

// Register adds f to r. It panics if the name is taken, f is incomplete or its ConfigSchema is not a
// valid JSON Schema (programmer errors). The schema is compiled once here, with on_error and timeout_ms
// merged into its properties.
func (r *Registry) Register(f Factory) {
	if f.Name == "" || f.New == nil {
		panic("evaluator: Register with an empty name or a nil New")
	}
	if err := f.prepare(); err != nil {
		panic(fmt.Sprintf("evaluator: invalid ConfigSchema for %q: %v", f.Name, err))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.factories[f.Name]; dup {
		panic(fmt.Sprintf("evaluator: Register called twice for %q", f.Name))
	}
	r.factories[f.Name] = &f
}

// Lookup returns the factory registered under name if it is available now.
func (r *Registry) Lookup(name string) (*Factory, bool) {
	r.mu.RLock()
	f, ok := r.factories[name]
	r.mu.RUnlock()
	if !ok || (f.Available != nil && !f.Available()) {
		return nil, false
	}
	return f, true
}

// List returns the available factories sorted by name.
func (r *Registry) List() []*Factory {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Factory, 0, len(r.factories))
	for _, f := range r.factories {
		if f.Available == nil || f.Available() {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Build validates config for the named evaluator and returns a ready evaluator. Errors: ErrUnknownEvaluator
// (wrapped) for a name that is not registered or not available, *ConfigError for a bad config.
func (r *Registry) Build(name string, config map[string]any) (*Built, error) {
	f, ok := r.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownEvaluator, name)
	}
	config, shaped := normalizeConfig(config)
	if !shaped {
		return nil, &ConfigError{Problems: []FieldError{{Code: "type", Message: "config must be a JSON object"}}}
	}
	problems := f.validateSchema(config)
	common, rest, more := splitCommon(config, f.External)
	problems = appendNewFields(problems, more)
	if len(problems) > 0 {
		// When the only schema problems are unknown keys, the known keys are well-formed: let the factory
		// check them too, so that {"pattern": "(", "bogus": 1} reports both problems at once.
		if onlyUnknownFields(problems) {
			if _, err := f.New(withoutFields(rest, problems), Options{Timeout: common.Timeout}); err != nil {
				problems = appendNewFields(problems, factoryProblems(err))
			}
		}
		return nil, &ConfigError{Problems: problems}
	}
	ev, err := f.New(rest, Options{Timeout: common.Timeout})
	if err != nil {
		return nil, &ConfigError{Problems: factoryProblems(err)}
	}
	return &Built{Evaluator: ev, Factory: f, OnError: common.OnError, Timeout: common.Timeout}, nil
}

// factoryProblems turns the error of a Factory's New into field problems.
func factoryProblems(err error) []FieldError {
	var ce *ConfigError
	if errors.As(err, &ce) {
		return ce.Problems
	}
	var fe FieldError
	if errors.As(err, &fe) {
		return []FieldError{fe}
	}
	return []FieldError{{Code: "invalid", Message: err.Error()}}
}

// onlyUnknownFields reports whether every problem is an unknown top-level key.
func onlyUnknownFields(problems []FieldError) bool {
	for _, p := range problems {
		if p.Code != "unknown_field" || strings.Contains(p.Field, ".") {
			return false
		}
	}
	return true
}

// withoutFields returns config without the keys named by problems.
func withoutFields(config map[string]any, problems []FieldError) map[string]any {
	out := make(map[string]any, len(config))
	for k, v := range config {
		out[k] = v
	}
	for _, p := range problems {
		delete(out, p.Field)
	}
	return out
}

// Validate reports whether config is acceptable for the named evaluator, with the same errors as Build.
func (r *Registry) Validate(name string, config map[string]any) error {
	_, err := r.Build(name, config)
	return err
}

// Canonical returns config in the stored form of the evaluator registered as name (Factory.Canonical),
// or config itself when the evaluator has no canonical form or is not registered. Call it only on a
// config that Validate accepted.
func (r *Registry) Canonical(name string, config map[string]any) map[string]any {
	r.mu.RLock()
	f, ok := r.factories[name]
	r.mu.RUnlock()
	if !ok || f.Canonical == nil {
		return config
	}
	return f.Canonical(config)
}
