package observability

import (
	"testing"
	"time"

	"github.com/google/uuid"

	guard "github.com/guardrail-control/guard"
)

func TestEventsFromResultRecordsEveryEvaluatedControl(t *testing.T) {
	res := &guard.Result{
		Decision: guard.DecisionDeny,
		Matches: []guard.ControlResult{{ControlExecutionID: "6f1c1a43-4b0e-4a51-9d52-0d6f3c7b2a10", ControlID: 1, ControlName: "no-pii",
			Action: guard.DecisionDeny, Result: guard.EvaluatorResult{Matched: true, Confidence: 0.9, Metadata: map[string]any{"quote": "secret"}},
			EvaluatorName: "regex", SelectorPath: "input.query", Duration: 1500 * time.Microsecond}},
		Errors: []guard.ControlResult{{ControlID: 2, ControlName: "tox", Action: guard.DecisionObserve,
			Result: guard.EvaluatorResult{Error: "timeout"}, EvaluatorName: "ext.toxicity"}},
		NonMatches: []guard.ControlResult{{ControlExecutionID: "c2b8d5de-7d0e-44a9-8f0e-0a3a0c1f9e55", ControlID: 3, ControlName: "len",
			Action: guard.DecisionSteer}},
	}
	step := &guard.Step{Type: "tool", Name: "search"}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	events := EventsFromResult("agent-a", step, guard.StagePost, res, "trace-9", "span-9", now)
	if len(events) != 3 {
		t.Fatalf("%d events, want 3", len(events))
	}
	m, e, n := events[0], events[1], events[2]
	for _, ev := range events {
		if ev.AgentName != "agent-a" || ev.CheckStage != guard.StagePost || ev.StepType != "tool" || ev.StepName != "search" ||
			ev.TraceID != "trace-9" || ev.SpanID != "span-9" || ev.Source != SourceServer ||
			!ev.Timestamp.Equal(now) || ev.Timestamp.Location() != time.UTC || ev.Metadata != nil {
			t.Errorf("event = %+v", ev)
		}
		if _, err := uuid.Parse(ev.ControlExecutionID); err != nil {
			t.Errorf("execution id %q is not a UUID", ev.ControlExecutionID)
		}
	}
	if m.ControlExecutionID != res.Matches[0].ControlExecutionID || !m.Matched || m.Confidence != 0.9 || m.Action != guard.DecisionDeny ||
		m.EvaluatorName != "regex" || m.SelectorPath != "input.query" || m.ExecutionDurationMS == nil || *m.ExecutionDurationMS != 1.5 {
		t.Errorf("match event = %+v", m)
	}
	if e.Matched || e.ErrorMessage != "timeout" || e.Action != guard.DecisionObserve || e.ExecutionDurationMS != nil {
		t.Errorf("error event = %+v", e)
	}
	if n.Matched || n.ControlID != 3 || n.Action != guard.DecisionSteer {
		t.Errorf("non-match event = %+v", n)
	}
	if got := EventsFromResult("a", nil, guard.StagePre, nil, "", "", now); got != nil {
		t.Errorf("nil result gave %v", got)
	}
}

// TestEventsFromResultReason: the event of the control that refused the step carries the refusal's text
// (metadata.reason), the one the agent was told; no other event does, and the control's metadata is not
// modified.
func TestEventsFromResultReason(t *testing.T) {
	own := map[string]any{"team": "risk"}
	res := &guard.Result{Decision: guard.DecisionDeny, Reason: "no SSNs in prompts",
		Matches: []guard.ControlResult{
			{ControlID: 1, Action: guard.DecisionDeny, Result: guard.EvaluatorResult{Matched: true}},
			{ControlID: 2, Action: guard.DecisionObserve, Result: guard.EvaluatorResult{Matched: true}, Metadata: own},
		}}
	events := EventsFromResult("a", &guard.Step{Type: "llm", Name: "chat"}, guard.StagePre, res, "", "", time.Now())
	if got := events[0].Metadata["reason"]; got != "no SSNs in prompts" {
		t.Errorf("deciding event reason = %v", got)
	}
	if _, ok := events[1].Metadata["reason"]; ok {
		t.Errorf("a control that did not decide has a reason: %v", events[1].Metadata)
	}
	if len(own) != 1 {
		t.Errorf("the control's metadata was modified: %v", own)
	}
	allowed := &guard.Result{Decision: guard.DecisionAllow, Reason: "x",
		Matches: []guard.ControlResult{{ControlID: 1, Action: guard.DecisionAllow, Result: guard.EvaluatorResult{Matched: true}}}}
	if md := EventsFromResult("a", nil, guard.StagePre, allowed, "", "", time.Now())[0].Metadata; md != nil {
		t.Errorf("an allowed step's event has metadata %v", md)
	}
}
