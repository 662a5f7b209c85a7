package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// ticketScore is an evaluator the dashboard has never heard of: its form can only come from its schema.
type ticketScore struct{}

func (ticketScore) Evaluate(context.Context, *evaluator.Data) (evaluator.Result, error) {
	return evaluator.Result{}, nil
}

const ticketScoreSchema = `{"type": "object", "required": ["threshold"], "additionalProperties": false, "properties": {
  "model": {"type": "string", "enum": ["small", "large"], "description": "which scoring model"},
  "labels": {"type": "array", "items": {"type": "string"}},
  "strict": {"type": "boolean"},
  "threshold": {"type": "number", "minimum": 0, "maximum": 1, "description": "score above which the step matches"}}}`

// TestConditionFormFromAnyEvaluatorSchema: the leaf form of an evaluator registered by the embedder (not
// one of the built-ins) is generated from the JSON Schema GET /evaluators gives: a number input with the
// schema's bounds, a choice for an enum, one value per line for a list of strings, a check box for a
// boolean, the required field first, the registry's on_error and timeout_ms too; what is filled in lands in the raw JSON and the server accepts it.
func TestConditionFormFromAnyEvaluatorSchema(t *testing.T) {
	reg := evaluator.NewRegistry()
	for _, f := range evaluator.Default.List() {
		reg.Register(*f)
	}
	reg.Register(evaluator.Factory{Name: "ticket-score", Description: "scores support tickets", Version: "1",
		ConfigSchema: json.RawMessage(ticketScoreSchema),
		New:          func(map[string]any, evaluator.Options) (evaluator.Evaluator, error) { return ticketScore{}, nil }})
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			a := startApp(t, appOptions{width: w.width, height: w.height, registry: reg})
			a.open("#/controls/new")
			a.waitJS("the form editor", `document.getElementById('condition-form').dataset.ready === 'true' && !!document.querySelector('#condition-form .cond-leaf')`)
			a.setValue(`#condition-form select.cond-evaluator`, "ticket-score")
			a.waitJS("the ticket-score form", `!!document.querySelector('#condition-form input[id^="cfg-threshold"]')`)

			got := eval[string](a, "the fields", `[...document.querySelectorAll('#condition-form .cond-config [id^="cfg-"]')].map(e =>
				e.id.replace(/-\d+$/, '') + ':' + e.tagName.toLowerCase() + (e.type && e.tagName === 'INPUT' ? '/' + e.type : '') +
				(e.min ? ' ' + e.min + '..' + e.max : '') + (e.tagName === 'SELECT' ? ' [' + [...e.options].map(o => o.textContent).join(',') + ']' : '')).join('; ')`)
			// The registry adds on_error and timeout_ms to every schema (with their enum and bounds).
			want := "cfg-threshold:input/number 0..1; cfg-labels:textarea; cfg-model:select [(default),small,large]; cfg-on_error:select [(default),deny,allow]; cfg-strict:input/checkbox; cfg-timeout_ms:input/number 1..10000"
			if got != want {
				t.Fatalf("fields = %q\nwant     %q", got, want)
			}
			if d := a.text("#condition-form .cond-config"); !contains(d, "score above which the step matches", "which scoring model", "required") {
				t.Fatalf("the schema's descriptions and the required mark are not shown: %q", d)
			}

			a.setValue(`#condition-form input[id^="cfg-threshold"]`, "0.7")
			a.setValue(`#condition-form select[id^="cfg-model"]`, `"large"`)
			a.setValue(`#condition-form textarea[id^="cfg-labels"]`, "refund\nlegal")
			a.do("strict", evalVoid(`document.querySelector('#condition-form input[id^="cfg-strict"]').click()`))
			var cond map[string]any
			if err := json.Unmarshal([]byte(eval[string](a, "condition", `document.getElementById('ctl-condition').value`)), &cond); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(cond["evaluator"]); got != "map[config:map[labels:[refund legal] model:large strict:true threshold:0.7] name:ticket-score]" {
				t.Fatalf("evaluator in the JSON = %s", got)
			}
			a.setValue("#ctl-name", "score-tickets")
			a.waitJS("valid for the server", `!!document.getElementById('valid-mark')`)
			a.noPageErrors()
		})
	}
}

// contains reports whether s holds every one of subs.
func contains(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
