package guard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
)

// TestControlTestsExpectRedacted: a control's test can say what payload the agent receives after the
// control's redaction (expect.redacted), in control data and in test files; a wrong payload fails the
// test (and a save), a payload with nothing redacted is the step's own.
func TestControlTestsExpectRedacted(t *testing.T) {
	data := func(tests string) string {
		return `{"condition": {"selector": {"path": "output"}, "evaluator": {"name": "regex", "config": {"pattern": "ID-\\d+"}}},
			"action": {"decision": "warn", "redact": {"replacement": "#"}}, "tests": [` + tests + `]}`
	}
	step := `"step": {"type": "llm", "name": "chat", "input": "x", "output": "ID-12 is open"}, "stage": "post"`
	cases := []struct {
		name  string
		tests string
		code  string // the problem code of data.tests.0, "" when the data is valid and its test passes
	}{
		{"the redacted output", `{"name": "t", ` + step + `, "expect": {"redacted": "# is open"}}`, ""},
		{"with the decision", `{"name": "t", ` + step + `, "expect": {"decision": "allow", "redacted": "# is open"}}`, ""},
		{"nothing to redact: the output itself", `{"name": "t", "step": {"type": "llm", "input": "x", "output": "all closed"}, "stage": "post", "expect": {"redacted": "all closed"}}`, ""},
		{"a wrong payload fails the save", `{"name": "t", ` + step + `, "expect": {"redacted": "ID-12 is open"}}`, guard.CodeTestFailed},
		{"null is refused", `{"name": "t", ` + step + `, "expect": {"redacted": null}}`, guard.CodeType},
		{"an unknown field is refused", `{"name": "t", ` + step + `, "expect": {"redacted": "# is open", "redact": 1}}`, guard.CodeUnknownField},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := guard.ParseControlData([]byte(data(tc.tests)))
			if err == nil {
				err = guard.CheckControlTests(context.Background(), "ids", d)
			}
			var ve *guard.ValidationError
			switch {
			case tc.code == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.code != "" && (!errors.As(err, &ve) || ve.Problems[0].Code != tc.code || !strings.HasPrefix(ve.Problems[0].Field, "tests.0")):
				t.Fatalf("error = %v, want %s at tests.0", err, tc.code)
			case tc.code == guard.CodeTestFailed && strings.Contains(err.Error(), "ID-12"):
				t.Fatalf("the failure repeats the test's values: %v", err)
			}
		})
	}

	// The set form of test files: a failure shows the payload received.
	d, err := guard.ParseControlData([]byte(data("")))
	if err != nil {
		t.Fatal(err)
	}
	ctl := []guard.Control{{ID: 1, Name: "ids", Data: d}}
	out := guard.Step{Type: "llm", Name: "chat", Input: "x", Output: map[string]any{"n": 1, "s": "ID-7"}}
	res, err := guard.RunTests(context.Background(), ctl, []guard.TestCase{
		{Name: "ok", Step: out, Stage: guard.StagePost, Expect: guard.TestExpect{Redacted: map[string]any{"n": 1, "s": "#"}}},
		{Name: "bad", Step: out, Stage: guard.StagePost, Expect: guard.TestExpect{Redacted: map[string]any{"n": 1, "s": "ID-7"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Passed || res[1].Passed || len(res[1].Failures) != 1 || !strings.Contains(res[1].Failures[0], `{"n":1,"s":"#"}`) {
		t.Fatalf("results: %+v / %+v", res[0], res[1])
	}
}
