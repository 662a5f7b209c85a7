// Command gitleaksgen writes the secrets evaluator's rule file (../rules.json) from the pinned gitleaks
// module's default rule set, and the rule set's own per-rule true and false positives as a test corpus.
//
// It is a separate module so that gitleaks and its dependencies (viper and a dozen more) never enter the
// module that embedders import: the evaluator embeds the generated JSON, nothing else.
//
//	cd evaluator/secrets && go generate      # or: go run -C gitleaksgen . (the defaults are the repository's paths)
//	go test -C evaluator/secrets/gitleaksgen ./...   # fails when the committed files differ from a fresh generation
//
// The rules come from gitleaks' config.DefaultConfig (config/gitleaks.toml, read with gitleaks' own
// loader). The examples come from the rule functions of gitleaks' cmd/generate/config: each calls
// utils.Validate(rule, truePositives, falsePositives); the generator builds that command with
// a copy of the module whose validate.go also records the examples and whose regen.go is
// seeded from a fixed sequence, so that the same gitleaks version always yields the same corpus (go build
// refuses -overlay on files in the module cache).
package main

import (
	"flag"
	"fmt"
	"os"
)

// Where the generated files go, relative to this directory.
const (
	defaultRules = "../rules.json"
	defaultTPs   = "../../../templates/efficacy/testdata/attack_secrets_gitleaks.jsonl"
	defaultFPs   = "../../../templates/efficacy/testdata/benign_secrets_gitleaks.jsonl"
)

func main() {
	rulesOut := flag.String("rules", defaultRules, "where to write the rule file")
	tpOut := flag.String("tps", defaultTPs, "where to write the rules' true positives")
	fpOut := flag.String("fps", defaultFPs, "where to write the rules' false positives")
	flag.Parse()
	rules, err := buildRules()
	if err != nil {
		fail(err)
	}
	cases, err := buildCases(rules)
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*rulesOut, rules, 0o644); err != nil {
		fail(err)
	}
	if err := os.WriteFile(*tpOut, cases.truePositives, 0o644); err != nil {
		fail(err)
	}
	if err := os.WriteFile(*fpOut, cases.falsePositives, 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gitleaksgen:", err)
	os.Exit(1)
}
