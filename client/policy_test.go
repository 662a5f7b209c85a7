package client

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/guardrail-control/guard"
)

// TestUncompilableControlsAreEnforcedAndLogged: controls the server accepted but this process cannot
// compile still load; a missing evaluator follows its on_error, a broken action denies every step, and
// each such control is logged once at warn level with the agent and the control.
func TestUncompilableControlsAreEnforcedAndLogged(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(*guard.ControlData)
		wantDeny bool
	}{
		{"missing evaluator, on_error deny", func(d *guard.ControlData) { d.Condition.Evaluator.Name = "ext.missing" }, true},
		{"missing evaluator, on_error allow", func(d *guard.ControlData) {
			d.Condition.Evaluator.Name = "ext.missing"
			d.Condition.Evaluator.Config["on_error"] = "allow"
		}, false},
		{"stale config, on_error allow", func(d *guard.ControlData) {
			d.Condition.Evaluator.Config["pattern"] = "(unclosed"
			d.Condition.Evaluator.Config["on_error"] = "allow"
		}, false},
		{"broken action fails closed", func(d *guard.ControlData) { d.Action.Decision = "explode" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			broken := ctl(7, "broken", guard.ExecutionSDK, guard.DecisionDeny, "input", "never-in-the-input", guard.StagePost)
			tt.edit(&broken.Control)
			_, srv := newFakeAPI(t, broken, ctl(8, "fine", guard.ExecutionSDK, guard.DecisionDeny, "input", "secret"))
			core, logs := observer.New(zapcore.WarnLevel)
			cfg := testConfig(srv.URL)
			cfg.Log = LogConfig{}
			cfg.Logger = zap.New(core)
			a := initAgent(t, cfg)
			entries := logs.FilterMessageSnippet("does not compile").All()
			if len(entries) != 1 {
				t.Fatalf("%d logs of the broken control, want 1: %v", len(entries), logs.All())
			}
			fields := entries[0].ContextMap()
			if entries[0].Level != zapcore.WarnLevel || fields["agent"] != a.name || fields["control"] != "broken" ||
				fields["control_id"] != int64(7) || fields["source"] != SourceServer {
				t.Fatalf("log %v %v", entries[0].Level, fields)
			}
			var v *guard.ControlViolationError
			_, err := Protect(a, echo, StepName("s"))(context.Background(), "hello")
			if got := errors.As(err, &v); got != tt.wantDeny || (got && v.ControlName != "broken") {
				t.Fatalf("err %v, want a deny by the broken control %v", err, tt.wantDeny)
			}
			if !tt.wantDeny && err != nil {
				t.Fatal(err)
			}
			if _, err := Protect(a, echo, StepName("s"))(context.Background(), "secret"); !errors.As(err, &v) {
				t.Fatalf("the valid control is not enforced: %v", err)
			}
		})
	}
}
