package guard

import (
	"context"
	"encoding/json"
	"time"
)

// CapturedStep is one step an agent had evaluated, kept for replay (issue 14): what was evaluated (the
// step, already redacted), at which stage, when, and the decision it got. Step holds the JSON of a Step
// ({"type", "name", "input", "output", "context"}) exactly as it is stored, so that replay decodes what
// was kept and nothing is re-encoded on the way in.
type CapturedStep struct {
	ID        int64           `json:"id"`
	AgentName string          `json:"agent_name"`
	Stage     Stage           `json:"stage"`
	StepType  string          `json:"step_type"`
	StepName  string          `json:"step_name"`
	Step      json.RawMessage `json:"step"`
	Decision  Decision        `json:"decision"`
	Source    string          `json:"source"` // "server" (POST /evaluation) or "sdk" (posted by a client)
	Time      time.Time       `json:"timestamp"`
}

// CaptureQuery selects captured steps: an agent ("" for every agent), optionally a step type, a step
// name and a stage (empty: any), a time range [Start, End) (zero bounds do not restrict) and at most
// Limit steps, oldest first (newest first when NewestFirst is set), whose Step JSON adds up to at most
// MaxBytes (0: no byte bound; the first step is returned whatever its size).
type CaptureQuery struct {
	AgentName   string
	StepType    string
	StepName    string
	Stage       Stage
	Start       time.Time
	End         time.Time
	Limit       int
	MaxBytes    int64
	NewestFirst bool
	Scope       AgentScope // only these agents' steps (a scoped key's)
}

// CaptureStore keeps captured steps in a bounded table. The store package implements it; the server uses
// it only when step capture is configured.
type CaptureStore interface {
	// InsertCapturedSteps stores a batch in one transaction; a step without a time gets the current time.
	InsertCapturedSteps(ctx context.Context, steps []CapturedStep) error
	// CapturedSteps returns the steps q selects, oldest first (or newest first); more reports that further steps matched
	// beyond the Limit or MaxBytes bound.
	CapturedSteps(ctx context.Context, q CaptureQuery) (steps []CapturedStep, more bool, err error)
	// PruneCapturedSteps deletes the steps older than before, then the oldest steps until the stored
	// step bytes are at most maxBytes (0: no byte bound); it returns how many it deleted.
	PruneCapturedSteps(ctx context.Context, before time.Time, maxBytes int64) (int64, error)
}
