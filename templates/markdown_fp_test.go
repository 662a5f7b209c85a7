package templates_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/templates"
)

// longReadme is a README of about 64 KB in the shape that sql-injection used to deny whole (issue 35):
// sections whose last line ends with a quoted phrase, each followed by a blank line and a Markdown heading
// (the "#" was read as a MySQL comment after a quote), with shell lines holding quoted arguments and
// --flags, and prose lines starting with And or Where.
func longReadme() string {
	var b strings.Builder
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, "## Step %d\n\nAnd then run the tool with the \"fast\" mode.\n", i)
		fmt.Fprintf(&b, "Where the cache is cold, the first run takes longer.\n\n")
		fmt.Fprintf(&b, "```sh\ngit commit -m \"step %d\" --amend\ngrep -r \"TODO\" --include=*.md .\n```\n\n", i)
		fmt.Fprintf(&b, "2026-03-14 09:12:%02d INFO step %d done\n\nThe team called it \"the plan\"\n\n", i%60, i)
	}
	return b.String()
}

// TestLongMarkdownPasses: sql-injection lets a long README through; a payload appended to it is still
// caught. (command-injection is for arguments that are data, not documents holding shell lines.)
func TestLongMarkdownPasses(t *testing.T) {
	readme := longReadme()
	for _, c := range []struct {
		template, payload string
	}{
		{"sql-injection", "\nadmin' OR 1=1 --"},
	} {
		t.Run(c.template, func(t *testing.T) {
			tpl, ok := templates.Shipped().Get(c.template)
			if !ok {
				t.Fatalf("no template %s", c.template)
			}
			r, err := tpl.Render(context.Background(), examples(tpl))
			if err != nil {
				t.Fatal(err)
			}
			step := guard.Step{Type: "tool", Name: "save_note", Input: readme}
			r.Data.Tests = []guard.TestCase{
				{Name: "a long README", Step: step, Stage: guard.StagePre, Expect: guard.TestExpect{Match: guard.ExpectNoMatch}},
				{Name: "a README with a payload", Step: guard.Step{Type: "tool", Name: "save_note", Input: readme + c.payload},
					Stage: guard.StagePre, Expect: guard.TestExpect{Match: guard.ExpectMatch}},
			}
			results, err := guard.RunControlTests(context.Background(), c.template, r.Data)
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range results {
				if !res.Passed {
					t.Errorf("%s: %v", res.Name, res.Failures)
				}
			}
		})
	}
}
