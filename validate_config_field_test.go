package guard_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// TestConfigProblemWithoutFieldNamesTheConfig: an evaluator whose constructor fails without naming a
// config field (a missing server setting, say) is reported at condition.evaluator.config, not at
// "condition.evaluator.config." with a trailing dot.
func TestConfigProblemWithoutFieldNamesTheConfig(t *testing.T) {
	r := evaluator.NewRegistry()
	r.Register(evaluator.Factory{
		Name:         "unconfigured",
		ConfigSchema: json.RawMessage(`{"type":"object"}`),
		New: func(map[string]any, evaluator.Options) (evaluator.Evaluator, error) {
			return nil, errors.New("unconfigured: the service URL is not set")
		},
	})
	r.Register(evaluator.Factory{
		Name:         "wholeconfig",
		ConfigSchema: json.RawMessage(`{"type":"object"}`),
		New: func(map[string]any, evaluator.Options) (evaluator.Evaluator, error) {
			return nil, &evaluator.ConfigError{Problems: []evaluator.FieldError{{Code: "invalid", Message: "is not usable"}}}
		},
	})
	for _, name := range []string{"unconfigured", "wholeconfig"} {
		t.Run(name, func(t *testing.T) {
			raw := `{"condition":{"selector":{"path":"input"},"evaluator":{"name":"` + name + `","config":{}}},"action":{"decision":"deny"}}`
			_, err := guard.ParseControlData([]byte(raw), guard.WithValidationRegistry(r))
			var ve *guard.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v, want a *guard.ValidationError", err)
			}
			if len(ve.Problems) != 1 || ve.Problems[0].Field != "condition.evaluator.config" {
				t.Fatalf("problems = %+v, want one at condition.evaluator.config", ve.Problems)
			}
		})
	}
}
