package main

import (
	"context"
	"flag"
	"fmt"
)

func init() {
	register(&command{name: "validate", summary: "check policy files offline (controls, agents, tests): every problem with file, control and path",
		usage: "guard validate -f FILE...", run: runValidate})
}

// runValidate is `guard validate -f FILE...`: no server, no key; exit 1 when any file is invalid.
func runValidate(ctx context.Context, env *commandEnv, args []string) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var files fileList
	fs.Var(&files, "f", "a policy file (YAML or JSON; - for the standard input); repeat the flag, or list more files")
	rest, err := parsePolicyFlags(fs, "guard validate -f FILE...", args)
	if err != nil {
		return err
	}
	files = append(files, rest...)
	if len(files) == 0 {
		return usageFail(fs, "no file given")
	}
	pol, err := loadPolicy(files, env)
	if err != nil {
		return err
	}
	// A control that contradicts its own tests (data.tests) would be refused by the server on save.
	own, err := runControlTests(ctx, pol, nil)
	if err != nil {
		return err
	}
	failed := 0
	for _, ct := range own {
		if !ct.passed {
			failed++
			fmt.Fprintf(env.stdout, "%s: control %s: %s: test failed: %s\n", ct.file, ct.control, ct.path, ct.message)
		}
	}
	if failed > 0 {
		return &exitError{code: 1}
	}
	fmt.Fprintf(env.stdout, "ok: %d file%s valid (%d control%s, %d agent%s, %d test%s)\n",
		len(files), pluralSuffix(len(files)), len(pol.Controls), pluralSuffix(len(pol.Controls)),
		len(pol.Agents), pluralSuffix(len(pol.Agents)), len(pol.Tests), pluralSuffix(len(pol.Tests)))
	return nil
}
