package main

import (
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
)

// TestEvaluationTimeoutConfig: EVALUATION_TIMEOUT_MS defaults to guard.DefaultEvaluationTimeout and is
// refused at start when it is not a positive whole number of milliseconds or would reach the HTTP write
// timeout (the client would get no answer at all).
func TestEvaluationTimeoutConfig(t *testing.T) {
	tests := []struct {
		value string
		want  time.Duration // 0: refused
	}{
		{"", guard.DefaultEvaluationTimeout},
		{"1", time.Millisecond},
		{"500", 500 * time.Millisecond},
		{"55000", 55 * time.Second},
		{"55001", 0},
		{"60000", 0},
		{"300000", 0},
		{"0", 0},
		{"-5", 0},
		{"1.5", 0},
		{"two", 0},
	}
	for _, tt := range tests {
		c, err := LoadConfig(env(map[string]string{"EVALUATION_TIMEOUT_MS": tt.value}))
		switch {
		case tt.want == 0 && (err == nil || !strings.Contains(err.Error(), "EVALUATION_TIMEOUT_MS")):
			t.Errorf("%q: error %v does not name EVALUATION_TIMEOUT_MS", tt.value, err)
		case tt.want != 0 && (err != nil || c.EvaluationTimeout != tt.want):
			t.Errorf("%q: %v, %v; want %v", tt.value, c.EvaluationTimeout, err, tt.want)
		}
	}
}
