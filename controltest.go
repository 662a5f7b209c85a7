package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/guardrail-control/guard/internal/strictjson"
)

// TestCase is one unit test of a control set: a step, the stage it is checked at and what the engine must
// decide. It is the format of `guard test` files and of the tests a control carries, so a test written in
// git runs the same in the server.
//
// Two forms exist. The set form checks the decision of every enabled control together and, optionally,
// which controls match and which do not:
//
//	{"name": "ssn is blocked", "step": {...}, "stage": "pre",
//	 "expect": {"decision": "deny", "matches": ["block-ssn"], "no_matches": ["refund-approval"]}}
//
// The per-control form names one control and says whether its condition matches the step:
//
//	{"name": "ssn is found", "control": "block-ssn", "step": {...}, "stage": "pre", "expect": "match"}
//
// When RunTests is given exactly one control, a per-control case may leave control out: it is about that
// control (the form of tests kept with a control's own data).
type TestCase struct {
	Name    string     `json:"name"`
	Control string     `json:"control,omitempty"` // the per-control form: the one control this test is about
	Step    Step       `json:"step"`
	Stage   Stage      `json:"stage"`
	Expect  TestExpect `json:"expect"`
}

// TestExpect is what a TestCase expects. On the wire it is either an object (Decision, Matches, NoMatches)
// or, for a case that names one control, the string "match" or "no_match" (Match set).
type TestExpect struct {
	Decision  Decision `json:"decision,omitempty"`   // allow, deny or steer; empty: not checked
	Matches   []string `json:"matches,omitempty"`    // controls whose condition must match the step
	NoMatches []string `json:"no_matches,omitempty"` // controls whose condition must not match the step
	// Redacted is the stage's payload (input at pre, output at post) as the agent must receive it once the
	// redacting controls have replaced what they found: the payload itself when nothing is redacted.
	// Nil: not checked.
	Redacted any `json:"redacted,omitempty"`
	// Match is the per-control form: "match" or "no_match" for the case's Control.
	Match string `json:"-"`
}

// Values of TestExpect.Match.
const (
	ExpectMatch   = "match"
	ExpectNoMatch = "no_match"
)

// UnmarshalJSON accepts the object form and the string form ("match" / "no_match").
func (e *TestExpect) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := strictjson.Unmarshal(b, &s); err != nil {
			return err
		}
		*e = TestExpect{Match: s}
		return nil
	}
	type plain TestExpect
	var p plain
	if err := strictjson.Unmarshal(b, &p); err != nil { // keys compared exactly, unknown ones refused
		return err
	}
	*e = TestExpect(p)
	return nil
}

// MarshalJSON writes the string form when Match is set, the object form otherwise.
func (e TestExpect) MarshalJSON() ([]byte, error) {
	if e.Match != "" {
		return json.Marshal(e.Match)
	}
	type plain TestExpect
	return json.Marshal(plain(e))
}

// TestResult is the outcome of one TestCase.
type TestResult struct {
	Name   string
	Passed bool
	// Failures says, one line each, what was expected and what the engine decided; empty when Passed.
	Failures []string
	// Result is the engine's answer for the case: for the set form, the decision of every enabled control;
	// for the per-control form, the named control evaluated alone. Nil when the case could not run.
	Result *Result
}

// ValidateTestCases checks the shape of test cases against the controls they name, reporting every problem
// with its path (tests.<i>.<field>). controls may be nil to skip the check of names; a per-control case
// without a control is valid only when controls holds exactly one.
func ValidateTestCases(cases []TestCase, controls []Control) error {
	known := map[string]bool{}
	for _, c := range controls {
		known[c.Name] = true
	}
	var probs []Problem
	add := func(field, code, msg string) { probs = append(probs, Problem{Field: field, Code: code, Message: msg}) }
	checkName := func(field, name string) {
		if controls != nil && !known[name] {
			add(field, CodeInvalid, fmt.Sprintf("no control named %q", name))
		}
	}
	seen := map[string]bool{}
	for i, tc := range cases {
		at := "tests." + strconv.Itoa(i)
		if tc.Name == "" {
			add(at+".name", CodeRequired, "is required")
		} else if seen[tc.Name] {
			add(at+".name", CodeInvalid, fmt.Sprintf("test %q appears twice", tc.Name))
		}
		seen[tc.Name] = true
		if !tc.Stage.Valid() {
			add(at+".stage", CodeEnum, "must be one of pre, post")
		}
		if tc.Step.Type == "" {
			add(at+".step.type", CodeRequired, "is required")
		}
		e := tc.Expect
		switch {
		case e.Match != "":
			if e.Match != ExpectMatch && e.Match != ExpectNoMatch {
				add(at+".expect", CodeEnum, "must be match, no_match or an object {decision, matches, no_matches}")
			}
			if tc.Control == "" && len(controls) != 1 {
				add(at+".control", CodeRequired, "is required when expect is match or no_match")
			} else if tc.Control != "" {
				checkName(at+".control", tc.Control)
			}
		default:
			if tc.Control != "" {
				add(at+".control", CodeInvalid, "names the control of the per-control form: expect must then be match or no_match")
			}
			if e.Decision == "" && len(e.Matches) == 0 && len(e.NoMatches) == 0 && e.Redacted == nil {
				add(at+".expect", CodeRequired, "must say a decision, matches, no_matches or redacted")
			}
			if e.Decision != "" && e.Decision != DecisionAllow && e.Decision != DecisionDeny && e.Decision != DecisionSteer {
				add(at+".expect.decision", CodeEnum, "must be one of allow, deny, steer")
			}
			for j, n := range e.Matches {
				checkName(at+".expect.matches."+strconv.Itoa(j), n)
			}
			for j, n := range e.NoMatches {
				checkName(at+".expect.no_matches."+strconv.Itoa(j), n)
			}
		}
	}
	if len(probs) > 0 {
		return &ValidationError{Problems: probs}
	}
	return nil
}

// RunTests evaluates every case against controls and reports each outcome, in the order of cases.
//
// The decision of the set form is what an agent with all of controls linked would get: disabled controls
// and shadow controls take no part, and controls of both executions (server and sdk) count. Whether a control matches (the
// per-control form, and the matches and no_matches lists) is decided by evaluating that control alone,
// as if enabled, so the answer does not depend on the engine skipping controls once a deny has matched,
// and a control can be tested before it is switched on. A control whose evaluator fails neither matches
// nor does not match: the case fails with the error.
//
// opts configure the engines RunTests builds (WithRegistry for custom evaluators). The error is
// non-nil only when controls do not compile or cases do not validate (a *ValidationError).
func RunTests(ctx context.Context, controls []Control, cases []TestCase, opts ...Option) ([]TestResult, error) {
	if err := ValidateTestCases(cases, controls); err != nil {
		return nil, err
	}
	opts = append(append([]Option(nil), opts...), WithExecution(ExecutionServer, ExecutionSDK))
	all := New(opts...)
	if err := all.Update(controls); err != nil {
		return nil, err
	}
	byName := make(map[string]Control, len(controls))
	for _, c := range controls {
		byName[c.Name] = c
	}
	alone := map[string]*Engine{}
	single := func(name string) (*Engine, error) {
		if e, ok := alone[name]; ok {
			return e, nil
		}
		c := byName[name]
		c.Data.Enabled = true
		c.Data.Mode = ModeEnforce // a shadow control's condition is tested as if enforced
		e := New(opts...)
		if err := e.Update([]Control{c}); err != nil {
			return nil, err
		}
		alone[name] = e
		return e, nil
	}
	// matchOf evaluates one control alone; the string is "match", "no_match" or "error: ...".
	matchOf := func(tc *TestCase, name string) (string, *Result, error) {
		e, err := single(name)
		if err != nil {
			return "", nil, err
		}
		step := tc.Step
		res, err := e.Evaluate(ctx, &step, tc.Stage)
		if err != nil {
			return "", nil, err
		}
		switch {
		case len(res.Errors) > 0:
			return "error: " + res.Errors[0].Result.Error, res, nil
		case len(res.Matches) > 0:
			return ExpectMatch, res, nil
		default:
			return ExpectNoMatch, res, nil
		}
	}
	out := make([]TestResult, 0, len(cases))
	for i := range cases {
		tc := &cases[i]
		tr := TestResult{Name: tc.Name}
		fail := func(format string, a ...any) { tr.Failures = append(tr.Failures, fmt.Sprintf(format, a...)) }
		if tc.Expect.Match != "" {
			name := tc.Control
			if name == "" {
				name = controls[0].Name // validated: the only control
			}
			got, res, err := matchOf(tc, name)
			if err != nil {
				return nil, err
			}
			tr.Result = res
			if got != tc.Expect.Match {
				fail("control %s: expected %s, got %s", name, tc.Expect.Match, got)
			}
		} else {
			step := tc.Step
			res, err := all.Evaluate(ctx, &step, tc.Stage)
			if err != nil {
				return nil, err
			}
			tr.Result = res
			if d := tc.Expect.Decision; d != "" && res.Decision != d {
				fail("decision: expected %s, got %s%s", d, res.Decision, because(res))
			}
			if want := tc.Expect.Redacted; want != nil {
				if msg := redactedMismatch(want, res.RedactedStep(&tc.Step), tc.Stage); msg != "" {
					fail("%s", msg)
				}
			}
			for _, want := range []struct {
				names []string
				state string
			}{{tc.Expect.Matches, ExpectMatch}, {tc.Expect.NoMatches, ExpectNoMatch}} {
				for _, name := range want.names {
					got, _, err := matchOf(tc, name)
					if err != nil {
						return nil, err
					}
					if got != want.state {
						fail("control %s: expected %s, got %s", name, want.state, got)
					}
				}
			}
		}
		tr.Passed = len(tr.Failures) == 0
		out = append(out, tr)
	}
	return out, nil
}

// because names the controls behind a decision, for a failure message: the matched controls, or the
// errors, in the engine's order.
func because(res *Result) string {
	var names []string
	for _, m := range res.Matches {
		names = append(names, m.ControlName+" ("+string(m.Action)+")")
	}
	for _, m := range res.Errors {
		names = append(names, m.ControlName+" (error: "+m.Result.Error+")")
	}
	if len(names) == 0 {
		return " (no control matched)"
	}
	sort.Strings(names)
	return " (matched: " + strings.Join(names, ", ") + ")"
}
