package guard

import (
	"encoding/json"
	"time"
)

// ReplayResult is what a replay of captured steps found (POST /controls/replay): how many steps were
// replayed against the agent's current controls and against a draft, how many changed decision, counted by
// kind ("allow_to_deny", "deny_to_allow", ..., "steer_changed"), per-control match counts and a few samples
// of each kind of change. The server builds it; the Go client decodes it.
type ReplayResult struct {
	AgentName     *string         `json:"agent_name"`
	StartTime     time.Time       `json:"start_time"`
	EndTime       time.Time       `json:"end_time"`
	Limit         int             `json:"limit"`
	StepsReplayed int             `json:"steps_replayed"`
	StepsChanged  int             `json:"steps_changed"`
	Truncated     bool            `json:"truncated"`
	StepsSkipped  int             `json:"steps_skipped"`
	Message       string          `json:"message,omitempty"`
	Changes       map[string]int  `json:"changes"`
	Controls      []ReplayControl `json:"controls"`
	Samples       []ReplaySample  `json:"samples"`
	DurationMS    float64         `json:"duration_ms"`
}

// ReplayControl counts, for one control, the replayed steps it matched before and after. ControlID is nil
// for a control only the draft has.
type ReplayControl struct {
	ControlID       *int64 `json:"control_id"`
	ControlName     string `json:"control_name"`
	InDraft         bool   `json:"in_draft"`
	MatchedCurrent  int    `json:"matched_current"`
	MatchedDraft    int    `json:"matched_draft"`
	NewlyMatched    int    `json:"newly_matched"`
	NoLongerMatched int    `json:"no_longer_matched"`
	ErrorsCurrent   int    `json:"errors_current"`
	ErrorsDraft     int    `json:"errors_draft"`
}

// ReplaySample is a step whose decision changes under the draft, with both outcomes.
type ReplaySample struct {
	Kind      string          `json:"kind"`
	StepID    int64           `json:"step_id"`
	AgentName string          `json:"agent_name"`
	Stage     Stage           `json:"stage"`
	Timestamp time.Time       `json:"timestamp"`
	Step      json.RawMessage `json:"step"`
	// StepTruncated says Step holds only the type and name: the step was larger than 64 KiB.
	StepTruncated bool          `json:"step_truncated,omitempty"`
	Recorded      Decision      `json:"recorded_decision"`
	Current       ReplayOutcome `json:"current"`
	Draft         ReplayOutcome `json:"draft"`
}

// ReplayOutcome is one side (current or draft) of a changed step: the decision and the controls that
// matched or failed.
type ReplayOutcome struct {
	Decision        Decision         `json:"decision"`
	Reason          string           `json:"reason,omitempty"`
	SteeringContext *SteeringContext `json:"steering_context,omitempty"`
	Matched         []string         `json:"matched_controls"`
	Errors          []string         `json:"error_controls"`
	// ApprovalControl names the control with action.approval that refused the step: a person could have
	// let it through (docs/approvals.md); empty otherwise.
	ApprovalControl string `json:"approval_control,omitempty"`
}
