package sqlguard

import (
	"context"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/evaluator/internal/benchcpu"
)

// typicalQuery is an agent's reporting query: a join, a tenant filter, a subquery, a LIMIT.
const typicalQuery = "SELECT o.id, o.total, c.name FROM orders o JOIN customers c ON c.id = o.customer_id " +
	"WHERE o.tenant_id = 'acme' AND o.status = 'open' AND o.created_at > '2024-01-01' " +
	"AND c.id IN (SELECT customer_id FROM vip WHERE tenant_id = 'acme') ORDER BY o.created_at DESC LIMIT 50"

func BenchmarkSQLTypicalQuery(b *testing.B) {
	e := build(b, map[string]any{
		"query_field": "input.query", "allowed_operations": []any{"SELECT"}, "allow_multi_statements": false,
		"blocked_tables": []any{"secrets"}, "require_limit": true, "max_limit": 100, "max_joins": 3,
		"max_subquery_depth": 2, "required_column_values": map[string]any{"o.tenant_id": "tenant_id"},
	})
	step := map[string]any{"input": map[string]any{"query": typicalQuery}, "context": map[string]any{"tenant_id": "acme"}}
	d := &evaluator.Data{Value: step}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	stop := benchcpu.Start(b)
	for i := 0; i < b.N; i++ {
		res, err := e.Evaluate(ctx, d)
		if err != nil || res.Matched {
			b.Fatal(err, res.Message)
		}
	}
	stop()
}
