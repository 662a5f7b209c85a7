package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/capture"
	"github.com/guardrail-control/guard/store/storetest"
)

// benchControlData is the i-th of the benchmark's controls: a regex on input.text (most), on
// context.tenant (every tenth), denying or steering.
func benchControlData(i int, pattern string) map[string]any {
	path, decision := "input.text", "deny"
	if i%10 == 9 {
		path = "context.tenant"
	}
	if i%7 == 3 {
		decision = "warn"
	}
	return map[string]any{
		"enabled":   true,
		"condition": map[string]any{"selector": map[string]any{"path": path}, "evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": pattern}}},
		"action":    map[string]any{"decision": decision},
	}
}

// BenchmarkReplay measures POST /controls/replay end to end (loading the captured steps from SQLite,
// decoding them, compiling both engines, evaluating every step twice, diffing): 100,000 captured steps
// of one agent with 100 controls, a draft that tightens one control. The figure is in BENCHMARKS.md.
func BenchmarkReplay(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("steps=%d/controls=100", n), func(b *testing.B) { benchReplay(b, n, 100) })
	}
}

func benchReplay(b *testing.B, steps, controls int) {
	st := storetest.SQLite(b)
	ts := newTSOn(b, st, WithReplaySyncWait(10*time.Minute))
	ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "bot"}, "steps": []any{}})
	var first int64
	for i := range controls {
		c := ts.ok(200, "PUT", "/api/v1/controls", map[string]any{"name": "c" + strconv.Itoa(i),
			"data": benchControlData(i, fmt.Sprintf(`\bword%03d\b|secret-%d-[0-9]+`, i, i))})
		id := int64(c["control_id"].(float64))
		if i == 0 {
			first = id
		}
		ts.ok(200, "POST", fmt.Sprintf("/api/v1/agents/bot/controls/%d", id), nil)
	}
	now := time.Now()
	batch := make([]guard.CapturedStep, 0, 1000)
	for i := range steps {
		text := fmt.Sprintf("please look up order %d for the customer and summarise the answer politely", i)
		if i%50 == 0 {
			text += fmt.Sprintf(" word%03d", i%controls) // a match of one control in fifty steps
		}
		if i%97 == 0 {
			text += " drop everything" // what the draft's tightened control adds
		}
		body, _ := json.Marshal(guard.Step{Type: "llm", Name: "chat", Input: map[string]any{"text": text},
			Context: map[string]any{"tenant": "t" + strconv.Itoa(i%13), "user": "u" + strconv.Itoa(i%1000)}})
		batch = append(batch, guard.CapturedStep{AgentName: "bot", Stage: guard.StagePre, StepType: "llm", StepName: "chat",
			Step: body, Decision: guard.DecisionAllow, Source: "server", Time: now.Add(-time.Duration(steps-i) * time.Millisecond)})
		if len(batch) == cap(batch) || i == steps-1 {
			if err := st.InsertCapturedSteps(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	draft := map[string]any{"agent_name": "bot", "limit": steps, "controls": []any{map[string]any{"id": first,
		"data": benchControlData(0, `\bword000\b|secret-0-[0-9]+|drop everything`)}}}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for b.Loop() {
		r := ts.ok(200, "POST", "/api/v1/controls/replay", draft)
		res := r["result"].(map[string]any)
		if res["steps_replayed"] != float64(steps) || res["steps_changed"].(float64) == 0 {
			b.Fatalf("result %v", res)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(steps), "ns/step")
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkEvaluationCapture measures POST /evaluation with step capture off (the default) and on for the
// evaluated agent (the steps are written to SQLite in the background, as in production): what capture
// costs the request path.
func BenchmarkEvaluationCapture(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("capture=%v", on), func(b *testing.B) {
			st := storetest.SQLite(b)
			var opts []Option
			if on {
				rec, err := capture.New(st, capture.Config{Agents: []string{"bench"}, RedactPaths: []string{"context.user"}})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = rec.Close(context.Background()) })
				opts = append(opts, WithCapture(rec))
			}
			ts := newTSOn(b, st, opts...)
			ts.initAgent("bench")
			for i := range 10 {
				ts.link("bench", ts.createControl(fmt.Sprintf("c%d", i), regexData(fmt.Sprintf(`\bforbidden%d\b`, i), "deny")))
			}
			body := []byte(`{"agent_name":"bench","stage":"pre","step":{"type":"llm","name":"chat","input":"Please summarise the quarterly report for the team and list the three main risks.","context":{"user":"u-1"}}}`)
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				r := httptest.NewRequest("POST", "/api/v1/evaluation", bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				w := &discardWriter{h: make(http.Header, 4)}
				ts.srv.ServeHTTP(w, r)
				if w.code != 200 {
					b.Fatalf("status %d", w.code)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
