package policyfile_test

import (
	"context"
	"fmt"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/policyfile"
)

// Read a policy file and run its tests, as `guard test` does.
func ExampleParse() {
	src := `
controls:
  - name: block-ssn
    data:
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: '\b\d{3}-\d{2}-\d{4}\b'}}}
      action: {decision: deny}
agents:
  - name: Support-Bot
    controls: [block-ssn]
tests:
  - name: an ssn is denied
    step: {type: llm, name: chat, input: "ssn 123-45-6789"}
    stage: pre
    expect: {decision: deny}
`
	pol, err := policyfile.Parse("policy.yaml", []byte(src), policyfile.Options{})
	if err != nil {
		fmt.Println(err) // every problem: file, control, field path
		return
	}
	fmt.Println(pol.Controls[0].Name, pol.Agents[0].Name, pol.Agents[0].Controls)
	results, err := guard.RunTests(context.Background(), pol.EngineControls(), pol.TestCases())
	if err != nil {
		panic(err)
	}
	fmt.Println(results[0].Name, results[0].Passed)

	_, err = policyfile.Parse("bad.yaml", []byte("controls:\n  - {name: x, data: {}, enabled: true}\n"), policyfile.Options{})
	fmt.Println(err)
	// Output:
	// block-ssn support-bot [block-ssn]
	// an ssn is denied true
	// bad.yaml: controls.0.enabled: unknown field (expected one of [id name data])
	// bad.yaml: control "x": controls.0.data.condition: is required
	// bad.yaml: control "x": controls.0.data.action: is required
}
