package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/store/storetest"
)

// shadowCounts reads shadow_evaluations_total by outcome from m's registry.
func shadowCounts(t *testing.T, m *observability.Metrics) map[string]float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "guard_shadow_evaluations_total" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == "outcome" {
					out[l.GetValue()] = mt.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// TestShadowSharesTheRequestDeadline: issue 23. With an enforced and a shadow control that both
// backtrack on a catastrophic input, POST /evaluation answered after two full deadlines (the shadow pass
// had a fresh context.WithTimeout). Now the shadow controls get what the enforced ones left of the one
// deadline. The elapsed bound is 2x the deadline: the old code took at least 2x by construction (two
// timers that never fire early), the new one takes the deadline plus scheduling, which a loaded machine
// stretches by far less than a second. The counter says what became of the shadow pass.
func TestShadowSharesTheRequestDeadline(t *testing.T) {
	const timeout = time.Second
	catastrophic := strings.Repeat("a", 40) + "c"
	tests := []struct {
		name     string
		enforced string // pattern of the enforced deny control
		outcomes []string
	}{
		// The enforced control spends the whole deadline: the shadow pass is skipped or cut.
		{"enforced spends the deadline", `^(?=(a+)+$)`, []string{observability.ShadowSkipped, observability.ShadowDeadline}},
		// The enforced control is quick: the shadow control runs on what is left and is cut.
		{"shadow spends the rest", `never-there`, []string{observability.ShadowDeadline}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := storetest.SQLite(t)
			m, err := observability.NewMetrics("guard")
			if err != nil {
				t.Fatal(err)
			}
			rec := observability.NewRecorder(st, observability.RecorderConfig{Metrics: m})
			t.Cleanup(func() { _ = rec.Close(context.Background()) })
			ts := newTSOn(t, st, WithMetrics(m), WithObservability(true, rec), WithEvaluationTimeout(timeout))
			ts.initAgent("shadowed")
			ts.link("shadowed", ts.createControl("enforced", regexData(tt.enforced, "deny")))
			sh := regexData(`^(?=(a+)+$)`, "deny")
			sh["mode"] = "shadow"
			ts.link("shadowed", ts.createControl("shadow", sh))

			start := time.Now()
			r := ts.do("POST", "/api/v1/evaluation", map[string]any{"agent_name": "shadowed", "stage": "pre",
				"step": map[string]any{"type": "llm", "name": "chat", "input": catastrophic}})
			elapsed := time.Since(start)
			if r.Code != 200 {
				t.Fatalf("status %d: %s", r.Code, r.Body)
			}
			if elapsed >= 2*timeout {
				t.Fatalf("answered after %v, a second deadline (%v) after the first", elapsed, timeout)
			}
			got := shadowCounts(t, m)
			total := 0.0
			for _, o := range tt.outcomes {
				total += got[o]
			}
			if total != 1 || got[observability.ShadowComplete] != 0 {
				t.Fatalf("shadow outcomes %v, want one of %v", got, tt.outcomes)
			}
		})
	}
}
