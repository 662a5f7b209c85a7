package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
)

// testControls returns the example controls plus a disabled deny control that would block "drop table".
func testControls(t *testing.T) []guard.Control {
	t.Helper()
	var out []guard.Control
	for _, c := range exampleControls {
		d, err := guard.ParseControlData([]byte(c.data))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, guard.Control{ID: c.id, Name: c.name, Data: d})
	}
	d, err := guard.ParseControlData([]byte(`{"enabled": false,
		"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "(?i)drop table"}}},
		"action": {"decision": "deny"}}`))
	if err != nil {
		t.Fatal(err)
	}
	return append(out, guard.Control{ID: 3, Name: "no-sql", Data: d})
}

func TestRunTests(t *testing.T) {
	ssn := guard.Step{Type: "llm", Name: "chat", Input: "my ssn is 123-45-6789"}
	refund := guard.Step{Type: "tool", Name: "refund", Input: map[string]any{"amount": 10}, Context: map[string]any{"user_role": "clerk"}}
	sql := guard.Step{Type: "llm", Name: "chat", Input: "please DROP TABLE users"}
	cases := []struct {
		name     string
		tc       guard.TestCase
		passed   bool
		failures []string
	}{
		{"decision deny", guard.TestCase{Name: "a", Step: ssn, Stage: guard.StagePre,
			Expect: guard.TestExpect{Decision: guard.DecisionDeny, Matches: []string{"block-ssn"}, NoMatches: []string{"refund-approval"}}}, true, nil},
		{"decision wrong", guard.TestCase{Name: "b", Step: ssn, Stage: guard.StagePre,
			Expect: guard.TestExpect{Decision: guard.DecisionAllow}}, false,
			[]string{"decision: expected allow, got deny (matched: block-ssn (deny))"}},
		{"stage out of scope", guard.TestCase{Name: "c", Step: ssn, Stage: guard.StagePost,
			Expect: guard.TestExpect{Decision: guard.DecisionAllow, NoMatches: []string{"block-ssn"}}}, true,
			nil}, // block-ssn's scope is pre only: alone it does not apply at post either
		{"steer", guard.TestCase{Name: "d", Step: refund, Stage: guard.StagePre,
			Expect: guard.TestExpect{Decision: guard.DecisionSteer, Matches: []string{"refund-approval"}}}, true, nil},
		{"per-control match", guard.TestCase{Name: "e", Control: "block-ssn", Step: ssn, Stage: guard.StagePre,
			Expect: guard.TestExpect{Match: guard.ExpectMatch}}, true, nil},
		{"per-control no_match fails", guard.TestCase{Name: "f", Control: "block-ssn", Step: ssn, Stage: guard.StagePre,
			Expect: guard.TestExpect{Match: guard.ExpectNoMatch}}, false,
			[]string{"control block-ssn: expected no_match, got match"}},
		{"disabled control: no part in the decision, testable alone", guard.TestCase{Name: "g", Step: sql, Stage: guard.StagePre,
			Expect: guard.TestExpect{Decision: guard.DecisionAllow, Matches: []string{"no-sql"}}}, true, nil},
		{"matches listed but not matching", guard.TestCase{Name: "h", Step: refund, Stage: guard.StagePre,
			Expect: guard.TestExpect{Matches: []string{"block-ssn", "refund-approval"}, NoMatches: []string{"refund-approval"}}}, false,
			[]string{"control block-ssn: expected match, got no_match", "control refund-approval: expected no_match, got match"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := guard.RunTests(context.Background(), testControls(t), []guard.TestCase{c.tc})
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 {
				t.Fatalf("%d results", len(res))
			}
			r := res[0]
			if r.Passed != c.passed || !reflect.DeepEqual(r.Failures, c.failures) {
				t.Fatalf("passed %v failures %q, want %v %q", r.Passed, r.Failures, c.passed, c.failures)
			}
			if r.Name != c.tc.Name || r.Result == nil {
				t.Fatalf("result %+v", r)
			}
		})
	}
}

func TestRunTestsInvalid(t *testing.T) {
	step := guard.Step{Type: "llm", Name: "chat", Input: "x"}
	cases := []struct {
		name  string
		tc    guard.TestCase
		field string
	}{
		{"no name", guard.TestCase{Step: step, Stage: guard.StagePre, Expect: guard.TestExpect{Decision: "allow"}}, "tests.0.name"},
		{"bad stage", guard.TestCase{Name: "x", Step: step, Stage: "during", Expect: guard.TestExpect{Decision: "allow"}}, "tests.0.stage"},
		{"no step type", guard.TestCase{Name: "x", Stage: guard.StagePre, Expect: guard.TestExpect{Decision: "allow"}}, "tests.0.step.type"},
		{"bad decision", guard.TestCase{Name: "x", Step: step, Stage: guard.StagePre, Expect: guard.TestExpect{Decision: "warn"}}, "tests.0.expect.decision"},
		{"empty expect", guard.TestCase{Name: "x", Step: step, Stage: guard.StagePre}, "tests.0.expect"},
		{"match without control", guard.TestCase{Name: "x", Step: step, Stage: guard.StagePre, Expect: guard.TestExpect{Match: "match"}}, "tests.0.control"},
		{"bad match word", guard.TestCase{Name: "x", Control: "block-ssn", Step: step, Stage: guard.StagePre, Expect: guard.TestExpect{Match: "yes"}}, "tests.0.expect"},
		{"unknown control", guard.TestCase{Name: "x", Control: "nope", Step: step, Stage: guard.StagePre, Expect: guard.TestExpect{Match: "match"}}, "tests.0.control"},
		{"unknown control in matches", guard.TestCase{Name: "x", Step: step, Stage: guard.StagePre, Expect: guard.TestExpect{Matches: []string{"nope"}}}, "tests.0.expect.matches.0"},
		{"control with object expect", guard.TestCase{Name: "x", Control: "block-ssn", Step: step, Stage: guard.StagePre, Expect: guard.TestExpect{Decision: "allow"}}, "tests.0.control"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := guard.RunTests(context.Background(), testControls(t), []guard.TestCase{c.tc})
			var ve *guard.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err %v, want a *ValidationError", err)
			}
			for _, p := range ve.Problems {
				if p.Field == c.field {
					return
				}
			}
			t.Fatalf("problems %+v, want one at %s", ve.Problems, c.field)
		})
	}
}

// With one control, per-control cases may leave the control out: the form of tests kept with a control.
func TestRunTestsOneControl(t *testing.T) {
	one := testControls(t)[:1] // block-ssn
	cases := []guard.TestCase{
		{Name: "found", Step: guard.Step{Type: "llm", Input: "ssn 123-45-6789"}, Stage: guard.StagePre, Expect: guard.TestExpect{Match: guard.ExpectMatch}},
		{Name: "not found", Step: guard.Step{Type: "llm", Input: "ssn 123-45-6789"}, Stage: guard.StagePre, Expect: guard.TestExpect{Match: guard.ExpectNoMatch}},
	}
	res, err := guard.RunTests(context.Background(), one, cases)
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Passed || res[1].Passed || !reflect.DeepEqual(res[1].Failures, []string{"control block-ssn: expected no_match, got match"}) {
		t.Fatalf("%+v", res)
	}
	if _, err := guard.RunTests(context.Background(), testControls(t), cases[:1]); err == nil {
		t.Fatal("a case without its control was accepted with several controls")
	}
}

func TestTestExpectJSON(t *testing.T) {
	cases := []struct {
		in   string
		want guard.TestExpect
		err  string
	}{
		{`"match"`, guard.TestExpect{Match: "match"}, ""},
		{`"no_match"`, guard.TestExpect{Match: "no_match"}, ""},
		{`{"decision":"deny","matches":["a"],"no_matches":["b"]}`, guard.TestExpect{Decision: "deny", Matches: []string{"a"}, NoMatches: []string{"b"}}, ""},
		{`{"decison":"deny"}`, guard.TestExpect{}, "unknown field"},
	}
	for _, c := range cases {
		var got guard.TestExpect
		err := json.Unmarshal([]byte(c.in), &got)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("%s: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%s: %+v %v", c.in, got, err)
		}
		back, err := json.Marshal(got)
		if err != nil || string(back) != c.in {
			t.Fatalf("round trip of %s: %s %v", c.in, back, err)
		}
	}
}
