package observability

import (
	"fmt"
	"os"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
)

// TestMetricsPerAgentAndControlBounded: evaluations are counted per agent and decision, matches and
// errors per control; past the bounds the agents and controls share the series "_other", and the number
// of series stays within bound + 1 per second label.
func TestMetricsPerAgentAndControlBounded(t *testing.T) {
	m := mustMetrics(t)
	m.SetLabelBounds(2, 3)
	for i := 0; i < 5; i++ { // agents a0..a4: a0, a1 have series, the rest are _other
		agent := fmt.Sprintf("a%d", i)
		m.ObserveAgentEvaluation(agent, guard.DecisionDeny)
		m.ObserveAgentEvaluation(agent, guard.DecisionAllow)
	}
	m.ObserveAgentEvaluation("a0", guard.DecisionDeny)
	res := &guard.Result{Matches: []guard.ControlResult{{ControlID: 1, Action: guard.DecisionDeny}, {ControlID: 2, Action: guard.DecisionWarn}},
		Errors: []guard.ControlResult{{ControlID: 3}}, NonMatches: []guard.ControlResult{{ControlID: 9}}}
	m.ObserveResult(res)
	m.ObserveResult(&guard.Result{Matches: []guard.ControlResult{{ControlID: 4}, {ControlID: 5}, {ControlID: 1}}})
	fams := scrape(t, m)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"guard_agent_evaluations_total", map[string]string{"agent": "a0", "decision": "deny"}, 2},
		{"guard_agent_evaluations_total", map[string]string{"agent": "a1", "decision": "allow"}, 1},
		{"guard_agent_evaluations_total", map[string]string{"agent": "_other", "decision": "deny"}, 3},
		{"guard_agent_evaluations_total", map[string]string{"agent": "_other", "decision": "allow"}, 3},
		{"guard_control_results_total", map[string]string{"control_id": "1", "result": "match"}, 2},
		{"guard_control_results_total", map[string]string{"control_id": "3", "result": "error"}, 1},
		{"guard_control_results_total", map[string]string{"control_id": "_other", "result": "match"}, 2},
	} {
		if got := counterValue(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if n := len(fams["guard_agent_evaluations_total"].GetMetric()); n != 6 {
		t.Errorf("%d agent series, want 6 (2 agents + _other, 2 decisions)", n)
	}
	if s := sample(fams, "guard_control_results_total", map[string]string{"control_id": "9"}); s != nil {
		t.Error("a control that did not match has a series")
	}
}

// BenchmarkObserveAgentEvaluation is the per-agent counter on the evaluation path, once its series exists.
func BenchmarkObserveAgentEvaluation(b *testing.B) {
	m := mustMetrics(b)
	res := &guard.Result{Matches: []guard.ControlResult{{ControlID: 7, Action: guard.DecisionDeny}}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m.ObserveAgentEvaluation("support-bot", guard.DecisionDeny)
		m.observeControls(res)
	}
}

// TestEveryMetricFamilyDocumented: every family guard registers under its prefix is named in
// docs/operations.md "Metrics", so a new metric cannot go undocumented.
func TestEveryMetricFamilyDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	m := mustMetrics(t)
	m.SetBuildInfo("v", "r", "go")
	m.ObserveAgentEvaluation("a", guard.DecisionAllow)
	m.ObserveResult(&guard.Result{Matches: []guard.ControlResult{{ControlID: 1, EvaluatorName: "regex", Duration: 1}}})
	m.requests.WithLabelValues("/x", "GET", "200").Inc()
	m.requestDuration.WithLabelValues("/x", "GET").Observe(1)
	m.eventsReceived.Inc()
	m.eventsWritten.Inc()
	m.eventsRefused.Inc()
	m.rebuilds.Inc()
	n := 0
	for name := range scrape(t, m) {
		if !strings.HasPrefix(name, "guard_") {
			continue
		}
		n++
		if !strings.Contains(string(doc), "`"+name) {
			t.Errorf("%s is not in docs/operations.md", name)
		}
	}
	if n < 15 {
		t.Fatalf("only %d guard_ families scraped", n)
	}
}
