package store_test

import (
	"encoding/json"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// The dashboard's samples (GET /steps/captured) read an agent's newest steps, optionally of one step
// type, name and stage.
func TestCapturedStepsFiltersAndNewestFirst(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		base := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
		mk := func(i int, typ, name string, stage guard.Stage) guard.CapturedStep {
			c := capturedStep("a", base.Add(time.Duration(i)*time.Minute), `{"type":"`+typ+`","name":"`+name+`","input":{"q":"`+string(rune('0'+i))+`"}}`)
			c.StepType, c.StepName, c.Stage = typ, name, stage
			return c
		}
		in := []guard.CapturedStep{
			mk(0, "tool", "search", guard.StagePre),
			mk(1, "llm", "chat", guard.StagePre),
			mk(2, "tool", "search", guard.StagePost),
			mk(3, "tool", "fetch", guard.StagePre),
			mk(4, "llm", "chat", guard.StagePost),
		}
		// Two steps at the same microsecond: the newer id comes first when newest first.
		in = append(in, mk(5, "tool", "search", guard.StagePre), mk(5, "tool", "search", guard.StagePre))
		in[6].Step = json.RawMessage(`{"type":"tool","name":"search","input":{"q":"6"}}`)
		other := capturedStep("b", base.Add(10*time.Minute), `{"type":"tool","name":"search","input":{"q":"b"}}`)
		if err := s.InsertCapturedSteps(ctx, append(in, other)); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			q    guard.CaptureQuery
			want string // inputs' q, in order
			more bool
		}{
			{"newest first", guard.CaptureQuery{AgentName: "a", NewestFirst: true, Limit: 10}, "6543210", false},
			{"newest first, limited", guard.CaptureQuery{AgentName: "a", NewestFirst: true, Limit: 2}, "65", true},
			{"oldest first", guard.CaptureQuery{AgentName: "a", Limit: 3}, "012", true},
			{"step type", guard.CaptureQuery{AgentName: "a", StepType: "llm", NewestFirst: true, Limit: 10}, "41", false},
			{"step name", guard.CaptureQuery{AgentName: "a", StepName: "search", NewestFirst: true, Limit: 10}, "6520", false},
			{"stage", guard.CaptureQuery{AgentName: "a", Stage: guard.StagePost, NewestFirst: true, Limit: 10}, "42", false},
			{"all three", guard.CaptureQuery{AgentName: "a", StepType: "tool", StepName: "search", Stage: guard.StagePre, NewestFirst: true, Limit: 10}, "650", false},
			{"range, newest first", guard.CaptureQuery{AgentName: "a", Start: base.Add(time.Minute), End: base.Add(4 * time.Minute), NewestFirst: true, Limit: 10}, "321", false},
			{"nothing matches", guard.CaptureQuery{AgentName: "a", StepType: "llm", StepName: "search", Limit: 10}, "", false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, more, err := s.CapturedSteps(ctx, tt.q)
				if err != nil {
					t.Fatal(err)
				}
				var qs string
				for _, c := range got {
					var st guard.Step
					if err := json.Unmarshal(c.Step, &st); err != nil {
						t.Fatal(err)
					}
					qs += st.Input.(map[string]any)["q"].(string)
				}
				if qs != tt.want || more != tt.more {
					t.Errorf("got %q (more %v), want %q (more %v)", qs, more, tt.want, tt.more)
				}
			})
		}
	})
}
