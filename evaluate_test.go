package guard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/guardrail-control/guard"
)

var bg = context.Background()

func llm(input any) *guard.Step { return &guard.Step{Type: "llm", Name: "chat", Input: input} }

func evaluate(t *testing.T, e *guard.Engine, step *guard.Step) *guard.Result {
	t.Helper()
	res, err := e.Evaluate(bg, step, guard.StagePre)
	if err != nil {
		t.Fatal(err)
	}
	if res.Matches == nil || res.Errors == nil || res.NonMatches == nil {
		t.Fatalf("nil list in %+v", res)
	}
	if res.IsSafe != (res.Decision == guard.DecisionAllow) {
		t.Fatalf("is_safe %v with decision %s", res.IsSafe, res.Decision)
	}
	assertCheckAgrees(t, e, step, guard.StagePre, res)
	return res
}

func TestConditionTree(t *testing.T) {
	tests := []struct {
		name      string
		cond      guard.Condition
		matched   bool
		errored   bool
		conf      float64
		wantCalls map[string]int64
	}{
		{"leaf match", constLeaf(true, 0.8, "a"), true, false, 0.8, map[string]int64{"a": 1}},
		{"and all match: min confidence", and(constLeaf(true, 0.9, "a"), constLeaf(true, 0.6, "b")), true, false, 0.6, map[string]int64{"a": 1, "b": 1}},
		{"and short-circuits on first false", and(constLeaf(false, 0.7, "a"), constLeaf(true, 0.1, "b")), false, false, 0.7, map[string]int64{"a": 1, "b": 0}},
		{"or short-circuits on first true", or(constLeaf(true, 0.9, "a"), constLeaf(true, 0.1, "b")), true, false, 0.9, map[string]int64{"a": 1, "b": 0}},
		{"or none match: min over all", or(constLeaf(false, 0.9, "a"), constLeaf(false, 0.4, "b")), false, false, 0.4, map[string]int64{"a": 1, "b": 1}},
		{"not inverts", not(constLeaf(false, 0.5, "a")), true, false, 0.5, map[string]int64{"a": 1}},
		{"nested", or(and(constLeaf(true, 1, "a"), not(constLeaf(true, 0.3, "b"))), constLeaf(true, 0.2, "c")), true, false, 0.2, map[string]int64{"a": 1, "b": 1, "c": 1}},
		{"error ends the tree", and(leaf("input", "fail", map[string]any{"key": "a"}), constLeaf(true, 1, "b")), false, true, 0, map[string]int64{"a": 1, "b": 0}},
		{"short-circuit skips an error", or(constLeaf(true, 1, "a"), leaf("input", "fail", map[string]any{"key": "b"})), true, false, 1, map[string]int64{"a": 1, "b": 0}},
		{"not of an error is an error", not(leaf("input", "fail", map[string]any{"on_error": "allow"})), false, true, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resetCalls()
			e := newEngine(t, ctl(1, guard.DecisionLog, tt.cond))
			resetCalls()
			res, err := e.Evaluate(bg, llm("x"), guard.StagePre)
			if err != nil {
				t.Fatal(err)
			}
			var cr guard.ControlResult
			switch {
			case tt.errored:
				if len(res.Errors) != 1 {
					t.Fatalf("errors = %v", names(res.Errors))
				}
				cr = res.Errors[0]
				if cr.Result.Error == "" {
					t.Fatal("errored control without error text")
				}
			case tt.matched:
				if len(res.Matches) != 1 {
					t.Fatalf("matches = %v", names(res.Matches))
				}
				cr = res.Matches[0]
			default:
				if len(res.NonMatches) != 1 {
					t.Fatalf("non_matches = %v", names(res.NonMatches))
				}
				cr = res.NonMatches[0]
			}
			if cr.Result.Confidence != tt.conf {
				t.Errorf("confidence = %v, want %v", cr.Result.Confidence, tt.conf)
			}
			for k, want := range tt.wantCalls {
				if got := calls(k); got != want {
					t.Errorf("leaf %s ran %d times, want %d", k, got, want)
				}
			}
		})
	}
}

func TestOnError(t *testing.T) {
	failing := func(onError string) guard.Condition {
		cfg := map[string]any{}
		if onError != "" {
			cfg["on_error"] = onError
		}
		return leaf("input", "fail", cfg)
	}
	tests := []struct {
		name         string
		decision     guard.Decision
		onError      string
		wantDecision guard.Decision
		wantMatched  bool
	}{
		{"deny control, default on_error fails closed", guard.DecisionDeny, "", guard.DecisionDeny, true},
		{"deny control, on_error deny", guard.DecisionDeny, "deny", guard.DecisionDeny, true},
		{"deny control, on_error allow fails open", guard.DecisionDeny, "allow", guard.DecisionAllow, false},
		{"steer control, on_error deny steers", guard.DecisionSteer, "deny", guard.DecisionSteer, true},
		{"log control, on_error deny does not block", guard.DecisionLog, "deny", guard.DecisionAllow, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, ctl(1, tt.decision, failing(tt.onError)))
			res := evaluate(t, e, llm("x"))
			if res.Decision != tt.wantDecision {
				t.Errorf("decision = %s, want %s", res.Decision, tt.wantDecision)
			}
			if len(res.Errors) != 1 || len(res.Matches) != 0 || len(res.NonMatches) != 0 {
				t.Fatalf("lists: matches %v errors %v non_matches %v; an errored control is listed in errors only",
					names(res.Matches), names(res.Errors), names(res.NonMatches))
			}
			er := res.Errors[0].Result
			if er.Matched != tt.wantMatched || !strings.Contains(er.Error, "boom") || er.Confidence != 0 {
				t.Errorf("error result = %+v", er)
			}
			if tt.wantDecision != guard.DecisionAllow && !strings.Contains(res.Reason, "could not be evaluated") {
				t.Errorf("reason = %q", res.Reason)
			}
		})
	}
}

func TestGenuineMatchWinsOverFailClosedError(t *testing.T) {
	e := newEngine(t,
		ctl(1, guard.DecisionDeny, leaf("input", "fail", nil)),
		ctl(2, guard.DecisionDeny, leaf("input", "contains", map[string]any{"needle": "x", "message": "found x"})),
	)
	res := evaluate(t, e, llm("x"))
	var v *guard.ControlViolationError
	if !errors.As(res.Err(), &v) || v.ControlID != 2 || v.Message != "found x" {
		t.Fatalf("Err() = %#v, want the genuine match of control 2", res.Err())
	}
}

func TestDecisionPrecedence(t *testing.T) {
	tests := []struct {
		name       string
		controls   []guard.Control
		decision   guard.Decision
		winner     int64
		confidence float64
	}{
		{"nothing applies", nil, guard.DecisionAllow, 0, 1},
		{"non-match allows with its confidence", []guard.Control{ctl(1, guard.DecisionDeny, constLeaf(false, 0.7, ""))}, guard.DecisionAllow, 0, 0.7},
		{"deny beats steer and allow", []guard.Control{
			ctl(1, guard.DecisionSteer, constLeaf(true, 1, "")),
			ctl(2, guard.DecisionAllow, constLeaf(true, 1, "")),
			ctl(3, guard.DecisionDeny, constLeaf(true, 0.9, "")),
		}, guard.DecisionDeny, 3, 0.9},
		{"first steer in id order", []guard.Control{
			ctl(7, guard.DecisionSteer, constLeaf(true, 1, "")),
			ctl(4, guard.DecisionSteer, constLeaf(true, 0.5, "")),
			ctl(9, guard.DecisionWarn, constLeaf(true, 1, "")),
		}, guard.DecisionSteer, 4, 0.5},
		{"warn and log never block", []guard.Control{
			ctl(1, guard.DecisionWarn, constLeaf(true, 1, "")),
			ctl(2, guard.DecisionLog, constLeaf(true, 0.6, "")),
		}, guard.DecisionAllow, 0, 0.6},
		{"observe is log", []guard.Control{ctl(1, guard.DecisionObserve, constLeaf(true, 1, ""))}, guard.DecisionAllow, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, tt.controls...)
			res := evaluate(t, e, llm("x"))
			if res.Decision != tt.decision || res.Confidence != tt.confidence {
				t.Fatalf("decision %s confidence %v, want %s %v", res.Decision, res.Confidence, tt.decision, tt.confidence)
			}
			err := e.Check(bg, llm("x"), guard.StagePre)
			switch tt.decision {
			case guard.DecisionDeny:
				var v *guard.ControlViolationError
				if !errors.As(err, &v) || v.ControlID != tt.winner {
					t.Fatalf("Check = %v, want a violation by %d", err, tt.winner)
				}
			case guard.DecisionSteer:
				var s *guard.ControlSteerError
				if !errors.As(err, &s) || s.ControlID != tt.winner || s.SteeringContext.Message == "" {
					t.Fatalf("Check = %v, want a steer by %d", err, tt.winner)
				}
				if res.SteeringContext == nil || res.SteeringContext.Message != s.SteeringContext.Message {
					t.Fatalf("steering context %+v", res.SteeringContext)
				}
			default:
				if err != nil {
					t.Fatalf("Check = %v", err)
				}
				for _, cr := range res.Matches {
					for _, c := range tt.controls {
						if c.ID == cr.ControlID && cr.Action != c.Data.Action.Decision {
							t.Errorf("control %d reported as %s, want its decision as written (%s): observe behaves as log but reads observe", cr.ControlID, cr.Action, c.Data.Action.Decision)
						}
					}
				}
			}
		})
	}
}

func TestDenyShortCircuits(t *testing.T) {
	e := newEngine(t,
		ctl(1, guard.DecisionLog, constLeaf(true, 1, "log")),
		ctl(2, guard.DecisionDeny, constLeaf(true, 1, "deny")),
		ctl(3, guard.DecisionDeny, constLeaf(true, 1, "deny2")),
	)
	resetCalls()
	res := evaluate(t, e, llm("x"))
	if res.Decision != guard.DecisionDeny || len(res.Matches) != 1 || res.Matches[0].ControlID != 2 {
		t.Fatalf("matches %v", names(res.Matches))
	}
	if calls("log") != 0 || calls("deny2") != 0 { // deny controls run first; Check stops there too
		t.Errorf("controls after the deny ran: log %d deny2 %d", calls("log"), calls("deny2"))
	}
}

func TestResultFields(t *testing.T) {
	e := newEngine(t, guard.Control{ID: 5, Name: "meta", Data: guard.ControlData{
		Enabled:   true,
		Condition: guard.Condition{Selector: &guard.Selector{Path: "input.q"}, Evaluator: &guard.EvaluatorSpec{Name: "contains", Config: map[string]any{"needle": "x"}, Metadata: map[string]any{"k": "v"}}},
		Action:    guard.Action{Decision: guard.DecisionDeny, Metadata: map[string]any{"reason": "no x", "severity": "high"}},
	}}, ctl(6, guard.DecisionLog, has("zzz")))
	res := evaluate(t, e, llm(map[string]any{"q": "x"}))
	if len(res.Matches) != 1 {
		t.Fatalf("matches %v", names(res.Matches))
	}
	m := res.Matches[0]
	if _, err := uuid.Parse(m.ControlExecutionID); err != nil {
		t.Errorf("control_execution_id %q: %v", m.ControlExecutionID, err)
	}
	if m.EvaluatorName != "contains" || m.SelectorPath != "input.q" || m.Duration <= 0 {
		t.Errorf("observability fields: %q %q %v", m.EvaluatorName, m.SelectorPath, m.Duration)
	}
	if m.Metadata["severity"] != "high" || m.Result.Metadata["k"] != "v" {
		t.Errorf("metadata: action %v result %v", m.Metadata, m.Result.Metadata)
	}
	if res.Reason != "no x" {
		t.Errorf("reason = %q, want the action's metadata reason", res.Reason)
	}
	res2 := evaluate(t, e, llm(map[string]any{"q": "x"}))
	if res2.Matches[0].ControlExecutionID == m.ControlExecutionID {
		t.Error("execution ids repeat")
	}
}

func TestBadArguments(t *testing.T) {
	e := newEngine(t, ctl(1, guard.DecisionDeny, has("x")))
	if _, err := e.Evaluate(bg, nil, guard.StagePre); !errors.Is(err, guard.ErrNilStep) {
		t.Errorf("nil step: %v", err)
	}
	if _, err := e.Evaluate(bg, llm("x"), "during"); !errors.Is(err, guard.ErrInvalidStage) {
		t.Errorf("bad stage: %v", err)
	}
	if err := e.Check(bg, llm("x"), ""); !errors.Is(err, guard.ErrInvalidStage) {
		t.Errorf("Check bad stage: %v", err)
	}
	if e.Applies(nil, guard.StagePre) || e.Applies(llm("x"), "x") {
		t.Error("Applies with bad arguments")
	}
	var r *guard.Result
	if r.Err() != nil {
		t.Error("nil Result has an error")
	}
}

func TestUpdate(t *testing.T) {
	e := newEngine(t, ctl(1, guard.DecisionDeny, has("x")))
	bad := ctl(2, guard.DecisionDeny, leaf("input", "nope", nil))
	err := e.Update([]guard.Control{ctl(1, guard.DecisionDeny, has("y")), bad})
	var ve *guard.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Update = %v, want *ValidationError", err)
	}
	found := false
	for _, p := range ve.Problems {
		if strings.HasPrefix(p.Field, "controls.1.condition") {
			found = true
		}
	}
	if !found {
		t.Errorf("problems %+v lack controls.1.condition...", ve.Problems)
	}
	// The old snapshot is kept: x still denied, y not.
	if res := evaluate(t, e, llm("x")); res.Decision != guard.DecisionDeny {
		t.Error("a failed update replaced the snapshot")
	}
	if res := evaluate(t, e, llm("y")); res.Decision != guard.DecisionAllow {
		t.Error("a failed update was partly applied")
	}

	disabled := ctl(3, guard.DecisionDeny, has("x"))
	disabled.Data.Enabled = false
	sdk := ctl(4, guard.DecisionDeny, has("x"))
	sdk.Data.Execution = guard.ExecutionSDK
	sdkUnknown := ctl(5, guard.DecisionDeny, leaf("input", "only-the-client-has-it", nil))
	sdkUnknown.Data.Execution = guard.ExecutionSDK
	if err := e.Update([]guard.Control{disabled, sdk, sdkUnknown}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if res := evaluate(t, e, llm("x")); res.Decision != guard.DecisionAllow || len(res.NonMatches) != 0 {
		t.Errorf("disabled or sdk controls evaluated: %+v", res)
	}
	sdkEngine := guard.New(guard.WithRegistry(fakeRegistry()), guard.WithExecution(guard.ExecutionSDK))
	if err := sdkEngine.Update([]guard.Control{sdk}); err != nil {
		t.Fatal(err)
	}
	if res := evaluate(t, sdkEngine, llm("x")); res.Decision != guard.DecisionDeny {
		t.Errorf("sdk engine did not evaluate the sdk control")
	}
}

func TestDeeplyNestedInputIsAnEvaluatorError(t *testing.T) {
	var v any = "deep"
	for i := 0; i < 100_000; i++ {
		v = []any{v}
	}
	e := newEngine(t,
		ctl(1, guard.DecisionDeny, leaf("input", "contains", map[string]any{"needle": "deep", "on_error": "allow"})),
		ctl(2, guard.DecisionLog, leaf("input.0.0.0", "const", map[string]any{"matched": true})),
	)
	res := evaluate(t, e, llm(v))
	if len(res.Errors) != 2 || !strings.Contains(res.Errors[0].Result.Error, "nested deeper") {
		t.Fatalf("errors = %+v", res.Errors)
	}
	if res.Decision != guard.DecisionAllow {
		t.Errorf("decision %s", res.Decision)
	}
}

// TestDataComputedOnce: a selected Go value is turned into JSON once per evaluation, however many leaves
// select it.
func TestDataComputedOnce(t *testing.T) {
	e := newEngine(t,
		ctl(1, guard.DecisionLog, and(has("a"), has("b"))),
		ctl(2, guard.DecisionLog, has("c")),
	)
	in := &countingJSON{}
	if _, err := e.Evaluate(bg, llm(in), guard.StagePre); err != nil {
		t.Fatal(err)
	}
	if in.n != 1 {
		t.Errorf("input marshalled %d times, want 1", in.n)
	}
}

type countingJSON struct{ n int }

func (c *countingJSON) MarshalJSON() ([]byte, error) { c.n++; return []byte(`"abc"`), nil }

// assertCheckAgrees checks that Check returns what Result.Err returns.
func assertCheckAgrees(t *testing.T, eng *guard.Engine, step *guard.Step, stage guard.Stage, res *guard.Result) {
	t.Helper()
	got := eng.Check(context.Background(), step, stage)
	want := res.Err()
	if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
		var gv, wv *guard.ControlViolationError
		if errors.As(got, &gv) && errors.As(want, &wv) && gv.ControlID == wv.ControlID && gv.Message == wv.Message {
			return // equal but for map pointers
		}
		var gs, ws *guard.ControlSteerError
		if errors.As(got, &gs) && errors.As(want, &ws) && gs.ControlID == ws.ControlID && gs.Message == ws.Message {
			return
		}
		t.Errorf("Check = %v, Result.Err = %v", got, want)
	}
}

func TestZeroEngine(t *testing.T) {
	var e guard.Engine
	if res := evaluate(t, &e, llm("x")); res.Decision != guard.DecisionAllow {
		t.Fatal(res.Decision)
	}
	if e.Applies(llm("x"), guard.StagePre) {
		t.Fatal("zero engine applies")
	}
	if err := e.Update(nil); err != nil {
		t.Fatal(err)
	}
}

// TestErrorTextNamesEvaluatorOnce checks that an evaluator error is reported as "<evaluator>: <error>",
// without repeating the name when the evaluator's own error already starts with it.
func TestErrorTextNamesEvaluatorOnce(t *testing.T) {
	tests := []struct{ msg, want string }{
		{"", "fail: boom"},
		{"fail: service down", "fail: service down"},
		{"failed to connect", "fail: failed to connect"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			cfg := map[string]any{}
			if tt.msg != "" {
				cfg["message"] = tt.msg
			}
			e := newEngine(t, ctl(1, guard.DecisionLog, leaf("input", "fail", cfg)))
			res := evaluate(t, e, llm("x"))
			if len(res.Errors) != 1 || res.Errors[0].Result.Error != tt.want {
				t.Fatalf("errors = %+v, want one with error %q", res.Errors, tt.want)
			}
		})
	}
}
