//go:build cgo

package sqlguard

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/evaluator/internal/benchcpu"
)

var postgres = map[string]any{"dialect": "postgres"}

// mysqlOnly are the ruleCases whose SQL is MySQL's own (or whose answer depends on MySQL keeping the
// case of unquoted names, which PostgreSQL folds to lower case).
var mysqlOnly = []string{"block_dcl grant", "replace is its own kind", "postgres array does not parse", "case_sensitive tables"}

// TestPostgresSharedRules: standard SQL gives the same verdicts in both dialects.
func TestPostgresSharedRules(t *testing.T) {
	var shared []ruleCase
	for _, c := range ruleCases {
		if !slices.Contains(mysqlOnly, c.name) {
			shared = append(shared, c)
		}
	}
	runRuleCases(t, shared, postgres)
}

// TestPostgresRules: PostgreSQL's own syntax parses and is checked with the same rules.
func TestPostgresRules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"cast parses", nil, "SELECT '1'::int", ""},
		{"MySQL's LIMIT offset, count does not", nil, "SELECT * FROM t LIMIT 5, 10", "parse"},
		{"MySQL's backquotes do not", nil, "SELECT * FROM `t`", "parse"},
		{"not SQL", nil, "SELEC * FROM t", "parse"},
		{"RETURNING is still a DELETE", map[string]any{"allowed_operations": []any{"SELECT"}}, "DELETE FROM users WHERE id = 1 RETURNING *", "operation_not_allowed"},
		{"unquoted names fold to lower case", map[string]any{"blocked_tables": []any{"users"}, "case_sensitive": true}, "UPDATE Users SET a = 1 WHERE id = 2", "table_blocked"},
		{"quoted names keep their case", map[string]any{"blocked_tables": []any{"users"}, "case_sensitive": true}, `UPDATE "Users" SET a = 1 WHERE id = 2`, ""},
		{"ON CONFLICT insert", map[string]any{"blocked_tables": []any{"audit"}}, "INSERT INTO audit (a) VALUES (1) ON CONFLICT DO NOTHING", "table_blocked"},
		{"dollar quoting hides no statement", map[string]any{"allow_multi_statements": false}, "SELECT $$it's; DROP TABLE users$$", ""},
		{"stacked statements", map[string]any{"allow_multi_statements": false}, "SELECT 1; DROP TABLE users", "multi_statements"},
		{"DISTINCT ON with a limit", map[string]any{"require_limit": true}, "SELECT DISTINCT ON (a) a FROM t ORDER BY a LIMIT 10", ""},
		{"FETCH FIRST is a limit", map[string]any{"max_limit": 100}, "SELECT * FROM users FETCH FIRST 5000 ROWS ONLY", "max_limit"},
		{"LIMIT ALL is no limit", map[string]any{"require_limit": true}, "SELECT * FROM users LIMIT ALL", "missing_limit"},
		{"a parameter is not a known limit", map[string]any{"max_limit": 100}, "SELECT * FROM users LIMIT $1", "max_limit"},
		{"a huge limit", map[string]any{"max_limit": 100}, "SELECT * FROM users LIMIT 99999999999999999999", "max_limit"},
		{"offset in the window", map[string]any{"max_result_window": 1000}, "SELECT * FROM users LIMIT 100 OFFSET 950", "max_result_window"},
		{"GRANT", map[string]any{"block_dcl": true}, "GRANT SELECT ON users TO eve", "operation_blocked"},
		{"REVOKE", map[string]any{"blocked_operations": []any{"REVOKE"}}, "REVOKE ALL ON users FROM eve", "operation_blocked"},
		{"GRANT names its table", map[string]any{"blocked_tables": []any{"users"}}, "GRANT SELECT ON users TO eve", "table_blocked"},
		{"COPY is its own kind", map[string]any{"blocked_operations": []any{"COPY"}}, "COPY users TO STDOUT", "operation_blocked"},
		{"system catalog schema", map[string]any{"blocked_schemas": []any{"pg_catalog"}}, "SELECT * FROM pg_catalog.pg_authid", "schema_blocked"},
		{"DROP names its schema", map[string]any{"blocked_schemas": []any{"app"}}, "DROP TABLE app.users", "schema_blocked"},
		{"DROP VIEW names its view", map[string]any{"blocked_tables": []any{"v"}}, "DROP VIEW IF EXISTS v", "table_blocked"},
		{"TRUNCATE names its tables", map[string]any{"allowed_tables": []any{"t"}}, "TRUNCATE t, logs", "table_not_allowed"},
		{"CREATE TABLE AS is DDL", map[string]any{"block_ddl": true}, "CREATE TABLE x AS SELECT * FROM t", "operation_blocked"},
		{"INTERSECT is a set operation", map[string]any{"max_union_count": 0}, "SELECT a FROM t INTERSECT SELECT a FROM u", "max_union_count"},
		{"LATERAL subquery", map[string]any{"max_subquery_depth": 0}, "SELECT * FROM t, LATERAL (SELECT * FROM u WHERE u.id = t.id) x", "max_subquery_depth"},
		{"EXISTS subquery", map[string]any{"max_subquery_depth": 0}, "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u)", "max_subquery_depth"},
		{"CTE bodies nest", map[string]any{"max_subquery_depth": 1}, "WITH a AS (SELECT * FROM t WHERE id IN (SELECT id FROM u)) SELECT * FROM a", "max_subquery_depth"},
		{"LEFT JOIN counts", map[string]any{"max_joins": 0}, "SELECT * FROM a LEFT JOIN b USING (id)", "max_joins"},
		{"VALUES is not a filtered select", map[string]any{"require_limit": true}, "VALUES (1), (2)", ""},
		{"required columns in the select list", map[string]any{"required_columns": []any{"t.tenant_id"}, "column_context": "select"}, "SELECT t.tenant_id, t.name FROM t", ""},
		{"select * names no column", map[string]any{"required_columns": []any{"tenant_id"}, "column_context": "select"}, "SELECT * FROM t", "missing_required_columns"},
		{"UPDATE without WHERE", map[string]any{"require_where": true}, "UPDATE users SET admin = true", "missing_where"},
		{"UPDATE FROM with WHERE", map[string]any{"require_where": true}, "UPDATE users u SET admin = true FROM roles r WHERE r.uid = u.id", ""},
		// Fields whose message type is fixed come without their node type in pg_query's tree: the
		// target of INSERT, UPDATE, DELETE, COPY, CREATE TABLE AS, a foreign table's base, and the
		// sides of a set operation.
		{"INSERT target's schema", map[string]any{"blocked_schemas": []any{"app"}}, "INSERT INTO app.audit (a) SELECT 1", "schema_blocked"},
		{"UPDATE target's schema", map[string]any{"allowed_schemas": []any{"public"}}, "UPDATE app.users SET a = 1 WHERE id = 2", "schema_not_allowed"},
		{"DELETE target", map[string]any{"allowed_tables": []any{"t"}}, "DELETE FROM audit WHERE id = 1", "table_not_allowed"},
		{"CREATE TABLE AS target", map[string]any{"blocked_tables": []any{"x"}}, "CREATE TABLE x AS SELECT * FROM t", "table_blocked"},
		{"CREATE FOREIGN TABLE target", map[string]any{"blocked_tables": []any{"ft"}}, "CREATE FOREIGN TABLE ft (a int) SERVER s", "table_blocked"},
		{"COPY target", map[string]any{"blocked_schemas": []any{"app"}}, "COPY app.users TO STDOUT", "schema_blocked"},
		{"foreign key target", map[string]any{"blocked_tables": []any{"y"}}, "CREATE TABLE x (id int REFERENCES y (id))", "table_blocked"},
		{"both sides of a nested union", map[string]any{"blocked_tables": []any{"w"}, "max_union_count": 2},
			"SELECT a FROM t UNION SELECT a FROM u EXCEPT SELECT a FROM w", "table_blocked"},
		{"set operations nest", map[string]any{"max_union_count": 1}, "SELECT a FROM t UNION SELECT a FROM u EXCEPT SELECT a FROM w", "max_union_count"},
		{"a CTE name is no table", map[string]any{"allowed_tables": []any{"t"}}, "WITH a AS (SELECT * FROM t) SELECT * FROM a", ""},
		{"a quoted name with escapes", map[string]any{"blocked_tables": []any{`a<b>"c`}, "case_sensitive": true}, `SELECT * FROM "a<b>""c"`, "table_blocked"},
		{"LIMIT 0 is a limit", map[string]any{"require_limit": true, "max_limit": 10}, "SELECT * FROM t LIMIT 0", ""},
		{"a negative limit is a number", map[string]any{"max_limit": 10}, "SELECT * FROM t LIMIT -5", ""},
		{"a fractional limit is not a whole number", map[string]any{"max_limit": 10}, "SELECT * FROM t LIMIT 1.5", "max_limit"},
		{"LIMIT NULL is no limit", map[string]any{"require_limit": true}, "SELECT * FROM t LIMIT NULL", "missing_limit"},
	}, postgres)
}

// TestPostgresTenantFilter: the tenant predicate, with PostgreSQL's casts and qualified names.
func TestPostgresTenantFilter(t *testing.T) {
	e := build(t, map[string]any{"dialect": "postgres", "query_field": "input.query",
		"required_column_values": map[string]any{"o.tenant_id": "tenant_id"}})
	for _, tt := range []struct {
		query  string
		tenant any
		want   bool // matched
	}{
		{"SELECT * FROM orders o WHERE o.tenant_id = 'acme'::text AND o.id > 3", "acme", false},
		{"SELECT * FROM orders o WHERE 'acme' = o.tenant_id", "acme", false},
		{"SELECT * FROM orders o WHERE o.tenant_id = 42", 42.0, false},
		{"SELECT * FROM orders o WHERE o.tenant_id = 'globex'", "acme", true},
		{"SELECT * FROM orders o WHERE o.tenant_id = 'acme' OR true", "acme", true},
		{"SELECT * FROM orders o WHERE tenant_id = 'acme'", "acme", true}, // unqualified: not o.tenant_id
		{"UPDATE orders o SET paid = true WHERE o.tenant_id = 'acme'", "acme", false},
		{"DELETE FROM orders o", "acme", true},
		{"SELECT * FROM orders o WHERE o.tenant_id = 'acme' UNION SELECT * FROM orders o WHERE o.tenant_id = 'globex'", "acme", true},
		{"SELECT * FROM orders o WHERE o.tenant_id = 'acme' UNION SELECT * FROM orders o WHERE o.tenant_id = 'acme'::varchar", "acme", false},
		{"SELECT * FROM orders o WHERE o.tenant_id = CAST(CAST('acme' AS text) AS varchar) AND o.id = 1", "acme", false},
		{"SELECT * FROM orders o WHERE (o.id = 1 AND (o.tenant_id = 'acme'))", "acme", false},
		{"SELECT * FROM orders o WHERE NOT o.tenant_id = 'acme'", "acme", true},
		{"SELECT * FROM orders o WHERE o.tenant_id = 0", 0.0, false}, // 0 is left out of pg_query's tree as a default
		{"SELECT * FROM orders o WHERE o.tenant_id = 7.50", 7.5, false},
		{`SELECT * FROM orders o WHERE o.tenant_id = 'a"c<me>'`, `a"c<me>`, false}, // escaped in pg_query's tree
		{`SELECT * FROM orders o WHERE o.tenant_id = E'a\tb'`, "a\tb", false},      // a tab (escaped in pg_query's tree)
		{`SELECT * FROM orders o WHERE o.tenant_id = E'a\tb'`, `a\tb`, true},       // a tab is not a backslash and a t
		{`SELECT * FROM orders o WHERE o.tenant_id = E'a\\tb'`, `a\tb`, false},     // a backslash and a t
		{"DELETE FROM orders o WHERE o.tenant_id = 'acme' AND o.id IN (SELECT id FROM orders WHERE tenant_id = 'globex')", "acme", false},
		{"UPDATE orders o SET paid = true", "acme", true},
	} {
		step := map[string]any{"input": map[string]any{"query": tt.query}, "context": map[string]any{"tenant_id": tt.tenant}}
		res, err := e.Evaluate(context.Background(), &evaluator.Data{Value: step})
		if err != nil {
			t.Fatal(err)
		}
		if res.Matched != tt.want {
			t.Fatalf("%s: matched %v, want %v (%s)", tt.query, res.Matched, tt.want, res.Message)
		}
	}
}

// FuzzEvaluatePostgres feeds arbitrary text to the PostgreSQL parser and every check: a result or a
// parse error, never a panic.
func FuzzEvaluatePostgres(f *testing.F) {
	for _, s := range []string{typicalQuery, "DELETE FROM t", "GRANT ALL ON t TO u", "SELECT 1; DROP TABLE x",
		"WITH a AS (SELECT 1) SELECT * FROM a", "SELECT '1'::int", "SELECT $$;$$", "SELECT * FROM t LIMIT ALL",
		"SELECT * FROM t LIMIT 1 OFFSET 99999999999999999999", "DROP TABLE a.b.c", "'", ""} {
		f.Add(s)
	}
	e := build(f, map[string]any{"dialect": "postgres", "allowed_tables": []any{"t"}, "require_where": true, "require_limit": true,
		"max_limit": 10, "max_result_window": 20, "max_joins": 1, "max_union_count": 1, "max_subquery_depth": 1,
		"allow_multi_statements": false, "required_columns": []any{"tenant_id"}, "column_context": "where",
		"required_column_values": map[string]any{"tenant_id": "tenant_id"}})
	f.Fuzz(func(t *testing.T, q string) {
		if _, err := e.Evaluate(context.Background(), &evaluator.Data{Value: q, Text: q}); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkSQLTypicalQueryPostgres is BenchmarkSQLTypicalQuery in the postgres dialect.
func BenchmarkSQLTypicalQueryPostgres(b *testing.B) {
	e := build(b, map[string]any{
		"dialect": "postgres", "query_field": "input.query", "allowed_operations": []any{"SELECT"}, "allow_multi_statements": false,
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

// TestPostgresConcurrentUse: the postgres dialect shared by goroutines, as the engine shares an
// evaluator (run with -race; libpg_query keeps its parser state per thread).
func TestPostgresConcurrentUse(t *testing.T) {
	e := build(t, map[string]any{"dialect": "postgres", "allowed_operations": []any{"SELECT"}, "max_joins": 1})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if res := eval(t, e, typicalQuery); res.Matched {
					t.Error("typical query matched")
					return
				}
				if res := eval(t, e, "DROP TABLE t"); !res.Matched {
					t.Error("DROP did not match")
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestPostgresSeesAllTheText: issue 23's bypass. libpg_query stops at a NUL, so the DROP after it was
// unseen and the verdict (operations ["SELECT"]) covered less than the text; now the text is unparsable
// (a match by default, an evaluation error with on_parse_error "error", so on_error decides).
func TestPostgresSeesAllTheText(t *testing.T) {
	for _, q := range []string{"SELECT 1\x00; DROP TABLE users", "SELECT 1; DROP TABLE users\x00", "SELECT 'caf\xe9'"} {
		res := eval(t, build(t, map[string]any{"dialect": "postgres", "blocked_operations": []any{"DROP"}}), q)
		if !res.Matched || res.Metadata["parse_error"] != true {
			t.Fatalf("%q: %+v, want a parse error match", q, res)
		}
		e := build(t, map[string]any{"dialect": "postgres", "on_parse_error": "error"})
		if _, err := e.Evaluate(context.Background(), &evaluator.Data{Value: q, Text: q}); !errors.Is(err, ErrParse) {
			t.Fatalf("%q with on_parse_error error: err %v, want ErrParse", q, err)
		}
	}
}
