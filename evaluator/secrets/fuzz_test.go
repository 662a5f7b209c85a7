package secrets

import (
	"context"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// FuzzScan feeds arbitrary text to every rule: no panic, and every finding lies inside the text.
func FuzzScan(f *testing.F) {
	for _, s := range []string{fakeGitHubPAT, fakeAWSKey, fakeSlackBot, fakeJWT, fakePEM, fakeGeneric, "", "key=", "-----BEGIN"} {
		f.Add(s)
	}
	r := evaluator.NewRegistry()
	r.Register(Factory())
	built, err := r.Build(Name, nil)
	if err != nil {
		f.Fatal(err)
	}
	e := built.Evaluator.(*Evaluator)
	f.Fuzz(func(t *testing.T, text string) {
		fs, err := e.Scan(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range fs {
			if x.Start < 0 || x.End > len(text) || x.Start >= x.End {
				t.Fatalf("finding %+v outside the text", x)
			}
		}
	})
}

// FuzzConfig builds configs from arbitrary allow patterns and group names: an error or an evaluator,
// never a panic.
func FuzzConfig(f *testing.F) {
	f.Add("vcs", "^ghp_", "github-pat")
	f.Add("", "(", "")
	r := evaluator.NewRegistry()
	r.Register(Factory())
	f.Fuzz(func(t *testing.T, group, pattern, rule string) {
		_, _ = r.Build(Name, map[string]any{"rule_groups": []any{group}})
		_, _ = r.Build(Name, map[string]any{"allow_patterns": []any{pattern}, "exclude_rules": []any{rule}})
	})
}
