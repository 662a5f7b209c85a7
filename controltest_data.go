package guard

import (
	"context"
	"fmt"
	"strconv"
)

// CodeTestFailed is the problem code of a control test (data.tests.<i>) that the control does not pass.
const CodeTestFailed = "test_failed"

// RunControlTests runs the tests a control carries in its data (d.Tests) with the runner of `guard test`
// (RunTests), the control alone being the set: "match" and "no_match" say whether its condition matches
// the step, {"decision": ...} what it alone decides. The control is tested as if enabled and enforced,
// so that a control can be proven before it is switched on or promoted from shadow. name only labels
// the results. opts configure the engines (WithRegistry for custom evaluators).
func RunControlTests(ctx context.Context, name string, d ControlData, opts ...Option) ([]TestResult, error) {
	if len(d.Tests) == 0 {
		return nil, nil
	}
	if name == "" {
		name = "control"
	}
	cases := d.Tests
	d.Tests, d.Enabled, d.Mode = nil, true, ModeEnforce
	return RunTests(ctx, []Control{{Name: name, Data: d}}, cases, opts...)
}

// CheckControlTests runs a control's tests (RunControlTests) and returns a *ValidationError with one
// problem per failing test, at tests.<i> with code test_failed, saying what was expected and what the
// control decided. The message holds no value of the test (neither its name nor its step): the field
// path names the test.
func CheckControlTests(ctx context.Context, name string, d ControlData, opts ...Option) error {
	results, err := RunControlTests(ctx, name, d, opts...)
	if err != nil {
		return err
	}
	var probs []Problem
	for i, r := range results {
		if r.Passed {
			continue
		}
		probs = append(probs, Problem{Field: "tests." + strconv.Itoa(i), Code: CodeTestFailed,
			Message: fmt.Sprintf("expected %s; the control %s", d.Tests[i].Expect.String(), Decided(r.Result))})
	}
	if len(probs) > 0 {
		return &ValidationError{Problems: probs}
	}
	return nil
}

// String says in words what e expects: "a match", "no match", "decision deny", "a redacted payload"; never
// the payload itself (failure messages of control data must not repeat a test's values).
func (e TestExpect) String() string {
	switch {
	case e.Match == ExpectMatch:
		return "a match"
	case e.Match == ExpectNoMatch:
		return "no match"
	case e.Decision != "" && e.Redacted != nil:
		return "decision " + string(e.Decision) + " and a redacted payload"
	case e.Redacted != nil:
		return "a redacted payload"
	default:
		return "decision " + string(e.Decision)
	}
}

// Decided says in words what one control decided in res (the result of evaluating it alone): "matched
// (decision deny)", "did not match (decision allow)", "failed (error: ...) and fails closed (decision
// deny)", or "did not apply to the step (decision allow)" when its scope left it out.
func Decided(res *Result) string {
	if res == nil {
		return "could not be evaluated"
	}
	switch {
	case len(res.Errors) > 0:
		e := res.Errors[0]
		how := "fails open"
		if e.Result.Matched {
			how = "fails closed"
		}
		return fmt.Sprintf("failed (error: %s) and %s (decision %s)", e.Result.Error, how, res.Decision)
	case len(res.Matches) > 0:
		return fmt.Sprintf("matched (decision %s)", res.Decision)
	case len(res.NonMatches) > 0:
		return fmt.Sprintf("did not match (decision %s)", res.Decision)
	}
	return fmt.Sprintf("did not apply to the step (decision %s)", res.Decision)
}
