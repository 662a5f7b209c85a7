package guard

import "fmt"

// Stage says when a step is checked: before the call (pre) or after it (post).
type Stage string

// The two stages of a step.
const (
	StagePre  Stage = "pre"
	StagePost Stage = "post"
)

// Valid reports whether s is pre or post.
func (s Stage) Valid() bool { return s == StagePre || s == StagePost }

// ParseStage turns a wire string into a Stage, failing on anything but pre and post.
func ParseStage(s string) (Stage, error) {
	st := Stage(s)
	if !st.Valid() {
		return "", fmt.Errorf("stage must be one of pre, post")
	}
	return st, nil
}

// Step is one call an agent makes: an LLM call or a tool call, with its input, its output (post stage) and
// context metadata. Selectors address its fields as type, name, input, output and context.
type Step struct {
	Type    string         `json:"type"`
	Name    string         `json:"name"`
	Input   any            `json:"input,omitempty"`
	Output  any            `json:"output,omitempty"`
	Context map[string]any `json:"context,omitempty"`
}
