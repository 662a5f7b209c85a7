package sqlguard

import (
	"context"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// FuzzEvaluate feeds arbitrary text to the parser and every check: a result or a parse error, never a
// panic.
func FuzzEvaluate(f *testing.F) {
	for _, s := range []string{typicalQuery, "DELETE FROM t", "GRANT ALL ON *.* TO u", "SELECT 1; DROP TABLE x",
		"WITH a AS (SELECT 1) SELECT * FROM a", "/* x */ REVOKE", "SELECT * FROM t LIMIT 1 OFFSET 99999999999999999999", "'", ""} {
		f.Add(s)
	}
	e := build(f, map[string]any{"allowed_tables": []any{"t"}, "require_where": true, "require_limit": true, "max_limit": 10,
		"max_result_window": 20, "max_joins": 1, "max_union_count": 1, "max_subquery_depth": 1, "allow_multi_statements": false,
		"required_columns": []any{"tenant_id"}, "column_context": "where", "required_column_values": map[string]any{"tenant_id": "tenant_id"}})
	f.Fuzz(func(t *testing.T, q string) {
		_, err := e.Evaluate(context.Background(), &evaluator.Data{Value: q, Text: q})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzConfig builds configs from arbitrary names: an error or an evaluator, never a panic.
func FuzzConfig(f *testing.F) {
	f.Add("SELECT", "users", "tenant_id", "input.query", 1.0)
	r := evaluator.NewRegistry()
	r.Register(Factory())
	f.Fuzz(func(t *testing.T, op, table, col, path string, n float64) {
		_, _ = r.Build(Name, map[string]any{"blocked_operations": []any{op}, "allowed_tables": []any{table},
			"required_column_values": map[string]any{col: col}, "query_field": path, "max_limit": n})
	})
}

// FuzzAutoSeesWhatMySQLSees: whatever the mysql dialect blocks as a DROP (a parsed DROP, not a parse
// failure, which auto may read with PostgreSQL's grammar), dialect auto blocks too (a match for any reason): trying PostgreSQL's grammar first for text MySQL's refuses never hides a
// statement MySQL's reading finds.
func FuzzAutoSeesWhatMySQLSees(f *testing.F) {
	for _, s := range []string{"SELECT 1::int /* /* */ ; DROP TABLE [t]; /* */", `SELECT 'a\'; DROP TABLE t; -- '`,
		"SELECT 1 # 2; DROP TABLE t", "SELECT $$; DROP TABLE t; $$", "select a from t except select b from u; drop table t",
		"CREATE TABLE t (a int) DROP TABLE u", "SELECT 1; /*! DROP TABLE t */"} {
		f.Add(s)
	}
	cfg := func(dialect string) map[string]any {
		return map[string]any{"dialect": dialect, "blocked_operations": []any{"DROP"}}
	}
	mysql, auto := build(f, cfg("mysql")), build(f, cfg("auto"))
	f.Fuzz(func(t *testing.T, q string) {
		m, err := mysql.Evaluate(context.Background(), &evaluator.Data{Value: q, Text: q})
		if err != nil {
			t.Fatal(err)
		}
		a, err := auto.Evaluate(context.Background(), &evaluator.Data{Value: q, Text: q})
		if err != nil {
			t.Fatal(err)
		}
		if m.Matched && m.Metadata["parse_error"] == nil && !a.Matched {
			t.Fatalf("mysql matched (%s %v), auto did not (%v)", m.Message, m.Metadata, a.Metadata)
		}
	})
}
