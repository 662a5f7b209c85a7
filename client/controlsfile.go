package client

import (
	"fmt"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/policyfile"
	"github.com/guardrail-control/guard/evaluator"
)

// LoadControlsFile reads a controls file: a policy file (package policyfile, docs/policy-files.md), the
// format `guard apply` and `guard export` use too:
//
//	controls:
//	  - name: block-ssn
//	    data: {...}   # a ControlData object
//
// Each control's data goes through guard.ParseControlData (defaults, legacy form, validation). Evaluators
// reg does not have are accepted; in-process they fall to their on_error. A control's id is its `id` in
// the file or, without one, its position (1, 2, ...), which is what its events and errors carry. Every
// problem is reported with the file, the control and the field (controls.<i>.data.<field>). It returns
// every control of the file; agents and tests in the file are checked but not used.
func LoadControlsFile(path string, reg *evaluator.Registry) ([]guard.Control, error) {
	pol, err := loadPolicy(path, reg)
	if err != nil {
		return nil, err
	}
	return pol.EngineControls(), nil
}

// loadControlsFileFor is LoadControlsFile for one agent: when the file lists agents (an exported policy
// does), the agent gets only the controls linked to it there (none when the file does not list it);
// a file without agents gives every control, as LoadControlsFile does.
func loadControlsFileFor(path, agent string, reg *evaluator.Registry) ([]guard.Control, error) {
	pol, err := loadPolicy(path, reg)
	if err != nil {
		return nil, err
	}
	all := pol.EngineControls()
	if len(pol.Agents) == 0 {
		return all, nil
	}
	linked := map[string]bool{}
	for _, a := range pol.Agents {
		if a.Name == agent {
			for _, n := range a.Controls {
				linked[n] = true
			}
		}
	}
	out := []guard.Control{}
	for _, c := range all {
		if linked[c.Name] {
			out = append(out, c)
		}
	}
	return out, nil
}

func loadPolicy(path string, reg *evaluator.Registry) (*policyfile.Policy, error) {
	raw, err := policyfile.ReadFile(path) // bounded: policyfile.MaxFileBytes
	if err != nil {
		return nil, fmt.Errorf("guard client: controls file: %w", err)
	}
	pol, err := policyfile.Parse(path, raw, policyfile.Options{Registry: reg, AllowUnknownEvaluators: true})
	if err != nil {
		return nil, fmt.Errorf("guard client: controls file: %w", err)
	}
	return pol, nil
}
