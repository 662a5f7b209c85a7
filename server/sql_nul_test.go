//go:build cgo

package server

import (
	"net/http"
	"testing"
)

// TestTrySQLWithNUL: issue 23's bypass as the sweep found it. POST /controls/try with a PostgreSQL sql
// control blocking DROP allowed "SELECT 1\u0000; DROP TABLE users" (the C parser stopped at the NUL and
// reported operations ["SELECT"]); the text is now unparsable, which denies. MySQL refused it already.
func TestTrySQLWithNUL(t *testing.T) {
	ts := newTS(t)
	for _, dialect := range []string{"postgres", "mysql", "auto"} {
		for _, input := range []string{"SELECT 1\x00; DROP TABLE users", "SELECT '\xff'; DROP TABLE users"} {
			data := map[string]any{
				"condition": map[string]any{"selector": map[string]any{"path": "input"},
					"evaluator": map[string]any{"name": "sql", "config": map[string]any{"dialect": dialect, "blocked_operations": []any{"DROP"}}}},
				"action": map[string]any{"decision": "deny"},
			}
			res := ts.ok(http.StatusOK, "POST", "/api/v1/controls/try", map[string]any{"data": data, "stage": "pre",
				"step": map[string]any{"type": "tool", "name": "db", "input": input}})
			if decision(res) != "deny" {
				t.Errorf("%s %q: %v, want deny", dialect, input, res)
			}
		}
	}
}
