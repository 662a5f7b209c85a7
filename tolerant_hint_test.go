package guard_test

import (
	"context"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// TestMissingEvaluatorNamesTheImport: a control using an evaluator the process does not have (a
// template's secrets in a Go agent that did not import its package) fails closed, and the error says
// which package to import; an unknown name guard does not ship gets no hint.
func TestMissingEvaluatorNamesTheImport(t *testing.T) {
	reg := evaluator.NewRegistry()
	evaluator.RegisterBuiltins(reg)
	for _, c := range []struct{ name, want string }{
		{"secrets", `evaluator "secrets" is not available in this process: add import _ "github.com/guardrail-control/guard/evaluator/secrets" to the program to register it`},
		{"sql", `import _ "github.com/guardrail-control/guard/evaluator/sqlguard"`},
		{"prompt_attack", `import _ "github.com/guardrail-control/guard/evaluator/promptattack"`},
		{"ext.toxicity", `import _ "github.com/guardrail-control/guard/evaluator/toxicity" to the program and set EXT_API_KEY`},
		{"nope", `evaluator "nope" is not available in this process`},
	} {
		eng := guard.New(guard.WithRegistry(reg))
		data := guard.ControlData{Enabled: true, Execution: guard.ExecutionServer,
			Condition: guard.Condition{Selector: &guard.Selector{Path: "input"}, Evaluator: &guard.EvaluatorSpec{Name: c.name, Config: map[string]any{}}},
			Action:    guard.Action{Decision: guard.DecisionDeny}}
		err := eng.UpdateTolerant([]guard.Control{{ID: 1, Name: "c", Data: data}})
		if err == nil {
			t.Fatalf("%s: no problem reported", c.name)
		}
		// The problem a Go agent logs as a warning names the import too.
		if c.name != "nope" && !strings.Contains(err.Error(), "import _") {
			t.Errorf("%s: problem %q does not name the import", c.name, err)
		}
		res, err := eng.Evaluate(context.Background(), &guard.Step{Type: "llm", Name: "x", Input: "hi"}, guard.StagePre)
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision != guard.DecisionDeny || len(res.Errors) != 1 {
			t.Fatalf("%s: %+v, want a fail-closed deny", c.name, res)
		}
		if msg := res.Errors[0].Result.Error; !strings.Contains(msg, c.want) || (c.name == "nope" && strings.Contains(msg, "import")) {
			t.Errorf("%s: error %q, want it to contain %q", c.name, msg, c.want)
		}
	}
}
