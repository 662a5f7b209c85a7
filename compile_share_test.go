package guard

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// countEv is a distinct evaluator per build (not zero-sized, so that pointers to two differ).
type countEv struct{ n int64 }

func (*countEv) Evaluate(context.Context, *evaluator.Data) (evaluator.Result, error) {
	return evaluator.Result{Confidence: 1}, nil
}

// countingRegistry has "count" (a local evaluator that counts how often it is built) and "ext" (the same,
// external).
func countingRegistry(builds *atomic.Int64) *evaluator.Registry {
	r := evaluator.NewRegistry()
	for _, ext := range []bool{false, true} {
		name := "count"
		if ext {
			name = "ext"
		}
		r.Register(evaluator.Factory{Name: name, External: ext, ConfigSchema: []byte(`{"type":"object"}`),
			New: func(cfg map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
				builds.Add(1)
				return &countEv{n: builds.Load()}, nil
			}})
	}
	return r
}

// TestCompileSharesEqualConfigs: leaves with equal evaluator configurations are built once per
// compilation and share the evaluator; configurations that differ, even only in Go types, are built
// apart, and external evaluators are never shared.
func TestCompileSharesEqualConfigs(t *testing.T) {
	var builds atomic.Int64
	reg := countingRegistry(&builds)
	leafOf := func(ev string, cfg map[string]any) Condition {
		return Condition{Selector: &Selector{Path: "input"}, Evaluator: &EvaluatorSpec{Name: ev, Config: cfg}}
	}
	var controls []Control
	add := func(c Condition) {
		id := int64(len(controls) + 1)
		controls = append(controls, Control{ID: id, Name: "c" + strings.Repeat("x", int(id)), Data: ControlData{
			Enabled: true, Condition: c, Action: Action{Decision: DecisionDeny}}})
	}
	for i := 0; i < 100; i++ { // 100 controls, 2 configurations between them: 2 builds
		add(leafOf("count", map[string]any{"a": []any{"x", 1.0}, "b": map[string]any{"c": true}}))
		add(Condition{Or: []Condition{leafOf("count", map[string]any{"b": map[string]any{"c": true}, "a": []any{"x", 1.0}}),
			leafOf("count", map[string]any{"k": "v"})}})
	}
	add(leafOf("count", map[string]any{"a": []any{"x", 1}})) // int, not float64: apart
	add(leafOf("count", map[string]any{"a": []string{"x"}})) // []string, not []any: apart
	add(leafOf("count", map[string]any{"a": []any{"x"}}))    // apart
	add(leafOf("count", map[string]any{"a": "1:x"}))         // no collision with a length-prefixed string
	add(leafOf("ext", map[string]any{"k": "v"}))             // external: never shared
	add(leafOf("ext", map[string]any{"k": "v"}))
	cfg := engineConfig{registry: reg, executions: map[Execution]bool{ExecutionServer: true}}
	s, err := compile(controls, &cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := builds.Load(); got != 2+4+2 {
		t.Fatalf("%d builds, want 8", got)
	}
	// The shared leaves hold the same evaluator.
	first := s.controls[0].root.leaf.ev
	for i := 2; i < 200; i += 2 {
		if s.controls[i].root.leaf == nil || s.controls[i].root.leaf.ev != first {
			t.Fatalf("control %d does not share the evaluator", i)
		}
	}
}

// TestConfigKeyDeclines: values the key does not know, non-finite numbers and nesting past the limit are
// not keyed (their leaves are built apart).
func TestConfigKeyDeclines(t *testing.T) {
	var deep any = "x"
	for i := 0; i <= MaxJSONDepth+1; i++ {
		deep = []any{deep}
	}
	cyclic := []any{nil}
	cyclic[0] = cyclic
	for name, v := range map[string]any{"func": func() {}, "struct": struct{}{}, "float32": float32(1),
		"NaN": math.NaN(), "Inf": math.Inf(-1), "deep": deep, "cyclic": cyclic} {
		var sb strings.Builder
		if configKey(&sb, map[string]any{"v": v}, 0) {
			t.Errorf("%s: keyed", name)
		}
	}
}
