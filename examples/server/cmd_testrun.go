package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"

	"github.com/guardrail-control/guard"
)

func init() {
	register(&command{name: "test", summary: "run the unit tests of policy files in-process and report like go test",
		usage: "guard test -f CONTROLS... -t TESTS... [-v] [-run REGEXP]", run: runTest})
}

// runTest is `guard test`: the tests of the -t files (and of the -f files) run against the controls of
// the -f files with guard.RunTests, and each control's own tests (data.tests) with
// guard.RunControlTests; exit 1 on any failure.
func runTest(ctx context.Context, env *commandEnv, args []string) error {
	const usage = "guard test -f CONTROLS... -t TESTS... [-v] [-run REGEXP]"
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var controls, tests fileList
	fs.Var(&controls, "f", "a policy file with controls; repeat for more")
	fs.Var(&tests, "t", "a file of tests; repeat for more, or list more files after the flags")
	verbose := fs.Bool("v", false, "list passing tests too")
	run := fs.String("run", "", "run only the tests whose name matches this regular expression")
	rest, err := parsePolicyFlags(fs, usage, args)
	if err != nil {
		return err
	}
	tests = append(tests, rest...)
	if len(controls) == 0 {
		return usageFail(fs, "no controls file given (-f)")
	}
	var filter *regexp.Regexp
	if *run != "" {
		if filter, err = regexp.Compile(*run); err != nil {
			return usageFail(fs, "-run: "+err.Error())
		}
	}
	pol, err := loadPolicy(append(append([]string(nil), controls...), tests...), env)
	if err != nil {
		return err
	}
	cases := pol.TestCases()
	files := make(map[string]string, len(cases))
	for _, t := range pol.Tests {
		files[t.Name] = t.File
	}
	if filter != nil {
		kept := cases[:0]
		for _, c := range cases {
			if filter.MatchString(c.Name) {
				kept = append(kept, c)
			}
		}
		cases = kept
	}
	results, err := guard.RunTests(ctx, pol.EngineControls(), cases)
	if err != nil {
		var ve *guard.ValidationError
		if errors.As(err, &ve) {
			for _, p := range ve.Problems {
				fmt.Fprintf(env.stdout, "%s: %s\n", p.Field, p.Message)
			}
			return &exitError{code: 1}
		}
		return err
	}
	// The tests controls carry in their data run too, as "<control>/<test>", with the runner the
	// server uses on save.
	own, err := runControlTests(ctx, pol, filter)
	if err != nil {
		return err
	}
	for _, ct := range own {
		r := guard.TestResult{Name: ct.name, Passed: ct.passed}
		if !ct.passed {
			r.Failures = []string{ct.path + ": " + ct.message}
		}
		files[ct.name] = ct.file
		results = append(results, r)
	}
	failed := 0
	for _, r := range results {
		if r.Passed {
			if *verbose {
				fmt.Fprintf(env.stdout, "--- PASS: %s\n", r.Name)
			}
			continue
		}
		failed++
		fmt.Fprintf(env.stdout, "--- FAIL: %s (%s)\n", r.Name, files[r.Name])
		for _, f := range r.Failures {
			fmt.Fprintf(env.stdout, "    %s\n", f)
		}
	}
	if failed > 0 {
		fmt.Fprintf(env.stdout, "FAIL\t%d of %d test%s failed\n", failed, len(results), pluralSuffix(len(results)))
		return &exitError{code: 1}
	}
	if len(results) == 0 {
		fmt.Fprintln(env.stdout, "ok\tno tests to run")
		return nil
	}
	fmt.Fprintf(env.stdout, "ok\t%d test%s passed\n", len(results), pluralSuffix(len(results)))
	return nil
}
