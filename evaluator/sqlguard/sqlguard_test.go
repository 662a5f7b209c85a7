package sqlguard

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

func build(t testing.TB, cfg map[string]any) evaluator.Evaluator {
	t.Helper()
	r := evaluator.NewRegistry()
	r.Register(Factory())
	b, err := r.Build(Name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b.Evaluator
}

func eval(t testing.TB, e evaluator.Evaluator, v any) evaluator.Result {
	t.Helper()
	text, _ := v.(string)
	res, err := e.Evaluate(context.Background(), &evaluator.Data{Value: v, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func rules(res evaluator.Result) []string {
	var out []string
	vs, _ := res.Metadata["violations"].([]any)
	for _, v := range vs {
		out = append(out, v.(map[string]any)["rule"].(string))
	}
	return out
}

// ruleCase is a query, a config and the violation it should raise.
type ruleCase struct {
	name  string
	cfg   map[string]any
	query string
	want  string // violation rule, "" for no match, "parse" for a parse error
}

// ruleCases are the MySQL dialect's cases; TestPostgresSharedRules runs those that are PostgreSQL too.
var ruleCases = []ruleCase{
	{"read-only allows select", map[string]any{"allowed_operations": []any{"SELECT"}}, "SELECT id FROM users WHERE id = 1", ""},
	{"read-only blocks delete", map[string]any{"allowed_operations": []any{"select"}}, "DELETE FROM users WHERE id = 1", "operation_not_allowed"},
	{"blocked drop", map[string]any{"blocked_operations": []any{"DROP", "TRUNCATE"}}, "DROP TABLE users", "operation_blocked"},
	{"block_ddl", map[string]any{"block_ddl": true}, "ALTER TABLE users ADD COLUMN x INT", "operation_blocked"},
	{"block_dcl grant", map[string]any{"block_dcl": true}, "GRANT ALL ON *.* TO 'eve'@'%'", "operation_blocked"},
	{"DDL group in blocked_operations", map[string]any{"blocked_operations": []any{"DDL"}}, "TRUNCATE TABLE logs", "operation_blocked"},
	{"stacked query", map[string]any{"allow_multi_statements": false}, "SELECT 1 FROM t; DROP TABLE users", "multi_statements"},
	{"one statement with a trailing semicolon", map[string]any{"allow_multi_statements": false}, "SELECT 1 FROM t;", ""},
	{"max_statements", map[string]any{"max_statements": 2}, "SELECT 1; SELECT 2; SELECT 3", "max_statements"},
	{"blocked table", map[string]any{"blocked_tables": []any{"secrets"}}, "SELECT * FROM app.Secrets s JOIN users u ON u.id = s.uid", "table_blocked"},
	{"blocked table in a subquery", map[string]any{"blocked_tables": []any{"salaries"}}, "SELECT * FROM users WHERE id IN (SELECT uid FROM salaries)", "table_blocked"},
	{"allowed tables", map[string]any{"allowed_tables": []any{"orders", "users"}}, "SELECT * FROM orders JOIN payments ON payments.oid = orders.id", "table_not_allowed"},
	{"allowed tables ok", map[string]any{"allowed_tables": []any{"orders", "users"}}, "SELECT o.id FROM orders o JOIN users u ON u.id = o.uid", ""},
	{"cte name is not a table", map[string]any{"allowed_tables": []any{"orders"}}, "WITH recent AS (SELECT * FROM orders) SELECT * FROM recent", ""},
	{"blocked schema", map[string]any{"blocked_schemas": []any{"mysql", "information_schema"}}, "SELECT * FROM mysql.user", "schema_blocked"},
	{"allowed schema", map[string]any{"allowed_schemas": []any{"app"}}, "SELECT * FROM billing.invoices", "schema_not_allowed"},
	{"delete without where", map[string]any{"require_where": true}, "DELETE FROM users", "missing_where"},
	{"update without where", map[string]any{"require_where": true}, "UPDATE users SET admin = 1", "missing_where"},
	{"update with where", map[string]any{"require_where": true}, "UPDATE users SET admin = 1 WHERE id = 7", ""},
	{"missing limit", map[string]any{"require_limit": true}, "SELECT * FROM users", "missing_limit"},
	{"limit too large", map[string]any{"require_limit": true, "max_limit": 100}, "SELECT * FROM users LIMIT 5000", "max_limit"},
	{"limit fine", map[string]any{"require_limit": true, "max_limit": 100}, "SELECT * FROM users LIMIT 50", ""},
	{"result window", map[string]any{"max_result_window": 1000}, "SELECT * FROM users LIMIT 100 OFFSET 950", "max_result_window"},
	{"joins", map[string]any{"max_joins": 1}, "SELECT * FROM a JOIN b ON a.id = b.id JOIN c ON c.id = b.id", "max_joins"},
	{"unions", map[string]any{"max_union_count": 0}, "SELECT a FROM t UNION SELECT b FROM u", "max_union_count"},
	{"subquery depth", map[string]any{"max_subquery_depth": 1}, "SELECT * FROM t WHERE a IN (SELECT a FROM u WHERE b IN (SELECT b FROM v))", "max_subquery_depth"},
	{"subquery depth ok", map[string]any{"max_subquery_depth": 2}, "SELECT * FROM t WHERE a IN (SELECT a FROM u WHERE b IN (SELECT b FROM v))", ""},
	{"required columns any", map[string]any{"required_columns": []any{"tenant_id"}}, "SELECT name FROM users WHERE id = 1", "missing_required_columns"},
	{"required columns in where", map[string]any{"required_columns": []any{"tenant_id"}, "column_context": "where"}, "SELECT tenant_id FROM users WHERE id = 1", "missing_required_columns"},
	{"required columns present", map[string]any{"required_columns": []any{"tenant_id"}, "column_context": "where"}, "SELECT name FROM users WHERE tenant_id = 3", ""},
	{"blocked table in DROP", map[string]any{"blocked_tables": []any{"users"}}, "DROP TABLE app.users", "table_blocked"},
	{"blocked table in INSERT", map[string]any{"blocked_tables": []any{"audit"}}, "INSERT INTO audit (a) VALUES (1)", "table_blocked"},
	{"blocked table in UPDATE", map[string]any{"blocked_tables": []any{"users"}}, "UPDATE Users SET a = 1 WHERE id = 2", "table_blocked"},
	{"case_sensitive tables", map[string]any{"blocked_tables": []any{"users"}, "case_sensitive": true}, "UPDATE Users SET a = 1 WHERE id = 2", ""},
	{"create or replace view", map[string]any{"blocked_operations": []any{"CREATE_OR_REPLACE"}}, "CREATE OR REPLACE VIEW v AS SELECT id FROM users", "operation_blocked"},
	{"create view is not a replace", map[string]any{"blocked_operations": []any{"CREATE_OR_REPLACE"}}, "CREATE VIEW v AS SELECT id FROM users", ""},
	{"create table is not a replace", map[string]any{"blocked_operations": []any{"CREATE_OR_REPLACE", "DROP"}}, "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(50))", ""},
	{"blocking CREATE blocks CREATE OR REPLACE", map[string]any{"blocked_operations": []any{"CREATE"}}, "CREATE OR REPLACE VIEW v AS SELECT id FROM users", "operation_blocked"},
	{"create index is a CREATE", map[string]any{"blocked_operations": []any{"ALTER"}}, "CREATE UNIQUE INDEX idx_users_email ON users (email)", ""},
	{"create index blocked as CREATE", map[string]any{"blocked_operations": []any{"CREATE"}}, "CREATE INDEX idx_users_email ON users (email)", "operation_blocked"},
	{"alter table add index is an ALTER", map[string]any{"blocked_operations": []any{"ALTER"}}, "ALTER TABLE users ADD INDEX idx_email (email)", "operation_blocked"},
	{"replace is its own kind", map[string]any{"blocked_operations": []any{"REPLACE"}}, "REPLACE INTO t (a) VALUES (1)", "operation_blocked"},
	{"required column only in a subquery, top_level", map[string]any{"required_columns": []any{"tenant_id"}, "column_context": "where", "column_context_scope": "top_level"}, "SELECT * FROM t WHERE id IN (SELECT id FROM u WHERE tenant_id = 1)", "missing_required_columns"},
	{"required column in a subquery, all", map[string]any{"required_columns": []any{"tenant_id"}, "column_context": "where"}, "SELECT * FROM t WHERE id IN (SELECT id FROM u WHERE tenant_id = 1)", ""},
	{"parse error matches", nil, "DROP EVERYTHING NOW please", "parse"},
	{"postgres array does not parse", nil, "SELECT ARRAY[1, 2]", "parse"},
	{"comment only is not a query", nil, "-- nothing", "parse"},
	// A verdict covers the whole text: a NUL (the C parser's end of text) or invalid UTF-8 anywhere
	// makes the text unparsable in both dialects, never a verdict on what comes before it.
	{"NUL hides no statement", map[string]any{"blocked_operations": []any{"DROP"}}, "SELECT 1\x00; DROP TABLE users", "parse"},
	{"trailing NUL", nil, "SELECT 1\x00", "parse"},
	{"invalid UTF-8", map[string]any{"blocked_operations": []any{"DROP"}}, "SELECT '\xff'; DROP TABLE users", "parse"},
	{"invalid UTF-8 in a comment", nil, "SELECT 1 -- \xc3\x28", "parse"},
}

func TestRules(t *testing.T) { runRuleCases(t, ruleCases, nil) }

// runRuleCases evaluates each case, with extra merged into its config.
func runRuleCases(t *testing.T, cases []ruleCase, extra map[string]any) {
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			cfg := map[string]any{}
			for k, v := range tt.cfg {
				cfg[k] = v
			}
			for k, v := range extra {
				cfg[k] = v
			}
			res := eval(t, build(t, cfg), tt.query)
			switch {
			case tt.want == "":
				if res.Matched {
					t.Fatalf("matched: %s %v", res.Message, res.Metadata)
				}
			case tt.want == "parse":
				if !res.Matched || res.Metadata["parse_error"] != true {
					t.Fatalf("want a parse error match, got %v", res)
				}
			default:
				if !res.Matched || !contains(rules(res), tt.want) {
					t.Fatalf("rules %v (%s), want %s", rules(res), res.Message, tt.want)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestTenantFilter reads the query and the tenant from the whole step (selector "*").
func TestTenantFilter(t *testing.T) {
	e := build(t, map[string]any{"query_field": "input.query", "required_column_values": map[string]any{"tenant_id": "tenant_id"}})
	step := func(q string, tenant any) map[string]any {
		ctx := map[string]any{}
		if tenant != nil {
			ctx["tenant_id"] = tenant
		}
		return map[string]any{"type": "tool", "name": "db", "input": map[string]any{"query": q}, "context": ctx}
	}
	tests := []struct {
		name   string
		step   map[string]any
		wanted string
	}{
		{"own tenant", step("SELECT * FROM orders WHERE tenant_id = 'acme' AND status = 'open'", "acme"), ""},
		{"numeric tenant", step("SELECT * FROM orders WHERE tenant_id = 42", 42.0), ""},
		{"other tenant", step("SELECT * FROM orders WHERE tenant_id = 'globex'", "acme"), "required_column_value"},
		{"no filter", step("SELECT * FROM orders", "acme"), "required_column_value"},
		{"filter under OR does not count", step("SELECT * FROM orders WHERE tenant_id = 'acme' OR 1 = 1", "acme"), "required_column_value"},
		{"every select of a union", step("SELECT id FROM a WHERE tenant_id = 'acme' UNION SELECT id FROM b", "acme"), "required_column_value"},
		{"delete of another tenant", step("DELETE FROM orders WHERE tenant_id = 'globex'", "acme"), "required_column_value"},
		{"no tenant in context", step("SELECT * FROM orders WHERE tenant_id = 'acme'", nil), "missing_context_value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := eval(t, e, tt.step)
			if tt.wanted == "" {
				if res.Matched {
					t.Fatalf("matched: %s", res.Message)
				}
				return
			}
			if !contains(rules(res), tt.wanted) {
				t.Fatalf("rules %v, want %s", rules(res), tt.wanted)
			}
		})
	}
}

func TestParseErrorAsError(t *testing.T) {
	e := build(t, map[string]any{"on_parse_error": "error"})
	secret := "SELEKT password FROM hunter2"
	_, err := e.Evaluate(context.Background(), &evaluator.Data{Value: secret, Text: secret})
	if !errors.Is(err, ErrParse) {
		t.Fatalf("err %v, want ErrParse", err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatal("the error quotes the query")
	}
}

func TestNullAndNonSQL(t *testing.T) {
	e := build(t, nil)
	if res := eval(t, e, nil); res.Matched {
		t.Fatal("null matched")
	}
	if res := eval(t, e, map[string]any{"q": 1}); !res.Matched {
		t.Fatal("an object without query_field is not SQL and should match as a parse error")
	}
}

func TestConfigErrors(t *testing.T) {
	r := evaluator.NewRegistry()
	r.Register(Factory())
	for _, tt := range []struct {
		cfg   map[string]any
		field string
	}{
		{map[string]any{"allowed_operations": []any{"SELECT"}, "blocked_operations": []any{"DROP"}}, "blocked_operations"},
		{map[string]any{"allowed_tables": []any{"a"}, "blocked_tables": []any{"b"}}, "blocked_tables"},
		{map[string]any{"blocked_operations": []any{"MERGEX"}}, "blocked_operations.0"},
		{map[string]any{"allow_multi_statements": false, "max_statements": 2}, "max_statements"},
		{map[string]any{"max_limit": 0}, "max_limit"},
		{map[string]any{"required_column_values": map[string]any{"a.": "t"}}, "required_column_values.a."},
		{map[string]any{"dialect": "oracle"}, "dialect"},
		{map[string]any{"query_field": "input..q"}, "query_field"},
	} {
		_, err := r.Build(Name, tt.cfg)
		var ce *evaluator.ConfigError
		if !errors.As(err, &ce) {
			t.Fatalf("%v: err %v", tt.cfg, err)
		}
		found := false
		for _, p := range ce.Problems {
			found = found || p.Field == tt.field
		}
		if !found {
			t.Fatalf("%v: problems %v, want %s", tt.cfg, ce.Problems, tt.field)
		}
	}
}
