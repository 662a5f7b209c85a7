package guard

// Condition is a node of the boolean condition tree. Exactly one shape is set: a leaf (Selector and
// Evaluator), And, Or or Not.
type Condition struct {
	Selector  *Selector      `json:"selector,omitempty"`
	Evaluator *EvaluatorSpec `json:"evaluator,omitempty"`
	And       []Condition    `json:"and,omitempty"`
	Or        []Condition    `json:"or,omitempty"`
	Not       *Condition     `json:"not,omitempty"`
}

// IsLeaf reports whether c is a selector + evaluator leaf.
func (c *Condition) IsLeaf() bool { return c.Selector != nil || c.Evaluator != nil }

// Selector picks the data an evaluator looks at, as a dotted path into the step
// ("input.query", "context.user_role", "input.messages.0.content", "*").
type Selector struct {
	Path string `json:"path"`
	// Window bounds a session or agent counter or sum (session.count.*, session.sum.*, agent.*) to a
	// fixed window, a Go duration ("60s", "24h"); empty: the whole session (session_selector.go).
	Window string `json:"window,omitempty"`
}

// EvaluatorSpec names an evaluator and its configuration. Config may carry the common keys on_error
// ("deny" default, or "allow") and timeout_ms.
type EvaluatorSpec struct {
	Name     string         `json:"name"`
	Config   map[string]any `json:"config"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Limits of the condition tree.
const (
	MaxConditionDepth  = 6
	MaxConditionLeaves = 64
)
