// Package pii is an example custom evaluator for guard: it finds personal data (e-mail addresses,
// international phone numbers, IBANs and payment card numbers) in the selected text, validating IBANs
// with their mod-97 checksum and card numbers with the Luhn checksum, which a regex alone cannot do.
//
// It is registered as "example.pii" when the package is imported:
//
//	import _ "github.com/guardrail-control/guard/examples/customevaluator/pii"
//
// Config: kinds (a list of email, phone, iban, card; default all) and min_count (default 1). The
// evaluator matches when at least min_count findings of the wanted kinds are in the text; the result
// counts them by kind and never repeats what was found.
package pii

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/guardrail-control/guard/evaluator"
)

// Name is the evaluator's registered name. Custom evaluators use a dotted prefix of their own
// ("example.", "acme.") so they never collide with built-in names.
const Name = "example.pii"

// configSchema is what GET /evaluators shows and what every config is validated against when a
// control is saved. on_error and timeout_ms are added by the registry.
const configSchema = `{
  "type": "object",
  "properties": {
    "kinds": {"type": "array", "minItems": 1, "uniqueItems": true,
      "items": {"enum": ["email", "phone", "iban", "card"]},
      "description": "Kinds of personal data to look for; default all."},
    "min_count": {"type": "integer", "minimum": 1, "default": 1,
      "description": "How many findings make a match."}
  },
  "additionalProperties": false
}`

func init() {
	evaluator.Register(evaluator.Factory{
		Name:         Name,
		Description:  "Finds e-mail addresses, international phone numbers, IBANs (mod-97 checked) and card numbers (Luhn checked) in text.",
		Version:      "1.0.0",
		ConfigSchema: json.RawMessage(configSchema),
		New: func(config map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
			return New(config)
		},
	})
}

// Evaluator is a configured example.pii evaluator; it is immutable and safe for concurrent use.
type Evaluator struct {
	want     map[string]bool
	minCount int
}

// New builds an evaluator. The registry has already checked config against configSchema; New still
// checks what it relies on, so that it can be used without a registry.
func New(config map[string]any) (*Evaluator, error) {
	e := &Evaluator{want: map[string]bool{}, minCount: 1}
	if raw, ok := config["kinds"]; ok {
		list, _ := raw.([]any)
		if len(list) == 0 {
			return nil, evaluator.FieldError{Field: "kinds", Code: "type", Message: "must be a non-empty list"}
		}
		for i, k := range list {
			s, _ := k.(string)
			if _, known := detectors[s]; !known {
				return nil, evaluator.FieldError{Field: fmt.Sprintf("kinds.%d", i), Code: "enum", Message: "must be one of email, phone, iban, card"}
			}
			e.want[s] = true
		}
	} else {
		for _, k := range kinds {
			e.want[k] = true
		}
	}
	if raw, ok := config["min_count"]; ok {
		n, ok := evaluator.Number(raw)
		if !ok || n < 1 || n > 1e6 || n != float64(int(n)) {
			return nil, evaluator.FieldError{Field: "min_count", Code: "minimum", Message: "must be a whole number, 1 or more"}
		}
		e.minCount = int(n)
	}
	return e, nil
}

// Evaluate counts personal data in the selected text. Null data never matches. Evaluate does not
// block, so it ignores ctx.
func (e *Evaluator) Evaluate(_ context.Context, d *evaluator.Data) (evaluator.Result, error) {
	if d == nil || d.IsNull() {
		return evaluator.Result{Confidence: 1}, nil
	}
	counts := find(d.Text, e.want)
	total := 0
	for _, n := range counts {
		total += n
	}
	if total < e.minCount {
		return evaluator.Result{Confidence: 1}, nil
	}
	found := make([]string, 0, len(counts))
	meta := map[string]any{"count": total}
	for _, k := range kinds {
		if n := counts[k]; n > 0 {
			found = append(found, fmt.Sprintf("%d %s", n, k))
			meta[k] = n
		}
	}
	return evaluator.Result{
		Matched:    true,
		Confidence: 1,
		Message:    "personal data found: " + strings.Join(found, ", "),
		Metadata:   meta,
	}, nil
}
