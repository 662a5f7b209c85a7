package server

import (
	"context"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// TestCompileDegradesAndLogs: a stored control that no longer compiles is logged at error level with the
// agent and the control, and enforced: a missing evaluator follows its on_error, a broken scope denies
// every step. Valid controls keep working, and controls the server does not run are not compiled.
func TestCompileDegradesAndLogs(t *testing.T) {
	agentControl := func(id int64, name string, d guard.ControlData) guard.AgentControl {
		d.Enabled = true
		return guard.AgentControl{ID: id, ControlID: id, Name: name, Enabled: true, Control: d}
	}
	leaf := func(name string, cfg map[string]any) guard.Condition {
		return guard.Condition{Selector: &guard.Selector{Path: "input"}, Evaluator: &guard.EvaluatorSpec{Name: name, Config: cfg}}
	}
	deny := guard.Action{Decision: guard.DecisionDeny}
	missing := agentControl(1, "missing-allow", guard.ControlData{Condition: leaf("ext.gone", map[string]any{"on_error": "allow"}), Action: deny})
	badScope := agentControl(2, "bad-scope", guard.ControlData{Scope: guard.Scope{StepNameRegex: "(", StepTypes: []string{"tool"}},
		Condition: leaf("regex", map[string]any{"pattern": "x"}), Action: guard.Action{Decision: guard.DecisionWarn}})
	fine := agentControl(3, "fine", guard.ControlData{Condition: leaf("regex", map[string]any{"pattern": "hello"}), Action: guard.Action{Decision: guard.DecisionWarn}})
	sdk := agentControl(4, "sdk-only", guard.ControlData{Execution: guard.ExecutionSDK, Condition: leaf("ext.client-side", nil), Action: deny})

	run := func(acs ...guard.AgentControl) (*guard.Result, *observer.ObservedLogs) {
		core, logs := observer.New(zapcore.InfoLevel)
		c := newEngineCache(nil, evaluator.Default, zap.New(core))
		res, err := c.compile("bot", acs).Evaluate(context.Background(), &guard.Step{Type: "llm", Name: "chat", Input: "hello"}, guard.StagePre)
		if err != nil {
			t.Fatal(err)
		}
		return res, logs
	}

	res, logs := run(missing, fine, sdk)
	if res.Decision != guard.DecisionAllow || len(res.Errors) != 1 || res.Errors[0].ControlName != "missing-allow" || len(res.Matches) != 1 {
		t.Fatalf("missing evaluator with on_error allow: %+v", res)
	}
	assertCompileLogs(t, logs, "missing-allow", int64(1))

	res, logs = run(missing, badScope, fine, sdk)
	if res.Decision != guard.DecisionDeny || len(res.Errors) != 2 || res.Errors[1].ControlName != "bad-scope" || !res.Errors[1].Result.Matched || len(res.Matches) != 1 {
		t.Fatalf("broken scope: %+v", res)
	}
	assertCompileLogs(t, logs, "missing-allow", int64(1), "bad-scope", int64(2))
}

// assertCompileLogs checks that logs hold exactly one error entry per (name, id) pair given, in order.
func assertCompileLogs(t *testing.T, logs *observer.ObservedLogs, want ...any) {
	t.Helper()
	all := logs.All()
	if len(all) != len(want)/2 {
		t.Fatalf("%d log entries, want %d: %v", len(all), len(want)/2, all)
	}
	for i, e := range all {
		f := e.ContextMap()
		if e.Level != zapcore.ErrorLevel || f["agent"] != "bot" || f["control"] != want[2*i] || f["control_id"] != want[2*i+1] || f["error"] == nil {
			t.Fatalf("log %d: %v %s %v", i, e.Level, e.Message, f)
		}
	}
}
