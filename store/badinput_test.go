package store_test

import (
	"errors"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestTextTheDatabaseCannotStore: NUL characters and invalid UTF-8 (which PostgreSQL refuses) give
// validation errors on the control plane and are replaced in events and filters, on both dialects alike;
// never a raw database error.
func TestTextTheDatabaseCannotStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		// In JSON documents Go's encoder already replaces invalid UTF-8; NUL is refused.
		d := testData("x")
		d.Description = "a\x00b"
		_, err := s.CreateControl(ctx, "c", d)
		wantValidation(t, err, "data")
		d = testData("x")
		d.Action.Metadata = map[string]any{"k": "\x00"}
		_, err = s.CreateControl(ctx, "c", d)
		wantValidation(t, err, "data")
		for _, bad := range []string{"a\x00b", "a\xffb"} {

			_, _, err := s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "a", Description: bad}})
			wantValidation(t, err, "agent.agent_description")
			_, _, err = s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "a"}, Steps: []guard.StepSchema{{Type: "llm", Name: bad}}})
			wantValidation(t, err, "steps.0")
			if bad == "a\x00b" { // JSON documents: only NUL is refused (see above)
				_, _, err = s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "a", Metadata: map[string]any{"k": bad}}})
				wantValidation(t, err, "agent.agent_metadata")
			}
		}
		newAgent(t, s, "a")
		bad := "a\x00b"
		_, _, err = s.PatchAgent(ctx, "a", guard.AgentPatch{Description: &bad})
		wantValidation(t, err, "agent_description")
		if _, _, err := s.PatchAgent(ctx, "a", guard.AgentPatch{RemoveSteps: []guard.StepRef{{Type: bad, Name: "\xff"}}}); err != nil {
			t.Fatalf("remove unknown odd step: %v", err)
		}

		e := ev("a\x00", 1, time.Now(), true, guard.DecisionDeny)
		e.Metadata, e.ErrorMessage = map[string]any{"k": "v\x00"}, "bad\xffbyte"
		if err := s.InsertEvents(ctx, []guard.Event{e}); err != nil {
			t.Fatalf("insert event with odd text: %v", err)
		}
		got, total, err := s.QueryEvents(ctx, guard.EventQuery{AgentName: "a\x00", TraceID: "\x00", StepTypes: []string{"\xff"}})
		if err != nil || total != 0 || len(got) != 0 {
			t.Fatalf("query with odd filters = %d, %v", total, err)
		}
		got, _, err = s.QueryEvents(ctx, guard.EventQuery{AgentName: "a\uFFFD"})
		if err != nil || len(got) != 1 || got[0].Metadata["k"] != "v\uFFFD" {
			t.Fatalf("stored event = %+v, %v", got, err)
		}
		if _, err := s.Stats(ctx, guard.StatsQuery{AgentName: "\x00", Since: time.Now().Add(-time.Hour), Until: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.ListControls(ctx, guard.ControlFilter{Name: "\x00", Tag: "\xff", StepType: "\x00", Stage: "\x00"}, guard.PageRequest{}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.ListAgents(ctx, guard.AgentFilter{Name: "\x00"}, guard.PageRequest{}); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"\x00", "\xff", ""} {
			_, _, err := s.GetAgent(ctx, name)
			if !errors.Is(err, guard.ErrAgentNotFound) {
				t.Fatalf("GetAgent(%q) = %v", name, err)
			}
		}
	})
}
