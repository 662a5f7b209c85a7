package templates_test

import (
	"context"
	"os"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
	_ "github.com/guardrail-control/guard/evaluator/jsonvalidate" // json
	_ "github.com/guardrail-control/guard/evaluator/pii"          // pii
	_ "github.com/guardrail-control/guard/evaluator/promptattack" // prompt_attack
	_ "github.com/guardrail-control/guard/evaluator/secrets"      // secrets
	_ "github.com/guardrail-control/guard/evaluator/sqlguard"     // sql
	"github.com/guardrail-control/guard/templates"
)

// examples are the values a render of t uses: the examples of its parameters that have one.
func examples(t *templates.Template) map[string]any {
	params := map[string]any{}
	for _, p := range t.Parameters {
		if p.Required || p.Example != nil { // an optional parameter's example shows what it is for
			params[p.Name] = p.Example
		}
	}
	return params
}

// TestShippedLibrary renders every shipped template with its defaults and examples and runs its tests
// through the engine: every test must pass (none omitted), and every template must show both what it
// catches and what it lets through.
func TestShippedLibrary(t *testing.T) {
	lib := templates.Shipped()
	list := lib.List()
	if len(list) < 15 {
		t.Fatalf("%d templates, want at least 15", len(list))
	}
	for _, tpl := range list {
		t.Run(tpl.Name, func(t *testing.T) {
			r, err := tpl.Render(context.Background(), examples(tpl))
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			for _, o := range r.OmittedTests {
				t.Errorf("test %q does not pass: %s", o.Name, o.Message)
			}
			results, err := guard.RunControlTests(context.Background(), tpl.Name, r.Data)
			if err != nil {
				t.Fatal(err)
			}
			caught, passed := 0, 0
			for i, res := range results {
				if !res.Passed {
					t.Errorf("test %q: %v", res.Name, res.Failures)
				}
				e := r.Data.Tests[i].Expect
				redacts := e.Redacted != nil && res.Result != nil && res.Result.Redacted != nil
				if e.Match == guard.ExpectMatch || e.Decision == guard.DecisionDeny || e.Decision == guard.DecisionSteer || redacts {
					caught++
				} else {
					passed++
				}
			}
			if caught == 0 || passed == 0 {
				t.Errorf("%d tests of what it catches, %d of what it lets through; want both", caught, passed)
			}
			if err := guard.CheckControlTests(context.Background(), tpl.Name, r.Data); err != nil {
				t.Errorf("the server would refuse the rendered control: %v", err)
			}
		})
	}
}

// TestDocsListEveryTemplate: docs/templates.md has a section for every shipped template naming each of its
// parameters, so the documentation cannot fall behind the library.
func TestDocsListEveryTemplate(t *testing.T) {
	raw, err := os.ReadFile("../docs/templates.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, tpl := range templates.Shipped().List() {
		head := "### `" + tpl.Name + "`: " + tpl.Title
		i := strings.Index(doc, head)
		if i < 0 {
			t.Errorf("docs/templates.md lacks %q", head)
			continue
		}
		section := doc[i+len(head):]
		if j := strings.Index(section, "\n### "); j >= 0 {
			section = section[:j]
		}
		for _, p := range tpl.Parameters {
			if !strings.Contains(section, "| `"+p.Name+"` | "+string(p.Type)) {
				t.Errorf("docs/templates.md, %s: parameter %s (%s) is not listed", tpl.Name, p.Name, p.Type)
			}
		}
	}
}
