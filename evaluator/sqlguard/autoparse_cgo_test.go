//go:build cgo

package sqlguard

import "testing"

// TestAutoPostgres: dialect auto reads PostgreSQL's own SQL with PostgreSQL's grammar when MySQL's refuses
// it, and a text the two grammars split or comment differently is judged on both readings.
func TestAutoPostgres(t *testing.T) {
	rules := map[string]any{"blocked_operations": []any{"DROP", "TRUNCATE", "ALTER", "RENAME", "DCL", "CREATE_OR_REPLACE"}, "require_where": true, "allow_multi_statements": false}
	runRuleCases(t, []ruleCase{
		{"array", rules, "SELECT id FROM t WHERE tag = ANY(ARRAY['a', 'b'])", ""},
		{"create index concurrently", rules, "CREATE INDEX CONCURRENTLY orders_customer_idx ON orders (customer_id)", ""},
		{"serial and arrays", rules, "CREATE TABLE events (id BIGSERIAL PRIMARY KEY, tags TEXT[] NOT NULL DEFAULT '{}')", ""},
		{"jsonb path operator", rules, "SELECT payload #>> '{user,id}' FROM events WHERE id = 3", ""},
		{"create or replace function", rules, "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'", "operation_blocked"},
		{"update without where", rules, "UPDATE accounts SET balance = balance * 1.01 RETURNING id, balance::numeric(12,2)", "missing_where"},
		{"drop cascade", rules, "DROP TABLE IF EXISTS a, b CASCADE", "operation_blocked"},
		// PostgreSQL nests comments, MySQL does not: PostgreSQL reads one SELECT, MySQL also a DROP.
		{"nested comment hides a drop from postgres", rules, "SELECT 1::int /* /* */ ; DROP TABLE users; /* */", "operation_blocked"},
		{"nested comment, statement count", map[string]any{"allow_multi_statements": false}, "SELECT 1::int /* /* */ ; SELECT 2; /* */", "multi_statements"},
		{"nested comment hides a drop only the rewrites read", map[string]any{"blocked_operations": []any{"DROP"}}, "SELECT 1::int /* /* */ ; DROP TABLE [users]; /* */", "operation_blocked"},
		// MySQL escapes a quote with a backslash and ends a comment at #; PostgreSQL does neither.
		{"backslash hides a drop from mysql", rules, `SELECT 'a\'; DROP TABLE users; -- '`, "operation_blocked"},
		{"hash hides a drop from mysql", rules, "SELECT 1 # 2; DROP TABLE users", "operation_blocked"},
	}, auto)
}
