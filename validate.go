package guard

import "github.com/guardrail-control/guard/evaluator"

// ValidateOption configures validation of control data.
type ValidateOption func(*validateConfig)

type validateConfig struct {
	registry     *evaluator.Registry
	allowUnknown bool
}

// WithValidationRegistry validates evaluator names and configs against r instead of evaluator.Default.
func WithValidationRegistry(r *evaluator.Registry) ValidateOption {
	return func(c *validateConfig) { c.registry = r }
}

// AllowUnknownEvaluators accepts evaluator names the registry does not know (their config is not checked).
func AllowUnknownEvaluators() ValidateOption {
	return func(c *validateConfig) { c.allowUnknown = true }
}

// ParseControlData decodes control data JSON strictly (unknown fields, wrong shapes), applies defaults
// (enabled true, execution server, observe -> log), accepts the legacy flat selector + evaluator form, and
// validates the result. It returns *ValidationError listing every problem with its field path relative to
// the data object ("condition.and.1.evaluator.config.pattern").
func ParseControlData(raw []byte, opts ...ValidateOption) (ControlData, error) {
	panic("not implemented yet")
}

// Validate checks control data built in Go (not decoded from JSON) with the same rules as ParseControlData.
func (d *ControlData) Validate(opts ...ValidateOption) error {
	panic("not implemented yet")
}
