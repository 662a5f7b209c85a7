package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/policyfile"
)

// controlTest is the outcome of one test a control carries in its data (data.tests), named
// "<control>/<test>" in the reports of guard test and guard validate.
type controlTest struct {
	name    string // control/test
	control string
	file    string
	path    string // data.tests.<i>
	passed  bool
	message string // what was expected and what the control decided, when it failed
}

// runControlTests runs the tests every control of pol carries with guard.RunControlTests, the runner
// the server uses on save, keeping those whose "<control>/<test>" name filter matches (nil: all).
func runControlTests(ctx context.Context, pol *policyfile.Policy, filter *regexp.Regexp) ([]controlTest, error) {
	var out []controlTest
	for _, c := range pol.Controls {
		if len(c.Data.Tests) == 0 {
			continue
		}
		results, err := guard.RunControlTests(ctx, c.Name, c.Data)
		if err != nil {
			var ve *guard.ValidationError
			if errors.As(err, &ve) && len(ve.Problems) > 0 {
				return nil, fmt.Errorf("%s: control %s: data.%s: %s", c.File, c.Name, ve.Problems[0].Field, ve.Problems[0].Message)
			}
			return nil, fmt.Errorf("%s: control %s: %w", c.File, c.Name, err)
		}
		for i, r := range results {
			name := c.Name + "/" + r.Name
			if filter != nil && !filter.MatchString(name) {
				continue
			}
			ct := controlTest{name: name, control: c.Name, file: c.File, path: fmt.Sprintf("data.tests.%d", i), passed: r.Passed}
			if !r.Passed {
				ct.message = "expected " + c.Data.Tests[i].Expect.String() + "; the control " + guard.Decided(r.Result)
			}
			out = append(out, ct)
		}
	}
	return out, nil
}
