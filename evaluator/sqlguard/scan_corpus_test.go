package sqlguard

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// scanCorpus reads one of the efficacy package's own corpora (written for the repository: ordinary SQL of
// several dialects, and destructive statements disguised in each).
func scanCorpus(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open("../../templates/efficacy/testdata/" + name + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var item struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &item); err != nil {
			t.Fatal(err)
		}
		out = append(out, item.Text)
	}
	return out
}

// destructiveConfig is the destructive-sql template's evaluator config.
func destructiveConfig(onParseError string) map[string]any {
	return map[string]any{"dialect": "auto", "on_parse_error": onParseError, "require_where": true,
		"allow_multi_statements": false, "blocked_operations": []any{"DROP", "TRUNCATE", "ALTER", "RENAME", "CREATE_OR_REPLACE", "COPY", "DCL"}}
}

// TestScanFloors: with the scan, ordinary analytics and DDL SQL of PostgreSQL, MySQL, SQLite, SQL Server
// and the warehouse dialects is blocked less than 1% of the time, and every disguised destructive
// statement is still blocked.
func TestScanFloors(t *testing.T) {
	e, err := New(destructiveConfig("scan"))
	if err != nil {
		t.Fatal(err)
	}
	strict, err := New(destructiveConfig("match"))
	if err != nil {
		t.Fatal(err)
	}
	judge := func(e *Evaluator, q string) evaluator.Result {
		r, err := e.Evaluate(context.Background(), &evaluator.Data{Value: q})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	benign := scanCorpus(t, "benign_sql_dialects")
	blocked, blockedStrict := 0, 0
	for _, q := range benign {
		if r := judge(e, q); r.Matched {
			blocked++
			t.Logf("ordinary SQL blocked: %q: %s %v", q, r.Message, r.Metadata)
		}
		if judge(strict, q).Matched {
			blockedStrict++
		}
	}
	t.Logf("ordinary SQL blocked: %d/%d with the scan, %d/%d failing closed", blocked, len(benign), blockedStrict, len(benign))
	if float64(blocked) >= 0.01*float64(len(benign)) {
		t.Errorf("%d of %d ordinary statements blocked, want under 1%%", blocked, len(benign))
	}
	for _, q := range scanCorpus(t, "attack_sql_disguised") {
		if r := judge(e, q); !r.Matched {
			t.Errorf("destructive SQL let through: %q (%v)", q, r.Metadata)
		}
	}
}

// TestScanCases: what the scan decides on text no grammar reads, reading by reading.
func TestScanCases(t *testing.T) {
	cases := []struct {
		name  string
		query string
		match bool
	}{
		{"sampling", "SELECT * FROM t TABLESAMPLE (BUCKET 1 OUT OF 4 ON id)", false},
		{"a drop word in a string", "SELECT 'drop table t' AS s QUALIFY 1 = 1", false},
		{"a foreign-key action", "CREATE TABLE c (p INT REFERENCES p(id) ON DELETE CASCADE) STORED AS ORC", false},
		{"a row lock", "SELECT id FROM jobs QUALIFY 1 = 1 FOR UPDATE", false},
		{"a drop with no semicolon", "SELECT 1 QUALIFY 1 = 1 DROP TABLE t", true},
		{"delete without where", "DELETE FROM t QUALIFY 1 = 1", true},
		{"delete whose where is another statement's", "DELETE FROM t QUALIFY 1 SELECT 1 FROM u WHERE a = 1", true},
		{"update with where", "UPDATE t SET a = 1 WHERE id = 2 QUALIFY 1", false},
		{"MySQL hides a drop after #", "SELECT '#' QUALIFY 1; DROP TABLE t", true},
		{"an open quote in MySQL's reading", `SELECT 'a\' QUALIFY 1`, true},
		{"a nested comment hides a drop from MySQL", "SELECT 1 /* /* */ DROP TABLE t /* */ */ QUALIFY 1", true},
		{"a MySQL executable comment", "SELECT 1 QUALIFY 1 /*!50000 DROP TABLE t */", true},
		{"a MariaDB executable comment", "SELECT 1 QUALIFY 1 /*M! ; DELETE FROM t */", true},
		{"an ordinary comment", "SELECT 1 QUALIFY 1 /* DROP TABLE t once the migration lands */", false},
		{"a dollar body", "DO $$ BEGIN DROP TABLE t; END $$", true},
		{"dynamic SQL", "EXEC('TRUNCATE TABLE t') QUALIFY 1", true},
		{"dynamic SQL built from pieces", "SELECT 1 QUALIFY 1 EXEC('DR' + 'OP TABLE t')", true},
		{"an upsert's DO", "INSERT INTO t (a) VALUES ('update me') ON CONFLICT (a) DO NOTHING QUALIFY 1", false},
		{"a system routine", "EXEC master.dbo.xp_cmdshell 'dir' QUALIFY 1", true},
		{"a fragment", "1 OR 1 = 1 QUALIFY", true},
		{"comments alone", "-- nothing\n/* here */ ;", true},
		{"create or replace", "CREATE OR REPLACE TABLE t (a STRUCT<b INT64>)", true},
	}
	e, err := New(destructiveConfig("scan"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := e.Evaluate(context.Background(), &evaluator.Data{Value: c.query})
			if err != nil {
				t.Fatal(err)
			}
			if r.Matched != c.match {
				t.Errorf("%q: matched %v, want %v (%s %v)", c.query, r.Matched, c.match, r.Message, r.Metadata)
			}
		})
	}
	// Rules that need the parse tree cannot be judged on tokens: unparsable text is a match.
	cfg := destructiveConfig("scan")
	cfg["allowed_tables"] = []any{"t"}
	tables, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tables.Evaluate(context.Background(), &evaluator.Data{Value: "SELECT * FROM secrets TABLESAMPLE (BUCKET 1 OUT OF 4 ON id)"})
	if err != nil || !r.Matched {
		t.Errorf("allowed_tables with the scan: %v %v, want a match", r, err)
	}
}

// TestScanNestedRowOps: DELETEs nested in parentheses cost a bounded search for their WHERE, and a text
// whose search runs out is blocked, not cleared.
func TestScanNestedRowOps(t *testing.T) {
	q := "SELECT 1 QUALIFY 1 " + strings.Repeat("DELETE FROM t WHERE (", 20000)
	r := scanQuery(q)
	if len(r.violations) == 0 {
		t.Fatal("nested deletes with unclosed parentheses cleared")
	}
	q = "SELECT 1 QUALIFY 1 " + strings.Repeat("(UPDATE t SET a = 1 ", 20000) + strings.Repeat(")", 20000)
	r = scanQuery(q)
	if !slices.Contains(r.violations, violation{"missing_where", "UPDATE"}) {
		t.Fatalf("updates without WHERE cleared: %v", r.violations)
	}
}

func FuzzScan(f *testing.F) {
	for _, s := range []string{"SELECT $$ x $$", "SELECT E'\\'' QUALIFY", "DO $a$ DROP $a$", "[x", "/* /* */", "DELETE (", "$1$"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		r := scanQuery(q)
		if len(r.ops) != len(r.replaces) {
			t.Fatalf("ops %d, replaces %d", len(r.ops), len(r.replaces))
		}
	})
}

// BenchmarkScan is the token scan's cost on text no grammar reads, 1 KB to the 256 KB MaxQueryBytes.
func BenchmarkScan(b *testing.B) {
	unit := "SELECT region, SUM(amount) OVER (PARTITION BY region ORDER BY day) FROM sales TABLESAMPLE (BUCKET 1 OUT OF 4 ON id) WHERE note <> 'x; DROP' QUALIFY 1 = 1;\n"
	for _, size := range []int{1 << 10, 64 << 10, 256 << 10} {
		q := strings.Repeat(unit, size/len(unit)+1)[:size]
		b.Run(strconv.Itoa(size>>10)+"KB", func(b *testing.B) {
			b.SetBytes(int64(len(q)))
			for b.Loop() {
				scanQuery(q)
			}
		})
	}
}
