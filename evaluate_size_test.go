package guard_test

import (
	"context"
	"testing"

	"github.com/guardrail-control/guard"
)

// TestResultListsSizedByEvaluatedControls checks that a result holds a slot for every control it lists
// and no more: an evaluation that stops at its first control among 1000 allocates one slot, not 1000.
func TestResultListsSizedByEvaluatedControls(t *testing.T) {
	e := guard.New()
	if err := e.Update(benchControls(1000, false)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		input  string
		listed int
	}{
		{"first control matches", benchMatchFirst, 1},
		{"last but one matches", benchMatchFor(1000), benchMatchTarget(1000) + 1},
		{"nothing matches", benchNoMatch, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.Evaluate(context.Background(), &guard.Step{Type: "llm", Name: "chat", Input: tc.input}, guard.StagePre)
			if err != nil {
				t.Fatal(err)
			}
			n := len(res.Matches) + len(res.Errors) + len(res.NonMatches)
			c := cap(res.Matches) + cap(res.Errors) + cap(res.NonMatches)
			if n != tc.listed || c != n {
				t.Fatalf("%d controls listed in %d slots, want %d in as many", n, c, tc.listed)
			}
			// The lists are independent: appending to one never writes into another.
			res.Matches = append(res.Matches, guard.ControlResult{ControlName: "appended"})
			for _, cr := range res.NonMatches {
				if cr.ControlName == "appended" {
					t.Fatal("append to Matches wrote into NonMatches")
				}
			}
		})
	}
}

// TestCheckLiveIndexDoesNotAllocate: at 1000 controls Check goes through the live index, which allocates
// nothing either, and Evaluate allocates the result alone (its lists in one allocation, the ids in one,
// the Result).
func TestCheckLiveIndexDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	e := guard.New()
	if err := e.Update(benchControls(1000, false)); err != nil {
		t.Fatal(err)
	}
	step := &guard.Step{Type: "llm", Name: "chat", Input: benchNoMatch}
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		if err := e.Check(ctx, step, guard.StagePre); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Check allocated %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := e.Evaluate(ctx, step, guard.StagePre); err != nil {
			t.Fatal(err)
		}
	}); n > 3 {
		t.Errorf("Evaluate allocated %v times, want at most 3", n)
	}
}
