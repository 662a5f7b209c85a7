// Package policyfile reads and writes policy files: YAML (one or more `---` documents) or JSON files that
// hold controls by name, agents with the names of their controls, and unit tests of the controls. It is the
// one parser of the format the client library reads as controls.yaml and the guard binary's validate, test,
// apply, diff and export commands use (docs/policy-files.md):
//
//	controls:
//	  - name: block-ssn
//	    data: {...}            # a ControlData object, as the API takes it
//	agents:
//	  - name: support-bot
//	    controls: [block-ssn]
//	tests:
//	  - name: an ssn is denied
//	    step: {type: llm, name: chat, input: "my ssn is 123-45-6789"}
//	    stage: pre
//	    expect: {decision: deny, matches: [block-ssn]}
//
// Field names are the API's. The format is strict, like the control plane: an unknown field is an error
// with its file and path, and every problem of every file is reported at once.
package policyfile

import (
	"fmt"
	"strings"

	"github.com/guardrail-control/guard"
)

// Control is one control of a policy file.
type Control struct {
	File string // the file (and document) it came from, for messages
	// ID is optional in a file: the client library uses it as the control's id when it runs from the file
	// (events carry it). The guard binary matches controls by name and ignores it.
	ID   int64
	Name string
	Data guard.ControlData
}

// Agent is an agent of a policy file with the names of the controls linked to it.
type Agent struct {
	File     string
	Name     string   // normalised (trimmed, lower-cased)
	Controls []string // control names, each defined in the policy
}

// Test is a unit test of the controls (guard.TestCase) with the file it came from.
type Test struct {
	File string
	guard.TestCase
}

// Policy is what one or more policy files hold, in file order.
type Policy struct {
	Controls []Control
	Agents   []Agent
	Tests    []Test
}

// Problem is one thing wrong in a policy file.
type Problem struct {
	File    string // path, with " (document N)" when the file has several documents
	Control string // the control's name when the problem is inside a control (or names one)
	Field   string // dotted path inside the document: controls.0.data.condition.evaluator.config.pattern
	Message string
}

// String formats the problem as file: control "name": field: message.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Control != "" {
		fmt.Fprintf(&b, ": control %q", p.Control)
	}
	if p.Field != "" {
		b.WriteString(": ")
		b.WriteString(p.Field)
	}
	b.WriteString(": ")
	b.WriteString(p.Message)
	return b.String()
}

// Error is every problem found in policy files.
type Error struct {
	Problems []Problem
}

// Error implements the error interface: one line per problem.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// ControlByName returns the control named name.
func (p *Policy) ControlByName(name string) (Control, bool) {
	for _, c := range p.Controls {
		if c.Name == name {
			return c, true
		}
	}
	return Control{}, false
}

// EngineControls returns the controls as the engine takes them: a control's id is its ID in the file or,
// without one, its position (1, 2, ...).
func (p *Policy) EngineControls() []guard.Control {
	out := make([]guard.Control, len(p.Controls))
	for i, c := range p.Controls {
		id := c.ID
		if id <= 0 {
			id = int64(i + 1)
		}
		out[i] = guard.Control{ID: id, Name: c.Name, Data: c.Data}
	}
	return out
}

// TestCases returns the tests as guard.RunTests takes them.
func (p *Policy) TestCases() []guard.TestCase {
	out := make([]guard.TestCase, len(p.Tests))
	for i, t := range p.Tests {
		out[i] = t.TestCase
	}
	return out
}
