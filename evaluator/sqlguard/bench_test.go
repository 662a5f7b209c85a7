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

// BenchmarkSQLDialects: the cost of dialect auto against mysql on queries each grammar reads: MySQL's
// own (auto parses once, as mysql does), PostgreSQL's (auto: MySQL's grammar fails, PostgreSQL's reads
// it; mysql: the lenient rewrites) and SQLite's (auto: MySQL fails, PostgreSQL fails, the lenient
// rewrites read it), with destructive-sql's rules.
func BenchmarkSQLDialects(b *testing.B) {
	queries := []struct{ name, query string }{
		{"mysql", typicalQuery},
		{"postgres", "SELECT o.id, o.total::numeric(12,2), c.name FROM orders o JOIN customers c ON c.id = o.customer_id " +
			"WHERE o.status ILIKE 'open%' AND o.created_at > now() - interval '7 days' ORDER BY o.created_at DESC NULLS LAST LIMIT 50"},
		{"sqlite", "INSERT OR REPLACE INTO settings (key, value, updated_at) VALUES ('theme', 'dark', datetime('now'))"},
	}
	for _, dialect := range []string{"mysql", "auto"} {
		e := build(b, map[string]any{"query_field": "input.query", "dialect": dialect, "require_where": true, "allow_multi_statements": false,
			"blocked_operations": []any{"DROP", "TRUNCATE", "ALTER", "RENAME", "CREATE_OR_REPLACE", "COPY", "DCL"}})
		for _, q := range queries {
			b.Run(dialect+"/"+q.name, func(b *testing.B) {
				d := &evaluator.Data{Value: map[string]any{"input": map[string]any{"query": q.query}}}
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if res, err := e.Evaluate(ctx, d); err != nil || res.Matched {
						b.Fatal(err, res.Message)
					}
				}
			})
		}
	}
}
