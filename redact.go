package guard

import (
	"fmt"
	"unicode/utf8"
)

// DefaultRedactReplacement is the replacement of a Redaction that names none: "{type}" stands for the
// type of what was found (the pii entity, the secrets rule id, "regex", "list").
const DefaultRedactReplacement = "[REDACTED:{type}]"

// MaxRedactReplacementLength bounds action.redact.replacement, in characters.
const MaxRedactReplacementLength = 256

// Redaction is action.redact: a control with it, when it counts as matched, has what its condition's
// evaluators found in the stage's payload replaced in the evaluation result (Result.Redacted).
//
// It is a field of the action, not a decision of its own, so that a redacting control still has one of
// the decisions every SDK knows (allow, warn, log, observe): an SDK or server that predates redaction
// reads it as that decision and lets the step through, where a new decision would be unknown to it. It
// is refused with deny and steer, which block the step: there is nothing to let through redacted.
type Redaction struct {
	// Replacement replaces each span; "{type}" in it is replaced by the span's type. Empty means
	// DefaultRedactReplacement (the wire form omits it).
	Replacement string `json:"replacement,omitempty"`
}

// replacement is the template in effect.
func (r *Redaction) replacement() string {
	if r == nil || r.Replacement == "" {
		return DefaultRedactReplacement
	}
	return r.Replacement
}

// Redacted is the redacted payload of an evaluation: Input at stage pre, Output at stage post, as the
// step carried it with every redacted span replaced (a JSON value: string, float64, bool, nil, []any,
// map[string]any). Only the stage's payload is ever redacted, so one of the two is set.
type Redacted struct {
	Input  any `json:"input,omitempty"`
	Output any `json:"output,omitempty"`
}

// redact decodes action.redact: an object with an optional replacement, allowed only with a decision
// that lets the step through.
func (p *parser) redact(v any, path string, decision Decision) *Redaction {
	obj, ok := p.object(v, path, "replacement")
	if !ok {
		return nil
	}
	r := &Redaction{}
	if rv, present := obj["replacement"]; present {
		rp := join(path, "replacement")
		if s, ok := p.str(rv, rp); ok {
			switch n := utf8.RuneCountInString(s); {
			case n == 0:
				p.add(rp, CodeEmpty, "must not be empty (omit it for the default "+DefaultRedactReplacement+")")
			case n > MaxRedactReplacementLength:
				p.add(rp, CodeTooLong, fmt.Sprintf("must be at most %d characters", MaxRedactReplacementLength))
			}
			r.Replacement = s
		}
	}
	if decision == DecisionDeny || decision == DecisionSteer {
		p.add(path, CodeConflict, "redaction needs a decision that lets the step through (allow, warn, log, observe); "+
			string(decision)+" blocks it")
	}
	return r
}

// Redacts reports whether the engine holds an enforced control with action.redact. Check only decides:
// a caller that must hand on the redacted payload uses Evaluate when this is true.
func (e *Engine) Redacts() bool { return e.load().hasRedact }

// RedactedStep returns step as it may be handed on or stored after this result: step itself when nothing
// was redacted, otherwise a copy whose input (stage pre) or output (stage post) is the redacted payload.
func (r *Result) RedactedStep(step *Step) *Step {
	if r == nil || r.Redacted == nil || step == nil {
		return step
	}
	cp := *step
	if r.Redacted.Input != nil {
		cp.Input = r.Redacted.Input
	}
	if r.Redacted.Output != nil {
		cp.Output = r.Redacted.Output
	}
	return &cp
}
