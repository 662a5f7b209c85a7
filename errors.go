package guard

import (
	"errors"
	"fmt"
	"strings"
)

// ControlViolationError is returned when a deny control matched: the step must not proceed.
type ControlViolationError struct {
	ControlID   int64
	ControlName string
	Message     string
	Metadata    map[string]any
}

// Error implements the error interface.
func (e *ControlViolationError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("guard: step denied by control %q", e.ControlName)
	}
	return fmt.Sprintf("guard: step denied by control %q: %s", e.ControlName, e.Message)
}

// ControlSteerError is returned when a steer control matched and no deny did: the agent should follow the
// steering context and try again.
type ControlSteerError struct {
	ControlID       int64
	ControlName     string
	Message         string
	Metadata        map[string]any
	SteeringContext SteeringContext
}

// Error implements the error interface.
func (e *ControlSteerError) Error() string {
	return fmt.Sprintf("guard: step steered by control %q: %s", e.ControlName, e.SteeringContext.Message)
}

// Problem is one thing wrong with an input, located by a dotted field path as docs/api.md writes it
// ("condition.and.1.evaluator.config.pattern").
type Problem struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ValidationError lists every problem found in an input at once.
type ValidationError struct {
	Problems []Problem
}

// Error implements the error interface.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("guard: invalid input")
	for i, p := range e.Problems {
		if i == 3 {
			fmt.Fprintf(&b, " (and %d more)", len(e.Problems)-3)
			break
		}
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		if p.Field != "" {
			fmt.Fprintf(&b, "%s%s: %s", sep, p.Field, p.Message)
		} else {
			fmt.Fprintf(&b, "%s%s", sep, p.Message)
		}
	}
	return b.String()
}

// WithPrefix returns a copy whose field paths are prefixed by prefix and a dot ("data").
func (e *ValidationError) WithPrefix(prefix string) *ValidationError {
	out := &ValidationError{Problems: make([]Problem, len(e.Problems))}
	for i, p := range e.Problems {
		if p.Field == "" {
			p.Field = prefix
		} else {
			p.Field = prefix + "." + p.Field
		}
		out.Problems[i] = p
	}
	return out
}

// Errors a store returns, to be tested with errors.Is. The server maps them to status codes.
var (
	ErrAgentNotFound       = errors.New("agent not found")
	ErrControlNotFound     = errors.New("control not found")
	ErrVersionNotFound     = errors.New("version not found")
	ErrControlNameConflict = errors.New("control name already in use")
	ErrControlInUse        = errors.New("control is linked to agents")
	ErrSchemaIncompatible  = errors.New("step schema incompatible with the registered one")
	ErrNoControlData       = errors.New("control has no data")
	ErrUnavailable         = errors.New("database unavailable")
)

// ControlInUseError is returned when deleting a control that agents still use without force. It wraps
// ErrControlInUse.
type ControlInUseError struct {
	ControlID int64
	Agents    []string
}

// Error implements the error interface.
func (e *ControlInUseError) Error() string {
	return fmt.Sprintf("control %d is linked to %d agent(s): %s", e.ControlID, len(e.Agents), strings.Join(e.Agents, ", "))
}

// Unwrap lets errors.Is(err, ErrControlInUse) hold.
func (e *ControlInUseError) Unwrap() error { return ErrControlInUse }

// ErrBadCursor is returned for a pagination cursor the store did not issue.
var ErrBadCursor = errors.New("invalid pagination cursor")
