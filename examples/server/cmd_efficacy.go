package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/guardrail-control/guard/templates/efficacy"
)

const efficacyUsage = "guard efficacy [-dir DIR] [-template NAME]... [-o text|json|floors] [-misses]"

func init() {
	register(&command{name: "efficacy", summary: "measure the shipped templates' recall and false positives on labelled corpora",
		usage: efficacyUsage, run: runEfficacy,
		env: []envVar{{name: "GUARD_EFFICACY_DIR", desc: "directory of the shared corpora (default: ../shared/efficacy found from the working directory)"}}})
}

// templateFlag collects repeated -template flags.
type templateFlag []string

func (t *templateFlag) String() string     { return strings.Join(*t, ",") }
func (t *templateFlag) Set(v string) error { *t = append(*t, v); return nil }

// runEfficacy is `guard efficacy`: it renders the shipped templates and evaluates every corpus item through
// the engine in-process (as POST /controls/try does), then prints recall and false-positive rate per
// template and corpus. Offline: no server, no database.
func runEfficacy(ctx context.Context, env *commandEnv, args []string) error {
	fs := flag.NewFlagSet("efficacy", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	dir := fs.String("dir", "", "directory of the shared corpora (default $GUARD_EFFICACY_DIR, else ../shared/efficacy)")
	out := fs.String("o", "text", "output: text (a table), json (the report) or floors (the figures as a floors file)")
	misses := fs.Bool("misses", false, "also print each missed attack and each false positive")
	var only templateFlag
	fs.Var(&only, "template", "measure only this template (repeatable)")
	if err := parseNoArgs(fs, efficacyUsage, args); err != nil {
		return err
	}
	if *out != "text" && *out != "json" && *out != "floors" {
		return fmt.Errorf("efficacy: -o must be text, json or floors, not %q", *out)
	}
	d := *dir
	if d == "" {
		d = env.getenv("GUARD_EFFICACY_DIR")
	}
	d = efficacy.FindDir(d)
	if d == "" {
		fmt.Fprintln(env.stderr, "guard efficacy: no shared corpus directory found (set -dir or GUARD_EFFICACY_DIR); measuring the built-in cases only")
	}
	o := efficacy.Options{Dir: d, Templates: only}
	if *misses {
		o.Miss = func(t, c string, it efficacy.Item) {
			fmt.Fprintf(env.stdout, "MISS %s %s%s %q\n", t, c, ruleSuffix(it), it.Text)
		}
		o.FalsePos = func(t, c string, it efficacy.Item) {
			fmt.Fprintf(env.stdout, "FP   %s %s%s %q\n", t, c, ruleSuffix(it), it.Text)
		}
	}
	rep, err := efficacy.Run(ctx, o)
	if err != nil {
		return err
	}
	switch *out {
	case "json":
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case "floors":
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(efficacy.FloorsOf(rep))
	}
	return rep.WriteText(env.stdout)
}

// ruleSuffix names the rule an example was written for (the secret rules' own examples carry it).
func ruleSuffix(it efficacy.Item) string {
	if it.Rule == "" {
		return ""
	}
	return " [" + it.Rule + "]"
}
