package guard

import "encoding/json"

// Decision is what a control decides when its condition matches.
type Decision string

// The decisions of the control language. Deny blocks, steer blocks with guidance, the rest never block.
const (
	DecisionAllow Decision = "allow"
	DecisionDeny  Decision = "deny"
	DecisionSteer Decision = "steer"
	DecisionWarn  Decision = "warn"
	DecisionLog   Decision = "log"
	// DecisionObserve is the reference implementation's name of DecisionLog: it behaves as log in the
	// engine, and a control saved with it keeps it (it reads back observe).
	DecisionObserve Decision = "observe"
)

// Execution says where a control is evaluated.
type Execution string

// Where controls run: by the server in POST /evaluation, or in-process by the client library.
const (
	ExecutionServer Execution = "server"
	ExecutionSDK    Execution = "sdk"
)

// Control is a named, identified piece of control data: what the engine compiles.
type Control struct {
	ID   int64       `json:"control_id"`
	Name string      `json:"name"`
	Data ControlData `json:"data"`
	// Version is the stored control's version (0 when it has none): results carry it into events, so an
	// event says which version of the control decided.
	Version int `json:"version,omitempty"`
}

// ControlData is the control configuration: scope (when), condition (what and how) and action (decision).
// Decode untrusted JSON with ParseControlData, which applies defaults and reports every problem at once.
type ControlData struct {
	Description string    `json:"description"`
	Enabled     bool      `json:"enabled"`
	Execution   Execution `json:"execution"`
	Scope       Scope     `json:"scope"`
	Condition   Condition `json:"condition"`
	Action      Action    `json:"action"`
	Tags        []string  `json:"tags"`
	// Mode is enforce (the default, also when empty) or shadow: a shadow control is evaluated and
	// recorded but never part of the decision (see Engine.EvaluateShadow). It is kept as written: an
	// empty mode is omitted on the wire.
	Mode Mode `json:"mode,omitempty"`
	// Tests are the control's own examples, in the per-control form of TestCase (no control name):
	// RunControlTests runs them, the server on every save. The engine ignores them when evaluating.
	Tests []TestCase `json:"tests,omitempty"`
}

// Mode says whether a control's decision counts (enforce) or is only recorded (shadow).
type Mode string

// The modes of a control.
const (
	ModeEnforce Mode = "enforce"
	ModeShadow  Mode = "shadow"
)

// Shadow reports whether d is in shadow mode.
func (d *ControlData) Shadow() bool { return d.Mode == ModeShadow }

// Scope says which steps and stages a control applies to. A nil filter does not restrict; StepNames and
// StepNameRegex combine with OR, everything else with AND.
type Scope struct {
	StepTypes     []string `json:"step_types,omitempty"`
	StepNames     []string `json:"step_names,omitempty"`
	StepNameRegex string   `json:"step_name_regex,omitempty"`
	Stages        []Stage  `json:"stages,omitempty"`
}

// Action is what a control decides on a match.
type Action struct {
	Decision        Decision         `json:"decision"`
	SteeringContext *SteeringContext `json:"steering_context,omitempty"`
	Metadata        map[string]any   `json:"metadata,omitempty"`
	// Redact, with a decision that lets the step through (allow, warn, log, observe), asks for the spans
	// the condition's evaluators found to be replaced in the evaluation result (Result.Redacted).
	Redact *Redaction `json:"redact,omitempty"`
	// Approval, with deny or steer, asks a person to decide the refused step (approval.go).
	Approval *Approval `json:"approval,omitempty"`
	// Session is what the control adds to the step's session (session_effect.go); nil: nothing.
	Session *SessionEffect `json:"session,omitempty"`
}

// SteeringContext is the corrective guidance a steer control returns to the agent. Its JSON form always
// has both fields, required_actions being [] when there are none (docs/api.md, "Control data").
type SteeringContext struct {
	Message         string   `json:"message"`
	RequiredActions []string `json:"required_actions"`
}

// MarshalJSON writes required_actions as [] rather than null when there are none.
func (s SteeringContext) MarshalJSON() ([]byte, error) {
	type plain SteeringContext
	p := plain(s)
	if p.RequiredActions == nil {
		p.RequiredActions = []string{}
	}
	return json.Marshal(p)
}

// MarshalJSON omits a scope list only when it is nil (no restriction) and writes an empty, non-nil list as
// [], so that a Go-built scope that can never apply is seen, and refused, by Validate rather than being
// read back as "every step".
func (s Scope) MarshalJSON() ([]byte, error) {
	var out struct {
		StepTypes     *[]string `json:"step_types,omitempty"`
		StepNames     *[]string `json:"step_names,omitempty"`
		StepNameRegex string    `json:"step_name_regex,omitempty"`
		Stages        *[]Stage  `json:"stages,omitempty"`
	}
	if s.StepTypes != nil {
		out.StepTypes = &s.StepTypes
	}
	if s.StepNames != nil {
		out.StepNames = &s.StepNames
	}
	if s.Stages != nil {
		out.Stages = &s.Stages
	}
	out.StepNameRegex = s.StepNameRegex
	return json.Marshal(out)
}
