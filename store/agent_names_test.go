package store_test

import (
	"errors"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestCompatibilitySpellingsAreNotAgents: the Kelvin sign and İ, which Unicode lower-casing maps onto
// "k" and "i", neither register a second name for an ASCII agent nor find it, on both dialects.
func TestCompatibilitySpellingsAreNotAgents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		for _, name := range []string{"k-agent", "istanbul"} {
			if _, _, err := s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: name}}); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range []string{"\u212a-agent", "\u0130stanbul"} {
			_, _, err := s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: name}})
			wantValidation(t, err, "agent.agent_name")
			if _, _, err := s.GetAgent(ctx, name); !errors.Is(err, guard.ErrAgentNotFound) {
				t.Fatalf("GetAgent(%q) = %v", name, err)
			}
		}
		for _, filter := range []string{"\u212a", "\u0130st"} {
			got, info, err := s.ListAgents(ctx, guard.AgentFilter{Name: filter}, guard.PageRequest{})
			if err != nil || len(got) != 0 || info.Total != 0 {
				t.Fatalf("ListAgents(%q) = %v, %+v, %v", filter, got, info, err)
			}
		}
		got, _, err := s.ListAgents(ctx, guard.AgentFilter{Name: "K-AG"}, guard.PageRequest{})
		if err != nil || len(got) != 1 {
			t.Fatalf("ListAgents(K-AG) = %v, %v", got, err)
		}
	})
}
