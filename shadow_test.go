package guard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
)

func mustData(t *testing.T, raw string) guard.ControlData {
	t.Helper()
	d, err := guard.ParseControlData([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const (
	denySecret = `{"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "secret"}}}, "action": {"decision": "deny"}`
	denyKey    = `{"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "key"}}}, "action": {"decision": "deny"}`
	steerRude  = `{"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "rude"}}}, "action": {"decision": "steer", "steering_context": {"message": "be nice"}}`
)

// TestEvaluateShadow: shadow controls are out of Evaluate, Check and Applies; EvaluateShadow evaluates
// each of them on its own (a shadow deny does not stop the others) and says what they would have
// decided together.
func TestEvaluateShadow(t *testing.T) {
	eng := guard.New()
	err := eng.Update([]guard.Control{
		{ID: 1, Name: "shadow-secret", Data: mustData(t, denySecret+`, "mode": "shadow"}`)},
		{ID: 2, Name: "shadow-key", Data: mustData(t, denyKey+`, "mode": "shadow"}`)},
		{ID: 3, Name: "shadow-rude", Data: mustData(t, steerRude+`, "mode": "shadow"}`)},
		{ID: 4, Name: "enforced-rude", Data: mustData(t, steerRude+`, "mode": "enforce"}`)},
		{ID: 5, Name: "disabled-shadow", Data: mustData(t, denySecret+`, "mode": "shadow", "enabled": false}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !eng.HasShadow() {
		t.Fatal("HasShadow = false")
	}
	ctx := context.Background()
	step := &guard.Step{Type: "llm", Name: "chat", Input: "a rude secret key"}
	res, err := eng.Evaluate(ctx, step, guard.StagePre)
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision != guard.DecisionSteer || len(res.Matches) != 1 || res.Matches[0].ControlName != "enforced-rude" ||
		len(res.NonMatches)+len(res.Errors) != 0 {
		t.Fatalf("Evaluate = %+v, want only the enforced control", res)
	}
	var steer *guard.ControlSteerError
	if err := eng.Check(ctx, step, guard.StagePre); !errors.As(err, &steer) || steer.ControlName != "enforced-rude" {
		t.Fatalf("Check = %v", err)
	}
	sh, err := eng.EvaluateShadow(ctx, step, guard.StagePre)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range sh.Matches {
		names = append(names, m.ControlName)
	}
	if strings.Join(names, ",") != "shadow-secret,shadow-key,shadow-rude" {
		t.Errorf("shadow matches %v: every shadow control is evaluated on its own, in id order", names)
	}
	if sh.Decision != guard.DecisionDeny || sh.IsSafe || sh.Reason == "" || sh.SteeringContext != nil {
		t.Errorf("shadow decision %s (%q), want deny", sh.Decision, sh.Reason)
	}
	// Only shadow controls apply to this step: Applies (the decision path) says none.
	eng2 := guard.New()
	if err := eng2.Update([]guard.Control{{ID: 1, Name: "s", Data: mustData(t, denySecret+`, "mode": "shadow"}`)}}); err != nil {
		t.Fatal(err)
	}
	if eng2.Applies(step, guard.StagePre) {
		t.Error("Applies counts a shadow control")
	}
	if _, err := eng2.EvaluateShadow(ctx, nil, guard.StagePre); !errors.Is(err, guard.ErrNilStep) {
		t.Errorf("EvaluateShadow(nil) = %v", err)
	}
	if _, err := guard.New().EvaluateShadow(ctx, step, "during"); !errors.Is(err, guard.ErrInvalidStage) {
		t.Errorf("EvaluateShadow(bad stage) without shadow controls = %v", err)
	}
	// Removing the shadow controls removes their cost: HasShadow goes false.
	if err := eng.Update(nil); err != nil || eng.HasShadow() {
		t.Errorf("after Update(nil): err %v, HasShadow %v", err, eng.HasShadow())
	}
}

// TestShadowControlProblemsKeepTheirIndex: a shadow control that does not compile fails a strict
// Update with the path of its own position, and a tolerant one degrades it without failing the rest.
func TestShadowControlProblemsKeepTheirIndex(t *testing.T) {
	bad, err := guard.ParseControlData([]byte(`{"mode": "shadow", "condition": {"selector": {"path": "input"}, "evaluator": {"name": "ext.missing", "config": {}}}, "action": {"decision": "deny"}}`),
		guard.AllowUnknownEvaluators())
	if err != nil {
		t.Fatal(err)
	}
	controls := []guard.Control{{ID: 1, Name: "ok", Data: mustData(t, denySecret+`}`)}, {ID: 2, Name: "bad", Data: bad}}
	eng := guard.New()
	err = eng.Update(controls)
	var ve *guard.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) == 0 || !strings.HasPrefix(ve.Problems[0].Field, "controls.1.") {
		t.Fatalf("Update = %v, want a problem at controls.1", err)
	}
	if err := eng.UpdateTolerant(controls); err == nil {
		t.Fatal("UpdateTolerant reported nothing degraded")
	}
	step := &guard.Step{Type: "llm", Name: "chat", Input: "secret"}
	if res, _ := eng.Evaluate(context.Background(), step, guard.StagePre); res.Decision != guard.DecisionDeny || len(res.Errors) != 0 {
		t.Errorf("tolerant Evaluate = %+v: the degraded shadow control must not be part of it", res)
	}
	if sh, _ := eng.EvaluateShadow(context.Background(), step, guard.StagePre); sh == nil || len(sh.Errors) != 1 {
		t.Errorf("tolerant EvaluateShadow = %+v, want the degraded control as an error", sh)
	}
}

func TestParseModeAndTests(t *testing.T) {
	cases := []struct {
		name, extra string
		fields      []string // problem fields; nil: valid
	}{
		{"enforce", `"mode": "enforce"`, nil},
		{"shadow", `"mode": "shadow"`, nil},
		{"bad mode", `"mode": "dry"`, []string{"mode"}},
		{"mode not a string", `"mode": true`, []string{"mode"}},
		{"tests", `"tests": [{"name": "a", "step": {"type": "llm", "name": "chat", "input": "x", "output": [1], "context": {"k": 1}}, "stage": "post", "expect": {"decision": "allow"}}]`, nil},
		{"tests not a list", `"tests": {}`, []string{"tests"}},
		{"test not an object", `"tests": [1]`, []string{"tests.0"}},
		{"test fields", `"tests": [{}]`, []string{"tests.0.name", "tests.0.step", "tests.0.stage", "tests.0.expect"}},
		{"unknown fields", `"tests": [{"name": "a", "step": {"type": "llm", "extra": 1}, "stage": "pre", "expect": {"decision": "deny", "matches": []}, "control": "c"}]`,
			[]string{"tests.0.control", "tests.0.step.extra", "tests.0.expect.matches"}},
		{"empty name and type", `"tests": [{"name": "", "step": {"type": ""}, "stage": "pre", "expect": "match"}]`, []string{"tests.0.name", "tests.0.step.type"}},
		{"context not an object", `"tests": [{"name": "a", "step": {"type": "llm", "context": []}, "stage": "pre", "expect": "match"}]`, []string{"tests.0.step.context"}},
		{"expect of another type", `"tests": [{"name": "a", "step": {"type": "llm"}, "stage": "pre", "expect": 3}]`, []string{"tests.0.expect"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := guard.ParseControlData([]byte(denySecret + ", " + c.extra + "}"))
			if c.fields == nil {
				if err != nil {
					t.Fatal(err)
				}
				// Round trip: what Validate (and the store) re-read is the same data.
				if err := d.Validate(); err != nil {
					t.Fatalf("Validate after parse: %v", err)
				}
				return
			}
			var ve *guard.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err %v", err)
			}
			got := map[string]bool{}
			for _, p := range ve.Problems {
				got[p.Field] = true
			}
			for _, f := range c.fields {
				if !got[f] {
					t.Errorf("no problem at %s in %+v", f, ve.Problems)
				}
			}
		})
	}
	many := make([]string, guard.MaxControlTests+1)
	for i := range many {
		many[i] = `{"name": "t` + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + `", "step": {"type": "llm"}, "stage": "pre", "expect": "match"}`
	}
	if _, err := guard.ParseControlData([]byte(denySecret + `, "tests": [` + strings.Join(many, ",") + `]}`)); err == nil || !strings.Contains(err.Error(), "tests") {
		t.Errorf("%d tests accepted: %v", len(many), err)
	}
}

// TestCheckControlTests: a control's own tests run as if it were enabled and enforced; failures are
// problems at tests.<i> that say what the control decided, without the test's values.
func TestCheckControlTests(t *testing.T) {
	ctx := context.Background()
	d := mustData(t, denySecret+`, "enabled": false, "mode": "shadow", "scope": {"stages": ["pre"]}, "tests": [
		{"name": "finds", "step": {"type": "llm", "input": "my secret"}, "stage": "pre", "expect": "match"},
		{"name": "denies", "step": {"type": "llm", "input": "my secret"}, "stage": "pre", "expect": {"decision": "deny"}},
		{"name": "post is out of scope", "step": {"type": "llm", "input": "my secret"}, "stage": "post", "expect": "no_match"}]}`)
	if err := guard.CheckControlTests(ctx, "c", d); err != nil {
		t.Fatalf("passing tests: %v", err)
	}
	d.Tests[0].Expect = guard.TestExpect{Match: guard.ExpectNoMatch}
	d.Tests[1].Expect = guard.TestExpect{Decision: guard.DecisionAllow}
	d.Tests[2].Expect = guard.TestExpect{Match: guard.ExpectMatch}
	err := guard.CheckControlTests(ctx, "c", d)
	var ve *guard.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 3 {
		t.Fatalf("err %v, want 3 problems", err)
	}
	want := []guard.Problem{
		{Field: "tests.0", Code: guard.CodeTestFailed, Message: "expected no match; the control matched (decision deny)"},
		{Field: "tests.1", Code: guard.CodeTestFailed, Message: "expected decision allow; the control matched (decision deny)"},
		{Field: "tests.2", Code: guard.CodeTestFailed, Message: "expected a match; the control did not apply to the step (decision allow)"},
	}
	for i, p := range ve.Problems {
		if p != want[i] {
			t.Errorf("problem %d = %+v, want %+v", i, p, want[i])
		}
		if strings.Contains(p.Message, "secret") {
			t.Errorf("problem %d echoes the test's step: %q", i, p.Message)
		}
	}
}

// TestRunTestsWithShadowControls: in test files, shadow controls take no part in the decision of the
// set, and their condition is tested as if enforced.
func TestRunTestsWithShadowControls(t *testing.T) {
	controls := []guard.Control{{ID: 1, Name: "s", Data: mustData(t, denySecret+`, "mode": "shadow"}`)}}
	step := guard.Step{Type: "llm", Name: "chat", Input: "secret"}
	res, err := guard.RunTests(context.Background(), controls, []guard.TestCase{
		{Name: "allowed", Step: step, Stage: guard.StagePre, Expect: guard.TestExpect{Decision: guard.DecisionAllow, Matches: []string{"s"}}},
		{Name: "matches", Control: "s", Step: step, Stage: guard.StagePre, Expect: guard.TestExpect{Match: guard.ExpectMatch}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Passed {
			t.Errorf("%s: %v", r.Name, r.Failures)
		}
	}
}
