// Command customevaluator shows a custom evaluator end to end: the pii package registers
// "example.pii" in its init(), this program imports it, and a deny control that names it blocks an
// LLM answer that leaks a card number or an IBAN.
//
// The same blank import in a server main (examples/server) makes the evaluator appear in
// GET /evaluators and usable in controls saved through the API; in an agent it serves sdk controls.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/examples/customevaluator/pii"
)

// controlJSON is the control as an administrator would PUT it to /api/v1/controls/{id}/data.
const controlJSON = `{
  "description": "Never let an answer carry payment data",
  "scope": {"step_types": ["llm"], "stages": ["post"]},
  "condition": {
    "selector": {"path": "output"},
    "evaluator": {"name": "` + pii.Name + `", "config": {"kinds": ["card", "iban"]}}
  },
  "action": {"decision": "deny", "metadata": {"severity": "high"}}
}`

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run builds an engine with the control and evaluates two answers, printing each decision.
func run(ctx context.Context, w io.Writer) error {
	data, err := guard.ParseControlData([]byte(controlJSON))
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	engine := guard.New()
	if err := engine.Update([]guard.Control{{ID: 1, Name: "no-payment-data", Data: data}}); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	for _, answer := range []string{
		"Your order 4111 1111 1111 1112 has shipped.",               // fails the Luhn check: not a card
		"Sure! The card on file is 4111 1111 1111 1111, exp 12/29.", // a valid card number
	} {
		step := &guard.Step{Type: "llm", Name: "support-chat", Input: "where is my order?", Output: answer}
		res, err := engine.Evaluate(ctx, step, guard.StagePost)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "decision=%s is_safe=%v", res.Decision, res.IsSafe)
		for _, m := range res.Matches {
			fmt.Fprintf(w, " control=%s message=%q", m.ControlName, m.Result.Message)
		}
		fmt.Fprintln(w)
	}
	return nil
}
