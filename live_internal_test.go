package guard

import (
	"context"
	"slices"
	"testing"
)

func liveTestControl(id int64, d Decision, c Condition) Control {
	return Control{ID: id, Name: "c" + string(rune('0'+id)), Data: ControlData{Enabled: true, Condition: c, Action: Action{Decision: d}}}
}

func liveLeaf(path, ev string, cfg map[string]any) Condition {
	return Condition{Selector: &Selector{Path: path}, Evaluator: &EvaluatorSpec{Name: ev, Config: cfg}}
}

// TestLiveIndexMarks checks which controls the live index marks for a few texts, and that controls sharing
// a literal and a run requirement share one group (one test for all of them).
func TestLiveIndexMarks(t *testing.T) {
	list := func(v ...any) Condition {
		return liveLeaf("input", "list", map[string]any{"values": v, "match_mode": "contains"})
	}
	rx := func(p string) Condition { return liveLeaf("input", "regex", map[string]any{"pattern": p}) }
	controls := []Control{
		liveTestControl(1, DecisionDeny, list("falcon")),
		liveTestControl(2, DecisionDeny, list("falcon", "orion")),
		liveTestControl(3, DecisionDeny, rx(`\d{3}-\d{2}-\d{4}`)),                                // literal "-" and a run of [0-9-]
		liveTestControl(4, DecisionDeny, Condition{Not: &Condition{}}),                           // replaced below: no gates
		liveTestControl(5, DecisionDeny, Condition{And: []Condition{list("nebula"), rx(`\d+`)}}), // the first operand gates
		liveTestControl(6, DecisionSteer, Condition{Or: []Condition{list("titan"), rx(`[0-9]{5}`)}}),
	}
	controls[5].Data.Action.SteeringContext = &SteeringContext{Message: "m"}
	nl := list("vega")
	controls[3].Data.Condition = Condition{Not: &nl}
	s, err := compile(controls, &engineConfig{registry: New().cfg.registry, executions: map[Execution]bool{ExecutionServer: true}}, false)
	if err != nil {
		t.Fatal(err)
	}
	shared := 0
	for _, g := range s.live.groups {
		if g.ctlTo-g.ctlFrom == 2 {
			shared++
		}
	}
	if shared != 1 {
		t.Fatalf("%d groups of two controls, want 1 (falcon, shared by controls 1 and 2)", shared)
	}
	for _, tc := range []struct {
		text string
		want []int64
	}{
		{"nothing here", []int64{4}},
		{"a falcon", []int64{1, 2, 4}},
		{"ORION", []int64{2, 4}},
		{"ssn 123-45-6789", []int64{3, 4}},
		{"ssn 12-45", []int64{4}}, // "-" occurs, the run is too short
		{"nebula", []int64{4, 5}},
		{"titan 12345", []int64{4, 6}},
		{"code 12345", []int64{4, 6}},
	} {
		sc := s.getScratch()
		r := run{ctx: context.Background(), snap: s, step: &Step{Type: "llm", Name: "x", Input: tc.text}, sc: sc}
		r.markLive()
		var got []int64
		for ci := range s.controls {
			if sc.isLive(int32(ci)) {
				got = append(got, s.controls[ci].id)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: live %v, want %v", tc.text, got, tc.want)
		}
		clear(sc.live)
		s.putScratch(sc)
	}
}
