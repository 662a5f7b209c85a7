package store_test

import (
	"reflect"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

func schema(typ string) map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": typ}}}
}

func stepNames(steps []guard.StepSchema) []string {
	out := []string{}
	for _, s := range steps {
		out = append(out, s.Type+"/"+s.Name)
	}
	return out
}

func TestInitAgent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		in := guard.AgentInit{
			Agent: guard.Agent{Name: "  Support.Bot ", Description: "d1", Version: "1", Metadata: map[string]any{"team": "a"}},
			Steps: []guard.StepSchema{
				{Type: "llm", Name: "chat", InputSchema: schema("string")},
				{Type: "tool", Name: "search", Description: "web", OutputSchema: schema("array"), Metadata: map[string]any{"k": 1.0}},
			},
		}
		created, a, err := s.InitAgent(ctx, in)
		if err != nil || !created || a.Name != "support.bot" || a.Description != "d1" || a.Metadata["team"] != "a" {
			t.Fatalf("create = %v %+v %v", created, a, err)
		}
		_, steps, err := s.GetAgent(ctx, "SUPPORT.BOT")
		if err != nil || !reflect.DeepEqual(steps, in.Steps) {
			t.Fatalf("steps = %+v (%v), want %+v", steps, err, in.Steps)
		}

		// Strict: same schemas (in another key order / number spelling) are fine, new steps are added,
		// the agent's fields are kept.
		strict := guard.AgentInit{
			Agent: guard.Agent{Name: "support.bot", Description: "ignored"},
			Steps: []guard.StepSchema{
				{Type: "tool", Name: "search", OutputSchema: map[string]any{"properties": map[string]any{"q": map[string]any{"type": "array"}}, "type": "object"}},
				{Type: "tool", Name: "lookup"},
			},
			ConflictMode: guard.ConflictStrict,
		}
		created, a, err = s.InitAgent(ctx, strict)
		if err != nil || created || a.Description != "d1" {
			t.Fatalf("strict = %v %+v %v", created, a, err)
		}
		_, steps, _ = s.GetAgent(ctx, "support.bot")
		if got := stepNames(steps); !reflect.DeepEqual(got, []string{"llm/chat", "tool/search", "tool/lookup"}) {
			t.Fatalf("strict steps = %v", got)
		}
		strict.Steps = []guard.StepSchema{{Type: "llm", Name: "chat", InputSchema: schema("number")}, {Type: "tool", Name: "new"}}
		_, _, err = s.InitAgent(ctx, strict)
		wantErr(t, err, guard.ErrSchemaIncompatible)
		_, steps, _ = s.GetAgent(ctx, "support.bot")
		if len(steps) != 3 {
			t.Fatalf("a refused strict init changed the steps: %v", stepNames(steps))
		}

		// Overwrite replaces description, version, metadata and the step list.
		over := guard.AgentInit{Agent: guard.Agent{Name: "support.bot", Description: "d2", Version: "2"},
			Steps: []guard.StepSchema{{Type: "llm", Name: "chat", InputSchema: schema("number")}}, ConflictMode: guard.ConflictOverwrite}
		created, a, err = s.InitAgent(ctx, over)
		if err != nil || created || a.Description != "d2" || a.Version != "2" || len(a.Metadata) != 0 {
			t.Fatalf("overwrite = %v %+v %v", created, a, err)
		}
		_, steps, _ = s.GetAgent(ctx, "support.bot")
		if !reflect.DeepEqual(steps, over.Steps) {
			t.Fatalf("overwrite steps = %+v", steps)
		}

		// Bad input never reaches the database.
		_, _, err = s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "bad name"}})
		wantValidation(t, err, "agent.agent_name")
		_, _, err = s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "x"}, Steps: []guard.StepSchema{{Type: "llm", Name: "a"}, {Type: "llm", Name: "a"}}})
		wantValidation(t, err, "steps.1")
		_, _, err = s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "x"}, ConflictMode: "merge"})
		wantValidation(t, err, "conflict_mode")
		_, _, err = s.GetAgent(ctx, "x")
		wantErr(t, err, guard.ErrAgentNotFound)
	})
}

func TestPatchAgent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		_, _, err := s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "a1", Description: "d"},
			Steps: []guard.StepSchema{{Type: "llm", Name: "x"}, {Type: "tool", Name: "y"}}})
		if err != nil {
			t.Fatal(err)
		}
		desc := "new"
		a, steps, err := s.PatchAgent(ctx, "a1", guard.AgentPatch{Description: &desc, Metadata: map[string]any{"m": true},
			RemoveSteps: []guard.StepRef{{Type: "llm", Name: "x"}, {Type: "llm", Name: "missing"}}})
		if err != nil || a.Description != "new" || a.Metadata["m"] != true || !reflect.DeepEqual(stepNames(steps), []string{"tool/y"}) {
			t.Fatalf("patch = %+v %v %v", a, stepNames(steps), err)
		}
		a2, _, _ := s.GetAgent(ctx, "a1")
		if a2.Description != "new" || a2.Metadata["m"] != true || !a2.UpdatedAt.After(a2.CreatedAt) && a2.UpdatedAt != a2.CreatedAt {
			t.Fatalf("get after patch = %+v", a2)
		}
		_, _, err = s.PatchAgent(ctx, "nobody", guard.AgentPatch{})
		wantErr(t, err, guard.ErrAgentNotFound)
	})
}
