package guard

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/internal/strictjson"
)

// ValidateOption configures validation of control data.
type ValidateOption func(*validateConfig)

type validateConfig struct {
	registry     *evaluator.Registry
	allowUnknown bool
	skipConfigs  bool
}

// WithValidationRegistry validates evaluator names and configs against r instead of evaluator.Default.
func WithValidationRegistry(r *evaluator.Registry) ValidateOption {
	return func(c *validateConfig) { c.registry = r }
}

// AllowUnknownEvaluators accepts evaluator names the registry does not know (their config is not checked).
func AllowUnknownEvaluators() ValidateOption {
	return func(c *validateConfig) { c.allowUnknown = true }
}

// SkipEvaluatorConfigs checks evaluator names but not their configs. It is for callers that build every
// evaluator right after validating (as Engine.Update does) and report config problems themselves, so
// that each evaluator is built once instead of twice.
func SkipEvaluatorConfigs() ValidateOption {
	return func(c *validateConfig) { c.skipConfigs = true }
}

// Limits of control data beyond those of the condition tree. See docs/control-language.md.
const (
	// MaxDescriptionLength bounds description, in characters (Unicode code points).
	MaxDescriptionLength = 4096
	// MaxTags bounds the number of tags of a control.
	MaxTags = 64
	// MaxTagLength bounds each tag, in characters; a tag has at least one.
	MaxTagLength = 64
	// MaxStepNameRegexLength bounds scope.step_name_regex, in characters.
	MaxStepNameRegexLength = 1024
	// MaxJSONDepth bounds the nesting of arrays and objects in control data JSON; deeper input is
	// rejected before it is decoded.
	MaxJSONDepth = 64
	// MaxProblems bounds the problems a ValidationError reports; further problems are dropped.
	MaxProblems = 100
)

// Problem codes used by ParseControlData and Validate. Evaluator config problems keep the code the
// evaluator reported (for example "required", "enum", "invalid_regex").
const (
	CodeInvalidJSON      = "invalid_json"
	CodeUnknownField     = "unknown_field"
	CodeDuplicateKey     = "duplicate_key"
	CodeType             = "type"
	CodeRequired         = "required"
	CodeEnum             = "enum"
	CodeEmpty            = "empty"
	CodeTooLong          = "too_long"
	CodeMaxDepth         = "max_depth"
	CodeMaxLeaves        = "max_leaves"
	CodeShape            = "shape"
	CodeConflict         = "conflict"
	CodeInvalidRegex     = "invalid_regex"
	CodeInvalidPath      = "invalid_path"
	CodeUnknownEvaluator = "unknown_evaluator"
	CodeInvalid          = "invalid"
)

// ParseControlData decodes control data JSON strictly (unknown fields, wrong shapes), applies defaults
// (enabled true, execution server; decisions are kept as written, observe included), accepts the legacy flat selector + evaluator form, and
// validates the result. It returns *ValidationError listing every problem with its field path relative to
// the data object ("condition.and.1.evaluator.config.pattern").
func ParseControlData(raw []byte, opts ...ValidateOption) (ControlData, error) {
	cfg := validateConfig{registry: evaluator.Default}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.registry == nil {
		cfg.registry = evaluator.Default
	}
	if jsonTooDeep(raw, MaxJSONDepth) {
		return ControlData{}, single(CodeMaxDepth, fmt.Sprintf("JSON is nested deeper than %d levels", MaxJSONDepth))
	}
	var v any
	if err := strictjson.Unmarshal(raw, &v); err != nil {
		var se *strictjson.Error
		switch {
		case errors.As(err, &se) && se.Kind == strictjson.KindSyntax:
			return ControlData{}, single(CodeInvalidJSON, fmt.Sprintf("invalid JSON at byte offset %d", se.Offset))
		case errors.As(err, &se) && se.Kind == strictjson.KindDuplicate:
			// Read either way, a repeated key would give two controls: refused, as the server refuses it.
			return ControlData{}, &ValidationError{Problems: []Problem{{Field: se.Path, Code: CodeDuplicateKey,
				Message: "appears more than once in the same object"}}}
		}
		return ControlData{}, single(CodeInvalidJSON, "invalid JSON")
	}
	p := parser{cfg: cfg}
	d := p.data(v)
	if len(p.problems) > 0 {
		return ControlData{}, &ValidationError{Problems: p.problems}
	}
	return d, nil
}

// Validate checks control data built in Go (not decoded from JSON) with the same rules as ParseControlData.
// It does not modify d. Zero values keep their Go meaning: Enabled false stays disabled, an empty
// Execution means server, nil Tags means none.
func (d *ControlData) Validate(opts ...ValidateOption) error {
	if d == nil {
		return single(CodeRequired, "control data is required")
	}
	c := *d
	if c.Execution == "" {
		c.Execution = ExecutionServer
	}
	cfg := validateConfig{registry: evaluator.Default}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.registry == nil {
		cfg.registry = evaluator.Default
	}
	if cfg.skipConfigs {
		// Without config checks, the decoded form can be built without the JSON round trip (validate_tree.go).
		if done, err := validateTree(&c, cfg); done {
			return err
		}
	}
	return validateByJSON(&c, opts)
}

// validateByJSON validates c by encoding it to JSON and parsing that: the definition of what Validate
// accepts, which dataTree reproduces without the round trip where it can.
func validateByJSON(c *ControlData, opts []ValidateOption) error {
	raw, err := json.Marshal(c)
	if err != nil {
		return single(CodeType, "control data cannot be encoded as JSON")
	}
	_, err = ParseControlData(raw, opts...)
	return err
}

// single is a ValidationError with one problem about the whole input.
func single(code, msg string) *ValidationError {
	return &ValidationError{Problems: []Problem{{Field: "", Code: code, Message: msg}}}
}

// jsonTooDeep reports whether raw nests arrays and objects deeper than limit. It only counts brackets
// outside strings, so it is linear, never recurses, and works on invalid JSON too.
func jsonTooDeep(raw []byte, limit int) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}
