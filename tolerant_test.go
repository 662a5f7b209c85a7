package guard_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
)

// The tests of UpdateTolerant use the default registry (regex, list) and evaluator names it lacks.

func regexLeaf(pattern string) guard.Condition {
	return leaf("input", "regex", map[string]any{"pattern": pattern})
}

// missing is a leaf of an evaluator this process does not have, with the given on_error ("": unset).
func missing(onError string) guard.Condition {
	cfg := map[string]any{"threshold": 0.5}
	if onError != "" {
		cfg["on_error"] = onError
	}
	return leaf("input", "ext.gone", cfg)
}

const gone = `evaluator "ext.gone" is not available in this process`

// tolerant compiles controls with UpdateTolerant into a default engine and returns it with the fields of
// the reported problems.
func tolerant(t *testing.T, controls ...guard.Control) (*guard.Engine, []string) {
	t.Helper()
	e := guard.New()
	err := e.UpdateTolerant(controls)
	var fields []string
	if err != nil {
		var ve *guard.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("UpdateTolerant = %T %v, want nil or *ValidationError", err, err)
		}
		for _, p := range ve.Problems {
			fields = append(fields, p.Field+" "+p.Code)
		}
	}
	return e, fields
}

// strictRejects asserts that Update refuses controls and keeps the engine's empty snapshot.
func strictRejects(t *testing.T, controls ...guard.Control) {
	t.Helper()
	e := guard.New()
	var ve *guard.ValidationError
	if err := e.Update(controls); !errors.As(err, &ve) {
		t.Fatalf("Update = %v, want *ValidationError", err)
	}
	for _, st := range []*guard.Step{llm("secret"), {Type: "tool", Name: "x"}} {
		if res := evaluate(t, e, st); res.Decision != guard.DecisionAllow || len(res.Errors)+len(res.Matches) != 0 {
			t.Fatalf("a refused Update changed the snapshot: %+v", res)
		}
	}
}

func TestUpdateTolerantMissingEvaluatorNextToRegex(t *testing.T) {
	c := ctl(1, guard.DecisionDeny, or(regexLeaf("secret"), missing("")))
	e, problems := tolerant(t, c)
	if want := []string{"controls.0.condition.or.1.evaluator.name unknown_evaluator"}; !reflect.DeepEqual(problems, want) {
		t.Fatalf("problems %v, want %v", problems, want)
	}
	// The regex matches first: the or short-circuits before the missing evaluator, no error.
	res := evaluate(t, e, llm("a secret"))
	if res.Decision != guard.DecisionDeny || len(res.Matches) != 1 || len(res.Errors) != 0 {
		t.Fatalf("regex match: %+v", res)
	}
	// No match: the missing evaluator is reached, its error ends the tree, on_error deny blocks.
	res = evaluate(t, e, llm("harmless"))
	if res.Decision != guard.DecisionDeny || len(res.Errors) != 1 || res.Errors[0].Result.Error != gone || !res.Errors[0].Result.Matched {
		t.Fatalf("no regex match: %+v", res)
	}
	strictRejects(t, c)
}

func TestUpdateTolerantMissingEvaluatorFollowsOnError(t *testing.T) {
	tests := []struct {
		onError  string
		wantDeny bool
	}{
		{"", true},
		{"deny", true},
		{"allow", false},
		{"sometimes", true}, // not a valid on_error: deny
	}
	for _, tt := range tests {
		t.Run("on_error="+tt.onError, func(t *testing.T) {
			broken := ctl(1, guard.DecisionDeny, missing(tt.onError))
			fine := ctl(2, guard.DecisionDeny, regexLeaf("attack"))
			e, problems := tolerant(t, broken, fine)
			if want := []string{"controls.0.condition.evaluator.name unknown_evaluator"}; !reflect.DeepEqual(problems, want) {
				t.Fatalf("problems %v, want %v", problems, want)
			}
			res := evaluate(t, e, llm("hello"))
			if len(res.Errors) != 1 || res.Errors[0].ControlName != "c1" || res.Errors[0].Result.Error != gone {
				t.Fatalf("errors %+v, want c1 with %q", res.Errors, gone)
			}
			if got := res.Decision == guard.DecisionDeny; got != tt.wantDeny || res.Errors[0].Result.Matched != tt.wantDeny {
				t.Fatalf("decision %s (error matched %v), want deny %v", res.Decision, res.Errors[0].Result.Matched, tt.wantDeny)
			}
			if tt.wantDeny && !strings.Contains(res.Reason, `"c1"`) {
				t.Fatalf("reason %q does not name the control", res.Reason)
			}
			// The other control stays real.
			if res := evaluate(t, e, llm("an attack")); len(res.Matches) != 1 || res.Matches[0].ControlName != "c2" {
				t.Fatalf("the valid control: %+v", res)
			}
			strictRejects(t, broken, fine)
		})
	}
}

func TestUpdateTolerantStaleConfig(t *testing.T) {
	staleLeaf := leaf("input", "regex", map[string]any{"pattern": "(unclosed-secret", "on_error": "allow"})
	c := ctl(1, guard.DecisionDeny, and(regexLeaf("x"), staleLeaf))
	e, problems := tolerant(t, c)
	if want := []string{"controls.0.condition.and.1.evaluator.config.pattern invalid_regex"}; !reflect.DeepEqual(problems, want) {
		t.Fatalf("problems %v, want %v", problems, want)
	}
	if res := evaluate(t, e, llm("y")); len(res.NonMatches) != 1 || len(res.Errors) != 0 {
		t.Fatalf("the and short-circuits on the first leaf: %+v", res)
	}
	res := evaluate(t, e, llm("x"))
	const want = `evaluator "regex" config is no longer valid: pattern (invalid_regex)`
	if res.Decision != guard.DecisionAllow || len(res.Errors) != 1 || res.Errors[0].Result.Error != want || res.Errors[0].Result.Matched {
		t.Fatalf("stale config with on_error allow: %+v, want the error %q failing open", res, want)
	}
	strictRejects(t, c)
}

func TestUpdateTolerantBrokenControlFailsClosed(t *testing.T) {
	scoped := func(c guard.Control) guard.Control {
		c.Data.Scope = guard.Scope{StepTypes: []string{"llm"}, StepNames: []string{"only-this"}, Stages: []guard.Stage{guard.StagePost}}
		return c
	}
	badRegex := scoped(ctl(1, guard.DecisionLog, regexLeaf("x")))
	badRegex.Data.Scope.StepNameRegex = "("
	badStage := scoped(ctl(1, guard.DecisionLog, regexLeaf("x")))
	badStage.Data.Scope.Stages = []guard.Stage{"during"}
	badDecision := scoped(ctl(1, guard.Decision("explode"), regexLeaf("x")))
	steerWithout := scoped(ctl(1, guard.DecisionSteer, regexLeaf("x")))
	steerWithout.Data.Action.SteeringContext = nil
	badShape := scoped(ctl(1, guard.DecisionLog, guard.Condition{Or: []guard.Condition{}}))
	tests := []struct {
		name  string
		c     guard.Control
		field string
	}{
		{"step_name_regex", badRegex, "controls.0.scope.step_name_regex invalid_regex"},
		{"stage", badStage, "controls.0.scope.stages.0 enum"},
		{"decision", badDecision, "controls.0.action.decision enum"},
		{"steer without context", steerWithout, "controls.0.action.steering_context required"},
		{"condition shape", badShape, "controls.0.condition shape"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fine := ctl(2, guard.DecisionLog, regexLeaf("x"))
			e, problems := tolerant(t, tt.c, fine)
			if !slices.Contains(problems, tt.field) {
				t.Fatalf("problems %v lack %q", problems, tt.field)
			}
			for _, p := range problems {
				if !strings.HasPrefix(p, "controls.0.") {
					t.Fatalf("problem %q is not about the broken control", p)
				}
			}
			// Every step type and name, both stages: denied by the broken control, which is listed as an error.
			for _, st := range []*guard.Step{llm("x"), {Type: "tool", Name: "other", Input: "x"}} {
				for _, stage := range []guard.Stage{guard.StagePre, guard.StagePost} {
					res, err := e.Evaluate(bg, st, stage)
					if err != nil {
						t.Fatal(err)
					}
					assertCheckAgrees(t, e, st, stage, res)
					if res.Decision != guard.DecisionDeny || res.IsSafe || !strings.Contains(res.Reason, `"c1"`) {
						t.Fatalf("%s %s: %+v, want deny naming c1", st.Type, stage, res)
					}
					if len(res.Errors) != 1 || res.Errors[0].ControlName != "c1" || res.Errors[0].Action != guard.DecisionDeny ||
						!strings.Contains(res.Errors[0].Result.Error, `control "c1"`) {
						t.Fatalf("%s %s: errors %+v", st.Type, stage, res.Errors)
					}
					if len(res.Matches) != 1 || res.Matches[0].ControlName != "c2" {
						t.Fatalf("%s %s: the valid control did not run: %+v", st.Type, stage, res)
					}
				}
			}
			strictRejects(t, tt.c, fine)
		})
	}
}

// TestUpdateTolerantDropsWhatItDoesNotRun: disabled controls and controls of another execution are
// dropped unvalidated and unreported, as nothing evaluates them.
func TestUpdateTolerantDropsWhatItDoesNotRun(t *testing.T) {
	disabled := ctl(1, guard.DecisionDeny, missing(""))
	disabled.Data.Enabled = false
	disabled.Data.Scope.StepNameRegex = "("
	sdk := ctl(2, guard.DecisionDeny, missing(""))
	sdk.Data.Execution = guard.ExecutionSDK
	sdk.Data.Action.Decision = "explode"
	e, problems := tolerant(t, disabled, sdk, ctl(3, guard.DecisionDeny, regexLeaf("x")))
	if problems != nil {
		t.Fatalf("problems %v for controls the engine does not run", problems)
	}
	if res := evaluate(t, e, llm("y")); res.Decision != guard.DecisionAllow || len(res.NonMatches) != 1 {
		t.Fatalf("%+v", res)
	}
	if err := guard.New().UpdateTolerant(nil); err != nil {
		t.Fatalf("no controls: %v", err)
	}
}

func TestUpdateTolerantErrorsNeverEchoValues(t *testing.T) {
	c := ctl(1, guard.DecisionDeny, leaf("input", "regex", map[string]any{"pattern": "(hunter2", "flags": []any{"hunter3"}}))
	e := guard.New()
	err := e.UpdateTolerant([]guard.Control{c})
	res := evaluate(t, e, llm("x"))
	for _, s := range []string{err.Error(), res.Errors[0].Result.Error, res.Reason} {
		if strings.Contains(s, "hunter") {
			t.Fatalf("%q echoes a config value", s)
		}
	}
}

func TestProblemsByControl(t *testing.T) {
	err := guard.New().UpdateTolerant([]guard.Control{
		ctl(1, guard.DecisionDeny, regexLeaf("fine")),
		ctl(2, guard.DecisionDeny, and(missing(""), missing("allow"))),
		ctl(3, guard.DecisionDeny, regexLeaf("fine")),
		ctl(4, guard.Decision("explode"), regexLeaf("fine")),
	})
	got := guard.ProblemsByControl(err)
	if len(got) != 2 || got[0].Index != 1 || len(got[0].Problems) != 2 || got[1].Index != 3 || len(got[1].Problems) != 1 {
		t.Fatalf("ProblemsByControl = %+v", got)
	}
	if guard.ProblemsByControl(nil) != nil || guard.ProblemsByControl(errors.New("x")) != nil {
		t.Fatal("ProblemsByControl of a nil or foreign error is not nil")
	}
	odd := &guard.ValidationError{Problems: []guard.Problem{{Field: "controls.x.name"}, {Field: "data"}, {Field: "controls.7"}}}
	if got := guard.ProblemsByControl(odd); len(got) != 1 || got[0].Index != 7 {
		t.Fatalf("ProblemsByControl(%v) = %+v", odd, got)
	}
}
