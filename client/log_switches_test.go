package client

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/guardrail-control/guard"
)

// Messages of the protect logger (agent_control.protect).
const (
	msgStepStarted = "step started"
	msgStepEnded   = "step ended"
	msgMatched     = "control matched"
	msgNoMatch     = "control did not match"
	msgWarnMatched = "warn control matched"
)

// loggedCall runs one protected call that deny-secret denies at pre (the engine stops there) and one call
// that passes both stages with a warning (warn-maybe matches at pre, deny-leak does not at post), with the given log
// configuration (and environment, set by the caller) and an observer at debug level. It returns the
// records of agent_control.protect and the total number of records.
func loggedCall(t *testing.T, lc LogConfig) (protect *observer.ObservedLogs, total int) {
	t.Helper()
	_, srv := newFakeAPI(t,
		ctl(1, "deny-secret", guard.ExecutionSDK, guard.DecisionDeny, "input", "secret", guard.StagePre),
		ctl(2, "warn-maybe", guard.ExecutionSDK, guard.DecisionWarn, "input", "maybe", guard.StagePre),
		ctl(3, "deny-leak", guard.ExecutionSDK, guard.DecisionDeny, "output", "LEAK", guard.StagePost),
	)
	core, logs := observer.New(zapcore.DebugLevel)
	cfg := testConfig(srv.URL)
	cfg.Log = lc
	cfg.Logger = zap.New(core)
	a := initAgent(t, cfg)
	p := Protect(a, echo, StepName("chat"), Policy("gold"))
	var v *guard.ControlViolationError
	if _, err := p(context.Background(), "maybe a secret"); !errors.As(err, &v) || v.ControlName != "deny-secret" {
		t.Fatalf("deny call: %v", err)
	}
	if out, err := p(context.Background(), "maybe later"); err != nil || out != "maybe later" {
		t.Fatalf("clean call: %q %v", out, err)
	}
	return logs.FilterLoggerName("agent_control.protect"), logs.Len()
}

func fieldsOf(e observer.LoggedEntry) map[string]any { return e.ContextMap() }

// clearLogEnv unsets the GUARD_LOG_* variables for the test (an empty value counts as unset).
func clearLogEnv(t *testing.T) {
	for _, k := range []string{EnvLogEnabled, EnvLogSpanStart, EnvLogSpanEnd, EnvLogControlEval} {
		t.Setenv(k, "")
	}
}

func TestLogSwitchesChangeWhatIsLogged(t *testing.T) {
	off := Bool(false)
	on := Bool(true)
	all := []string{msgStepStarted, msgStepEnded, msgMatched, msgNoMatch, msgWarnMatched}
	tests := []struct {
		name string
		lc   LogConfig
		env  map[string]string
		want []string // messages of agent_control.protect that must appear; the others of all must not
	}{
		{"defaults", LogConfig{}, nil, all},
		{"log_enabled off", LogConfig{Enabled: off}, nil, nil},
		{"log_span_start off", LogConfig{SpanStart: off}, nil, []string{msgStepEnded, msgMatched, msgNoMatch, msgWarnMatched}},
		{"log_span_end off", LogConfig{SpanEnd: off}, nil, []string{msgStepStarted, msgMatched, msgNoMatch, msgWarnMatched}},
		{"log_control_eval off", LogConfig{ControlEval: off}, nil, []string{msgStepStarted, msgStepEnded, msgWarnMatched}},
		{"spans off, control eval on", LogConfig{SpanStart: off, SpanEnd: off, ControlEval: on}, nil,
			[]string{msgMatched, msgNoMatch, msgWarnMatched}},
		{"GUARD_LOG_ENABLED=false", LogConfig{}, map[string]string{EnvLogEnabled: "false"}, nil},
		{"GUARD_LOG_SPAN_START=false", LogConfig{}, map[string]string{EnvLogSpanStart: "false"},
			[]string{msgStepEnded, msgMatched, msgNoMatch, msgWarnMatched}},
		{"GUARD_LOG_SPAN_END=0", LogConfig{}, map[string]string{EnvLogSpanEnd: "0"},
			[]string{msgStepStarted, msgMatched, msgNoMatch, msgWarnMatched}},
		{"GUARD_LOG_CONTROL_EVAL=false", LogConfig{}, map[string]string{EnvLogControlEval: "false"},
			[]string{msgStepStarted, msgStepEnded, msgWarnMatched}},
		{"the Config wins over the variable", LogConfig{Enabled: on, SpanStart: on}, map[string]string{EnvLogEnabled: "false", EnvLogSpanStart: "false"}, all},
	}
	clearLogEnv(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			logs, total := loggedCall(t, tt.lc)
			if tt.want == nil && total != 0 {
				t.Fatalf("%d records with logging off: %v", total, logs.All())
			}
			for _, m := range all {
				n := logs.FilterMessage(m).Len()
				if wanted := slices.Contains(tt.want, m); wanted != (n > 0) {
					t.Errorf("%q logged %d times, want it logged: %v", m, n, wanted)
				}
			}
		})
	}
}

// TestLogRecordsCarryTheirFields checks the levels and fields of each kind of record with every switch on.
func TestLogRecordsCarryTheirFields(t *testing.T) {
	clearLogEnv(t)
	logs, _ := loggedCall(t, LogConfig{})
	want := []struct {
		msg    string
		level  zapcore.Level
		fields map[string]any
	}{
		{msgStepStarted, zapcore.DebugLevel, map[string]any{"agent": "test-agent", "step_type": "llm", "step_name": "chat"}},
		{msgMatched, zapcore.InfoLevel, map[string]any{"agent": "test-agent", "step_name": "chat", "stage": "pre",
			"control_name": "deny-secret", "control_id": int64(1), "action": "deny", "policy": "gold"}},
		{msgWarnMatched, zapcore.WarnLevel, map[string]any{"control_name": "warn-maybe", "action": "warn", "stage": "pre"}},
		{msgNoMatch, zapcore.DebugLevel, map[string]any{"step_name": "chat", "stage": "post", "control_name": "deny-leak"}},
		{msgStepEnded, zapcore.DebugLevel, map[string]any{"step_name": "chat", "stage": "pre", "outcome": "denied"}},
		{msgStepEnded, zapcore.DebugLevel, map[string]any{"step_name": "chat", "stage": "post", "outcome": "ok"}},
	}
	for _, w := range want {
		found := false
		for _, e := range logs.FilterMessage(w.msg).All() {
			if e.Level != w.level || e.LoggerName != "agent_control.protect" {
				continue
			}
			fm := fieldsOf(e)
			ok := true
			for k, v := range w.fields {
				if fm[k] != v {
					ok = false
				}
			}
			if ok {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no %s record %q with %v among %v", w.level, w.msg, w.fields, logs.FilterMessage(w.msg).All())
		}
	}
	for _, e := range logs.FilterMessage(msgStepEnded).All() {
		if _, ok := fieldsOf(e)["duration"]; !ok {
			t.Errorf("step ended without a duration: %v", e.ContextMap())
		}
	}
}
