package guard_test

import (
	"fmt"
	"testing"

	"github.com/guardrail-control/guard"
)

func scoped(id int64, scope guard.Scope) guard.Control {
	c := ctl(id, guard.DecisionLog, has("x"))
	c.Data.Scope = scope
	return c
}

func TestScopeIndex(t *testing.T) {
	controls := []guard.Control{
		scoped(1, guard.Scope{}),
		scoped(2, guard.Scope{Stages: []guard.Stage{guard.StagePre}}),
		scoped(3, guard.Scope{Stages: []guard.Stage{guard.StagePost}, StepTypes: []string{"tool"}}),
		scoped(4, guard.Scope{StepTypes: []string{"llm", "tool"}}),
		scoped(5, guard.Scope{StepNames: []string{"search", "lookup"}}),
		scoped(6, guard.Scope{StepNameRegex: "^db_"}),
		scoped(7, guard.Scope{StepNames: []string{"db_read"}, StepNameRegex: "read$"}),
		scoped(8, guard.Scope{StepTypes: []string{"tool"}, StepNames: []string{"search"}, Stages: []guard.Stage{guard.StagePre}}),
		scoped(9, guard.Scope{StepTypes: []string{"custom"}, StepNameRegex: "x"}),
	}
	e := newEngine(t, controls...)
	tests := []struct {
		typ, name string
		stage     guard.Stage
		want      []int64
	}{
		{"llm", "chat", guard.StagePre, []int64{1, 2, 4}},
		{"llm", "chat", guard.StagePost, []int64{1, 4}},
		{"tool", "search", guard.StagePre, []int64{1, 2, 4, 5, 8}},
		{"tool", "search", guard.StagePost, []int64{1, 3, 4, 5}},
		{"tool", "db_write", guard.StagePre, []int64{1, 2, 4, 6}},
		{"tool", "db_read", guard.StagePre, []int64{1, 2, 4, 6, 7}}, // 7 by name and by regex: once
		{"tool", "file_read", guard.StagePost, []int64{1, 3, 4, 7}},
		{"custom", "xyz", guard.StagePre, []int64{1, 2, 9}},
		{"custom", "abc", guard.StagePre, []int64{1, 2}},
		{"other", "lookup", guard.StagePost, []int64{1, 5}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/%s", tt.typ, tt.name, tt.stage), func(t *testing.T) {
			step := &guard.Step{Type: tt.typ, Name: tt.name, Input: "x"}
			res, err := e.Evaluate(bg, step, tt.stage)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, m := range res.Matches {
				got = append(got, m.ControlID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("evaluated %v, want %v", got, tt.want)
			}
			if e.Applies(step, tt.stage) != (len(tt.want) > 0) {
				t.Errorf("Applies = %v", !(len(tt.want) > 0))
			}
		})
	}
	only := newEngine(t, scoped(1, guard.Scope{StepNames: []string{"a"}}), scoped(2, guard.Scope{StepNameRegex: "^b"}))
	for name, want := range map[string]bool{"a": true, "bb": true, "c": false} {
		if got := only.Applies(&guard.Step{Type: "llm", Name: name}, guard.StagePre); got != want {
			t.Errorf("Applies(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestNoApplicableControlAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	e := newEngine(t, scoped(1, guard.Scope{StepTypes: []string{"tool"}}))
	step := llm("x")
	if n := testing.AllocsPerRun(100, func() {
		if err := e.Check(bg, step, guard.StagePre); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Check allocated %v times", n)
	}
}

// TestCheckNoMatchAllocatesNothing: ten controls that run and do not match cost no allocation in Check.
func TestCheckNoMatchAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	var controls []guard.Control
	for i := int64(1); i <= 10; i++ {
		c := has(fmt.Sprintf("needle-%d", i))
		if i%2 == 0 {
			c = leaf("input", "contains", map[string]any{"needle": fmt.Sprintf("n%d", i), "nofilter": true})
		}
		controls = append(controls, ctl(i, guard.DecisionDeny, c))
	}
	e := newEngine(t, controls...)
	step := llm("a 200 character text would go here, with an order number A-1234-99 and no needle")
	if n := testing.AllocsPerRun(200, func() {
		if err := e.Check(bg, step, guard.StagePre); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Check allocated %v times", n)
	}
}
