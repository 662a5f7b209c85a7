package guard_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// Fake evaluators for engine tests, registered in a private registry.
//
//	contains  {needle, fold?, confidence?, message?, nofilter?, key?}: matches when the text contains
//	          needle (ASCII case-insensitively with fold); a Prefilter unless nofilter.
//	const     {matched, confidence?, key?}: a fixed result.
//	fail      {key?, message?}: always an error ("boom" unless message says otherwise).
//	sleep     {matched, sleep_ms, key?}: external; waits sleep_ms or until its context is done.
//
// key names a counter in fakeCalls, incremented on every Evaluate call.

var fakeCalls sync.Map // key -> *atomic.Int64

func calls(key string) int64 {
	v, _ := fakeCalls.LoadOrStore(key, new(atomic.Int64))
	return v.(*atomic.Int64).Load()
}

func resetCalls() {
	fakeCalls.Range(func(k, _ any) bool { fakeCalls.Delete(k); return true })
}

func count(key string) {
	if key == "" {
		return
	}
	v, _ := fakeCalls.LoadOrStore(key, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// cancelled receives the key of a sleep evaluator whose context ended before its sleep did.
var cancelled = make(chan string, 100)

type containsEval struct {
	needle, key, msg string
	fold             bool
	conf             float64
}

func (c *containsEval) Evaluate(_ context.Context, d *evaluator.Data) (evaluator.Result, error) {
	count(c.key)
	if d.IsNull() {
		return evaluator.Result{Confidence: 1}, nil
	}
	text, needle := d.Text, c.needle
	if c.fold {
		text, needle = strings.ToLower(text), strings.ToLower(needle)
	}
	if strings.Contains(text, needle) {
		return evaluator.Result{Matched: true, Confidence: c.conf, Message: c.msg}, nil
	}
	return evaluator.Result{Confidence: c.conf}, nil
}

// RequiredLiterals makes containsEval a Prefilter.
func (c *containsEval) RequiredLiterals() ([]string, bool, bool) {
	return []string{c.needle}, c.fold, true
}

// unfiltered hides the Prefilter of the evaluator it wraps.
type unfiltered struct{ ev evaluator.Evaluator }

func (u unfiltered) Evaluate(ctx context.Context, d *evaluator.Data) (evaluator.Result, error) {
	return u.ev.Evaluate(ctx, d)
}

type constEval struct {
	matched bool
	conf    float64
	key     string
}

func (c *constEval) Evaluate(context.Context, *evaluator.Data) (evaluator.Result, error) {
	count(c.key)
	return evaluator.Result{Matched: c.matched, Confidence: c.conf}, nil
}

type failEval struct{ key, msg string }

func (f *failEval) Evaluate(context.Context, *evaluator.Data) (evaluator.Result, error) {
	count(f.key)
	if f.msg != "" {
		return evaluator.Result{}, errors.New(f.msg)
	}
	return evaluator.Result{}, errors.New("boom")
}

type sleepEval struct {
	matched bool
	sleep   time.Duration
	key     string
}

func (s *sleepEval) Evaluate(ctx context.Context, _ *evaluator.Data) (evaluator.Result, error) {
	count(s.key)
	t := time.NewTimer(s.sleep)
	defer t.Stop()
	select {
	case <-t.C:
		return evaluator.Result{Matched: s.matched, Confidence: 1}, nil
	case <-ctx.Done():
		cancelled <- s.key
		return evaluator.Result{}, ctx.Err()
	}
}

func str(cfg map[string]any, k string) string   { s, _ := cfg[k].(string); return s }
func boolean(cfg map[string]any, k string) bool { b, _ := cfg[k].(bool); return b }
func num(cfg map[string]any, k string, def float64) float64 {
	if f, ok := cfg[k].(float64); ok {
		return f
	}
	return def
}

func fakeRegistry() *evaluator.Registry {
	r := evaluator.NewRegistry()
	schema := []byte(`{"type": "object"}`)
	r.Register(evaluator.Factory{Name: "contains", ConfigSchema: schema, New: func(cfg map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
		ev := &containsEval{needle: str(cfg, "needle"), fold: boolean(cfg, "fold"), conf: num(cfg, "confidence", 1), msg: str(cfg, "message"), key: str(cfg, "key")}
		if boolean(cfg, "nofilter") {
			return unfiltered{ev}, nil
		}
		return ev, nil
	}})
	r.Register(evaluator.Factory{Name: "const", ConfigSchema: schema, New: func(cfg map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
		return &constEval{matched: boolean(cfg, "matched"), conf: num(cfg, "confidence", 1), key: str(cfg, "key")}, nil
	}})
	r.Register(evaluator.Factory{Name: "fail", ConfigSchema: schema, New: func(cfg map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
		return &failEval{key: str(cfg, "key"), msg: str(cfg, "message")}, nil
	}})
	r.Register(evaluator.Factory{Name: "sleep", ConfigSchema: schema, External: true, New: func(cfg map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
		return &sleepEval{matched: boolean(cfg, "matched"), sleep: time.Duration(num(cfg, "sleep_ms", 0)) * time.Millisecond, key: str(cfg, "key")}, nil
	}})
	return r
}

// leaf builds a leaf condition.
func leaf(path, name string, cfg map[string]any) guard.Condition {
	if cfg == nil {
		cfg = map[string]any{}
	}
	return guard.Condition{Selector: &guard.Selector{Path: path}, Evaluator: &guard.EvaluatorSpec{Name: name, Config: cfg}}
}

func and(cs ...guard.Condition) guard.Condition { return guard.Condition{And: cs} }
func or(cs ...guard.Condition) guard.Condition  { return guard.Condition{Or: cs} }
func not(c guard.Condition) guard.Condition     { return guard.Condition{Not: &c} }

// ctl builds an enabled server control.
func ctl(id int64, decision guard.Decision, cond guard.Condition) guard.Control {
	a := guard.Action{Decision: decision}
	if decision == guard.DecisionSteer {
		a.SteeringContext = &guard.SteeringContext{Message: "steer " + string(rune('a'+id%26)), RequiredActions: []string{"ask"}}
	}
	return guard.Control{ID: id, Name: "c" + itoa(id), Data: guard.ControlData{Enabled: true, Execution: guard.ExecutionServer, Condition: cond, Action: a}}
}

func itoa(i int64) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func has(needle string) guard.Condition {
	return leaf("input", "contains", map[string]any{"needle": needle})
}

func constLeaf(matched bool, conf float64, key string) guard.Condition {
	return leaf("input", "const", map[string]any{"matched": matched, "confidence": conf, "key": key})
}

func newEngine(t interface {
	Helper()
	Fatal(...any)
}, controls ...guard.Control) *guard.Engine {
	t.Helper()
	e := guard.New(guard.WithRegistry(fakeRegistry()))
	if err := e.Update(controls); err != nil {
		t.Fatal(err)
	}
	return e
}
