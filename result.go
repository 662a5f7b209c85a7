package guard

import "time"

// Result is the outcome of evaluating a step at one stage: the wire response of POST /evaluation.
// Matches, Errors and NonMatches are never nil.
type Result struct {
	IsSafe          bool             `json:"is_safe"`
	Decision        Decision         `json:"decision"`
	Confidence      float64          `json:"confidence"`
	Reason          string           `json:"reason,omitempty"`
	SteeringContext *SteeringContext `json:"steering_context,omitempty"`
	Matches         []ControlResult  `json:"matches"`
	Errors          []ControlResult  `json:"errors"`
	NonMatches      []ControlResult  `json:"non_matches"`
	// Redacted is the stage's payload with what redacting controls found replaced; nil when no control
	// with action.redact counted as matched (see Redaction).
	Redacted *Redacted `json:"redacted,omitempty"`
	// Approval is set when the deciding control carries action.approval, or when a grant let such a
	// control through (approval.go); nil otherwise.
	Approval *ApprovalRequest `json:"approval,omitempty"`
	// Session is the step's session and, when a control that reads session state blocked it, the history
	// that made it block (session_eval.go); nil for agents whose controls use no session state.
	Session *SessionOutcome `json:"session,omitempty"`
}

// ControlResult is what one evaluated control produced.
type ControlResult struct {
	ControlExecutionID string           `json:"control_execution_id"`
	ControlID          int64            `json:"control_id"`
	ControlName        string           `json:"control_name"`
	Action             Decision         `json:"action"`
	Result             EvaluatorResult  `json:"result"`
	SteeringContext    *SteeringContext `json:"steering_context,omitempty"`
	Metadata           map[string]any   `json:"metadata,omitempty"`

	// Fields kept for observability, not sent on the wire.
	EvaluatorName string        `json:"-"` // the first leaf's evaluator
	SelectorPath  string        `json:"-"` // the first leaf's selector path
	Duration      time.Duration `json:"-"` // time spent evaluating the condition
	// ControlVersion is the version of the control that was evaluated (Control.Version), for its event.
	ControlVersion int `json:"-"`
}

// EvaluatorResult is the combined outcome of a control's condition.
type EvaluatorResult struct {
	Matched    bool           `json:"matched"`
	Confidence float64        `json:"confidence"`
	Message    string         `json:"message,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Error      string         `json:"error,omitempty"`
}
