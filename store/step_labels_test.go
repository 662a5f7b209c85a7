package store_test

import (
	"errors"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestStepLabels: step labels are stored and read back, AgentStepLabels gives them by step name, and the
// agent's revision moves exactly when its step labels change.
func TestStepLabels(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		register := func(mode guard.ConflictMode, steps ...guard.StepSchema) {
			t.Helper()
			if _, _, err := s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "bot"}, Steps: steps, ConflictMode: mode}); err != nil {
				t.Fatal(err)
			}
		}
		rev := func() guard.Revision {
			t.Helper()
			r, err := s.AgentRevision(ctx, "bot")
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		labelsOf := func() string {
			t.Helper()
			m, err := s.AgentStepLabels(ctx, "bot")
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, n := range []string{"fetch", "read", "post"} {
				parts = append(parts, n+"="+strings.Join(m[n], "+"))
			}
			return strings.Join(parts, " ")
		}
		fetch := guard.StepSchema{Type: "tool", Name: "fetch", Labels: []string{"untrusted"}}
		read := guard.StepSchema{Type: "tool", Name: "read"}
		register(guard.ConflictOverwrite, fetch, read)
		_, steps, err := s.GetAgent(ctx, "bot")
		if err != nil || len(steps) != 2 || strings.Join(steps[0].Labels, ",") != "untrusted" || steps[1].Labels != nil {
			t.Fatalf("GetAgent: %+v %v", steps, err)
		}
		if got := labelsOf(); got != "fetch=untrusted read= post=" {
			t.Fatal(got)
		}
		r0 := rev()

		register(guard.ConflictOverwrite, fetch, read) // the same labels: the revision stays
		if rev() != r0 {
			t.Fatal("the revision moved without a change of labels")
		}
		read.Labels = []string{"sensitive", "private"}
		register(guard.ConflictOverwrite, fetch, read)
		r1 := rev()
		if r1 == r0 || labelsOf() != "fetch=untrusted read=sensitive+private post=" {
			t.Fatalf("overwrite with new labels: rev %d -> %d, %s", r0, r1, labelsOf())
		}
		// Strict keeps a stored step as it is (labels included), and adds a new labelled one.
		register(guard.ConflictStrict, guard.StepSchema{Type: "tool", Name: "fetch", Labels: []string{"other"}})
		if rev() != r1 || labelsOf() != "fetch=untrusted read=sensitive+private post=" {
			t.Fatalf("strict on a stored step: %s", labelsOf())
		}
		register(guard.ConflictStrict, guard.StepSchema{Type: "tool", Name: "post", Labels: []string{"egress"}})
		r2 := rev()
		if r2 == r1 || labelsOf() != "fetch=untrusted read=sensitive+private post=egress" {
			t.Fatalf("strict adding a labelled step: %s", labelsOf())
		}
		// remove_steps: of a labelled step moves the revision, of another does not.
		register(guard.ConflictStrict, guard.StepSchema{Type: "llm", Name: "chat"})
		r3 := rev()
		if _, _, err := s.PatchAgent(ctx, "bot", guard.AgentPatch{RemoveSteps: []guard.StepRef{{Type: "llm", Name: "chat"}}}); err != nil {
			t.Fatal(err)
		}
		if rev() != r3 {
			t.Fatal("removing a step without labels moved the revision")
		}
		if _, _, err := s.PatchAgent(ctx, "bot", guard.AgentPatch{RemoveSteps: []guard.StepRef{{Type: "tool", Name: "post"}}}); err != nil {
			t.Fatal(err)
		}
		if rev() == r3 || labelsOf() != "fetch=untrusted read=sensitive+private post=" {
			t.Fatalf("removing a labelled step: %s", labelsOf())
		}

		if _, err := s.AgentStepLabels(ctx, "nobody"); !errors.Is(err, guard.ErrAgentNotFound) {
			t.Fatalf("unknown agent: %v", err)
		}
		_, _, err = s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "bad"}, Steps: []guard.StepSchema{{Type: "tool", Name: "x", Labels: []string{"ok", "not ok"}}}})
		var ve *guard.ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Field != "steps.0.labels.1" {
			t.Fatalf("bad label: %v", err)
		}
	})
}
