package sqlguard

import (
	"slices"
	"testing"
)

var auto = map[string]any{"dialect": "auto"}

// autoDiffers are the ruleCases whose SQL another grammar of dialect auto reads (PostgreSQL's arrays).
var autoDiffers = []string{"postgres array does not parse"}

// TestAutoSharedRules: the rules give the same verdicts in dialect auto as in mysql on the MySQL cases.
func TestAutoSharedRules(t *testing.T) {
	var shared []ruleCase
	for _, c := range ruleCases {
		if !postgresAvailable || !slices.Contains(autoDiffers, c.name) {
			shared = append(shared, c)
		}
	}
	runRuleCases(t, shared, auto)
}

// TestAutoLenientForms: what only the lenient rewrites read (SQLite, SQL Server forms) parses in dialect
// auto with or without cgo, and the rules apply to it; text no grammar reads stays a parse failure.
func TestAutoLenientForms(t *testing.T) {
	drop := map[string]any{"blocked_operations": []any{"DROP", "TRUNCATE", "ALTER", "RENAME", "DCL", "CREATE_OR_REPLACE"}, "require_where": true, "allow_multi_statements": false}
	runRuleCases(t, []ruleCase{
		{"sqlite insert or replace", drop, "INSERT OR REPLACE INTO settings (k, v) VALUES ('a', 'b')", ""},
		{"sqlite autoincrement", drop, "CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL)", ""},
		{"sql server top", drop, "SELECT TOP 10 [name], [total] FROM [dbo].[orders] ORDER BY [total] DESC", ""},
		{"sql server identity", drop, "CREATE TABLE customers (id INT IDENTITY(1,1) PRIMARY KEY, name NVARCHAR(100) NOT NULL)", ""},
		{"intersect", drop, "SELECT id FROM a INTERSECT SELECT id FROM b", ""},
		{"delete without where", drop, "DELETE FROM users", "missing_where"},
		{"a drop after a sqlite form", drop, "INSERT OR IGNORE INTO t (a) VALUES (1); DROP TABLE users", "multi_statements"},
		{"not SQL", drop, "please drop the users table", "parse"},
	}, auto)
}
