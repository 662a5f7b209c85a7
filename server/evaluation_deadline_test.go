package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestEvaluationDeadline: 70 controls whose look-around pattern backtracks until its 1 s timeout would
// take 70 s one after another (past the HTTP write timeout: no answer at all). With the request deadline
// the answer is a complete 200 in which every control is an evaluator error naming the deadline, and
// on_error (deny by default) decides.
func TestEvaluationDeadline(t *testing.T) {
	tests := []struct {
		name     string
		onError  string
		decision string
	}{
		{"fail closed by default", "", "deny"},
		{"fail open with on_error allow", "allow", "allow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTS(t, WithEvaluationTimeout(300*time.Millisecond))
			ts.initAgent("slow-agent")
			const n = 70
			for i := range n {
				data := regexData(`^(?=(a+)+$)`, "deny")
				if tt.onError != "" {
					cfg := data["condition"].(map[string]any)["evaluator"].(map[string]any)["config"].(map[string]any)
					cfg["on_error"] = tt.onError
				}
				ts.link("slow-agent", ts.createControl(fmt.Sprintf("slow-%d", i), data))
			}
			type answer struct {
				r *resp
			}
			done := make(chan answer, 1)
			go func() {
				done <- answer{ts.do("POST", "/api/v1/evaluation", map[string]any{"agent_name": "slow-agent", "stage": "pre",
					"step": map[string]any{"type": "llm", "name": "chat", "input": strings.Repeat("a", 40) + "c"}})}
			}()
			var r *resp
			select {
			case a := <-done:
				r = a.r
			case <-time.After(15 * time.Second):
				t.Fatal("no answer long after the evaluation deadline")
			}
			if r.Code != 200 {
				t.Fatalf("status %d: %s", r.Code, r.Body)
			}
			m := r.obj(t)
			errs, _ := m["errors"].([]any)
			if decision(m) != tt.decision || len(errs) != n {
				t.Fatalf("decision %s with %d errors: %.300s", decision(m), len(errs), r.Body)
			}
			for _, e := range errs {
				res := e.(map[string]any)["result"].(map[string]any)
				if res["error"] != "regex: "+guard.ErrEvaluationDeadline.Error() {
					t.Fatalf("error %v", res["error"])
				}
			}
		})
	}
}

func TestEvaluationTimeoutMustBePositive(t *testing.T) {
	st := storetest.SQLite(t)
	for _, d := range []time.Duration{0, -time.Second} {
		if _, err := New(st, WithEvaluationTimeout(d)); err == nil || !strings.Contains(err.Error(), "evaluation timeout") {
			t.Errorf("%v: %v", d, err)
		}
	}
}
