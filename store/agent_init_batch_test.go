package store_test

import (
	"fmt"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestInitAgentStepsInBatches: registrations larger than one INSERT batch keep every step, in order,
// with their documents, on both dialects: new agents, strict additions and overwrites alike.
func TestInitAgentStepsInBatches(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		first := stepsOf(1234)
		if _, _, err := s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "big"}, Steps: first}); err != nil {
			t.Fatal(err)
		}
		more := stepsOf(1800)[1000:] // 234 known steps again, then 566 new ones
		if _, _, err := s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "big"}, Steps: more, ConflictMode: guard.ConflictStrict}); err != nil {
			t.Fatal(err)
		}
		_, got, err := s.GetAgent(ctx, "big")
		if err != nil || len(got) != 1800 {
			t.Fatalf("%d steps, %v", len(got), err)
		}
		for i, st := range got {
			if st.Name != fmt.Sprintf("tool_%d", i) || st.InputSchema["type"] != "object" || st.Metadata["team"] != "x" {
				t.Fatalf("step %d = %+v", i, st)
			}
		}
		if _, _, err := s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "big"}, Steps: first[:501], ConflictMode: guard.ConflictOverwrite}); err != nil {
			t.Fatal(err)
		}
		if _, got, err = s.GetAgent(ctx, "big"); err != nil || len(got) != 501 || got[500].Name != "tool_500" {
			t.Fatalf("after overwrite: %d steps, %v", len(got), err)
		}
		_, _, err = s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "too-many"}, Steps: stepsOf(guard.MaxAgentSteps + 1)})
		wantValidation(t, err, "steps")
		_, _, err = s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "deep", Metadata: map[string]any{"a": deep(70)}}})
		wantValidation(t, err, "agent.agent_metadata")
		_, _, err = s.PatchAgent(ctx, "big", guard.AgentPatch{Metadata: map[string]any{"a": deep(70)}})
		wantValidation(t, err, "agent_metadata")
	})
}

// deep returns n nested objects.
func deep(n int) map[string]any {
	m := map[string]any{}
	for range n - 1 {
		m = map[string]any{"a": m}
	}
	return m
}
