package store_test

import (
	"fmt"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
)

// stepsOf returns n distinct steps with small schemas, like a registration of many tools.
func stepsOf(n int) []guard.StepSchema {
	steps := make([]guard.StepSchema, n)
	for i := range steps {
		steps[i] = guard.StepSchema{Type: "tool", Name: fmt.Sprintf("tool_%d", i), Description: "a tool",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}},
			Metadata:    map[string]any{"team": "x"}}
	}
	return steps
}

// BenchmarkInitAgentSteps registers a new agent with many steps (one op: one registration).
func BenchmarkInitAgentSteps(b *testing.B) {
	for _, n := range []int{100, 1000, guard.MaxAgentSteps} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			eachBench(b, func(b *testing.B, s *store.Store) {
				ctx, steps, i := ctxT(b), stepsOf(n), 0
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: fmt.Sprintf("a%d", i)}, Steps: steps}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
	}
}
