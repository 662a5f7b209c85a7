package guard_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/guardrail-control/guard"
)

// exampleControls are controls as JSON, the way a controls.yaml file or the server hands them over.
var exampleControls = []struct {
	id   int64
	name string
	data string
}{
	{1, "block-ssn", `{
		"scope": {"stages": ["pre"]},
		"condition": {"selector": {"path": "input"},
		              "evaluator": {"name": "regex", "config": {"pattern": "\\b\\d{3}-\\d{2}-\\d{4}\\b"}}},
		"action": {"decision": "deny", "metadata": {"reason": "social security numbers must not reach the model"}}}`},
	{2, "refund-approval", `{
		"scope": {"step_types": ["tool"], "step_names": ["refund"]},
		"condition": {"selector": {"path": "context.user_role"},
		              "evaluator": {"name": "list", "config": {"values": ["manager", "admin"], "match_on": "no_match"}}},
		"action": {"decision": "steer",
		           "steering_context": {"message": "refunds need a manager", "required_actions": ["escalate"]}}}`},
}

func exampleEngine() *guard.Engine {
	controls := make([]guard.Control, 0, len(exampleControls))
	for _, c := range exampleControls {
		data, err := guard.ParseControlData([]byte(c.data))
		if err != nil {
			panic(err) // a *guard.ValidationError naming every problem with its field path
		}
		controls = append(controls, guard.Control{ID: c.id, Name: c.name, Data: data})
	}
	engine := guard.New()
	if err := engine.Update(controls); err != nil {
		panic(err)
	}
	return engine
}

// Build an engine from controls given as JSON and evaluate a step.
func ExampleEngine_Evaluate() {
	engine := exampleEngine()
	step := &guard.Step{Type: "llm", Name: "chat", Input: "my ssn is 123-45-6789"}
	res, err := engine.Evaluate(context.Background(), step, guard.StagePre)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.IsSafe, res.Decision, res.Reason)
	for _, m := range res.Matches {
		fmt.Println("matched:", m.ControlName, m.Action)
	}
	// Output:
	// false deny social security numbers must not reach the model
	// matched: block-ssn deny
}

// Handle deny and steer with errors.As on Check's error.
func ExampleEngine_Check() {
	engine := exampleEngine()
	steps := []*guard.Step{
		{Type: "llm", Name: "chat", Input: "my ssn is 123-45-6789"},
		{Type: "tool", Name: "refund", Input: map[string]any{"amount": 120}, Context: map[string]any{"user_role": "agent"}},
		{Type: "tool", Name: "refund", Input: map[string]any{"amount": 120}, Context: map[string]any{"user_role": "manager"}},
	}
	for _, step := range steps {
		err := engine.Check(context.Background(), step, guard.StagePre)
		var denied *guard.ControlViolationError
		var steered *guard.ControlSteerError
		switch {
		case errors.As(err, &denied):
			fmt.Println("denied by", denied.ControlName)
		case errors.As(err, &steered):
			fmt.Println("steered:", steered.SteeringContext.Message, steered.SteeringContext.RequiredActions)
		case err != nil:
			panic(err)
		default:
			fmt.Println("allowed")
		}
	}
	// Output:
	// denied by block-ssn
	// steered: refunds need a manager [escalate]
	// allowed
}

// Result.Err turns a full result into the same error Check returns.
func ExampleResult_Err() {
	engine := exampleEngine()
	res, _ := engine.Evaluate(context.Background(), &guard.Step{Type: "llm", Name: "chat", Input: "hello"}, guard.StagePre)
	fmt.Println(res.Decision, res.Err(), len(res.NonMatches))
	// Output:
	// allow <nil> 1
}

// Applies tells whether any control can apply to a step, without running evaluators.
func ExampleEngine_Applies() {
	engine := exampleEngine()
	fmt.Println(engine.Applies(&guard.Step{Type: "tool", Name: "refund"}, guard.StagePost))
	fmt.Println(engine.Applies(&guard.Step{Type: "tool", Name: "search"}, guard.StagePost))
	// Output:
	// true
	// false
}

// Update keeps the current snapshot when any control is invalid, and says which field is wrong.
func ExampleEngine_Update() {
	engine := exampleEngine()
	bad := guard.Control{ID: 3, Name: "bad", Data: guard.ControlData{
		Enabled:   true,
		Condition: guard.Condition{Selector: &guard.Selector{Path: "input"}, Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": "("}}},
		Action:    guard.Action{Decision: guard.DecisionDeny},
	}}
	err := engine.Update([]guard.Control{bad})
	var invalid *guard.ValidationError
	if errors.As(err, &invalid) {
		fmt.Println(invalid.Problems[0].Field)
	}
	// Output:
	// controls.0.condition.evaluator.config.pattern
}

// Unit-test a control set: the same cases `guard test` reads from a file.
func ExampleRunTests() {
	controls := make([]guard.Control, 0, len(exampleControls))
	for _, c := range exampleControls {
		data, err := guard.ParseControlData([]byte(c.data))
		if err != nil {
			panic(err)
		}
		controls = append(controls, guard.Control{ID: c.id, Name: c.name, Data: data})
	}
	cases := []guard.TestCase{
		{Name: "an ssn is denied", Step: guard.Step{Type: "llm", Name: "chat", Input: "ssn 123-45-6789"},
			Stage: guard.StagePre, Expect: guard.TestExpect{Decision: guard.DecisionDeny, Matches: []string{"block-ssn"}}},
		{Name: "a phone number is not an ssn", Control: "block-ssn", Step: guard.Step{Type: "llm", Name: "chat", Input: "call 555-0100"},
			Stage: guard.StagePre, Expect: guard.TestExpect{Match: guard.ExpectNoMatch}},
		{Name: "managers refund freely", Step: guard.Step{Type: "tool", Name: "refund", Context: map[string]any{"user_role": "clerk"}},
			Stage: guard.StagePre, Expect: guard.TestExpect{Decision: guard.DecisionAllow}},
	}
	results, err := guard.RunTests(context.Background(), controls, cases)
	if err != nil {
		panic(err) // controls that do not compile, or cases that do not validate
	}
	for _, r := range results {
		fmt.Println(r.Passed, r.Name, r.Failures)
	}
	// Output:
	// true an ssn is denied []
	// true a phone number is not an ssn []
	// false managers refund freely [decision: expected allow, got steer (matched: refund-approval (steer))]
}
