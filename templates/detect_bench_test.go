package templates_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/templates"
)

// detectBenchText is 2 KB of ordinary agent text: prose with punctuation, a URL, a path, numbers and one
// percent sign and ampersand (so normalising detectors take their slow path), and nothing any detector
// template matches.
var detectBenchText = func() string {
	const para = "Thanks for the report. I checked the logs for order 4411 & the shipping notes at " +
		"https://shop.example.com/orders/4411?view=full, and the 20% discount was applied twice. The fix is in " +
		"/srv/app/billing.go; please run the tests again and tell me if the totals still differ. "
	return strings.Repeat(para, 2048/len(para)+1)[:2048]
}()

// detectBenchSQL is a 2 KB ordinary reporting query (joins, a CTE, subqueries, aggregates), in the SQL
// that MySQL's grammar reads, so that every dialect parses it once.
var detectBenchSQL = func() string {
	q := "WITH recent AS (SELECT customer_id, SUM(total) AS spent FROM orders WHERE created_at > '2024-01-01' GROUP BY customer_id) " +
		"SELECT c.id, c.name, c.email, r.spent, (SELECT COUNT(*) FROM tickets t WHERE t.customer_id = c.id AND t.status = 'open') AS open_tickets"
	for i := 0; len(q) < 1900; i++ {
		q += ", COALESCE(c.attr_" + strings.Repeat("x", i%7+1) + ", 'n/a') AS col_" + strconv.Itoa(i)
	}
	return q + " FROM customers c JOIN recent r ON r.customer_id = c.id WHERE c.region IN ('eu', 'us') ORDER BY r.spent DESC LIMIT 100"
}()

// BenchmarkDetectTemplate2KB evaluates each detector template (rendered with its defaults) through the
// engine on detectBenchText: the per-call cost of the template's condition on a 2 KB input.
func BenchmarkDetectTemplate2KB(b *testing.B) {
	for _, name := range []string{"sql-injection", "command-injection", "dangerous-uris", "prompt-injection",
		"system-prompt-extraction", "jailbreak-markers", "destructive-shell", "destructive-sql"} {
		tpl, ok := templates.Shipped().Get(name)
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			params := map[string]any{}
			if name == "destructive-sql" {
				params["tool_names"] = []any{"run_sql"}
			}
			r, err := tpl.Render(context.Background(), params)
			if err != nil {
				b.Fatal(err)
			}
			d := r.Data
			d.Enabled = true
			eng := guard.New(guard.WithExecution(guard.ExecutionServer, guard.ExecutionSDK))
			if err := eng.Update([]guard.Control{{ID: 1, Name: name, Data: d}}); err != nil {
				b.Fatal(err)
			}
			step := &guard.Step{Type: "llm", Name: "chat", Input: detectBenchText}
			if d.Scope.StepTypes != nil && d.Scope.StepTypes[0] == "tool" {
				step = &guard.Step{Type: "tool", Name: "shell", Input: detectBenchText}
			}
			if name == "destructive-sql" { // a database tool's 2 KB reporting query
				step = &guard.Step{Type: "tool", Name: "run_sql", Input: map[string]any{"query": detectBenchSQL}}
			}
			ctx := context.Background()
			res, err := eng.Evaluate(ctx, step, guard.StagePre)
			if err != nil || len(res.Matches) > 0 {
				b.Fatalf("the benign text matched or failed: %v %v", err, res.Matches)
			}
			// cpu-ns/op is the process's CPU time: collect the garbage of rendering and compiling first, so
			// that the collector's work on it does not land in the loop (larger patterns leave more of it).
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			for i := 0; i < b.N; i++ {
				if _, err := eng.Evaluate(ctx, step, guard.StagePre); err != nil {
					b.Fatal(err)
				}
			}
			if d := processCPU() - cpu; d > 0 {
				b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
