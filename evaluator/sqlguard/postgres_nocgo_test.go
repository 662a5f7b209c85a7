//go:build !cgo

package sqlguard

import (
	"errors"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// TestPostgresNeedsCgo: without cgo there is no PostgreSQL parser, and the config says so.
func TestPostgresNeedsCgo(t *testing.T) {
	r := evaluator.NewRegistry()
	r.Register(Factory())
	_, err := r.Build(Name, map[string]any{"dialect": "postgres"})
	var ce *evaluator.ConfigError
	if !errors.As(err, &ce) || len(ce.Problems) != 1 || ce.Problems[0].Field != "dialect" || ce.Problems[0].Code != "unavailable" {
		t.Fatalf("err %v", err)
	}
}

// TestAutoWithoutCgo: without cgo dialect auto is accepted and reads MySQL's grammar, then the lenient
// rewrites; PostgreSQL's own syntax that neither reads is a parse failure (fail-closed).
func TestAutoWithoutCgo(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"mysql", map[string]any{"blocked_operations": []any{"DROP"}}, "DROP TABLE users", "operation_blocked"},
		{"lenient cast", nil, "SELECT id::text FROM t", ""},
		{"postgres array", nil, "SELECT id FROM t WHERE tag = ANY(ARRAY['a', 'b'])", "parse"},
	}, auto)
}
