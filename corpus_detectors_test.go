package guard_test

// The detector evaluators register themselves on import; TestCorpus runs their cases
// (testdata/cases/detectors.yaml) through the engine.
import (
	_ "github.com/guardrail-control/guard/evaluator/jsonvalidate"
	_ "github.com/guardrail-control/guard/evaluator/pii"
	_ "github.com/guardrail-control/guard/evaluator/promptattack"
	_ "github.com/guardrail-control/guard/evaluator/secrets"
	_ "github.com/guardrail-control/guard/evaluator/sqlguard"
)
