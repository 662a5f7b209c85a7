package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// spanCounter (evaluator "needle", and "needle-ext", external) finds every occurrence of needle and counts how it is asked: Evaluate, Spans and
// EvaluateSpans each count under key+".eval", key+".spans" and key+".both". With lost, EvaluateSpans
// reports that its spans could not all be found.
type spanCounter struct {
	needle, key string
	lost        bool
}

func (s *spanCounter) find(text string) []evaluator.Span {
	var out []evaluator.Span
	for i := 0; ; {
		j := strings.Index(text[i:], s.needle)
		if j < 0 {
			return out
		}
		out = append(out, evaluator.Span{Start: i + j, End: i + j + len(s.needle), Type: "needle"})
		i += j + len(s.needle)
	}
}

func (s *spanCounter) Evaluate(_ context.Context, d *evaluator.Data) (evaluator.Result, error) {
	count(s.key + ".eval")
	return evaluator.Result{Matched: strings.Contains(d.Text, s.needle), Confidence: 1}, nil
}

func (s *spanCounter) Spans(_ context.Context, d *evaluator.Data) ([]evaluator.Span, error) {
	count(s.key + ".spans")
	return s.find(d.Text), nil
}

func (s *spanCounter) EvaluateSpans(_ context.Context, d *evaluator.Data) (evaluator.Result, evaluator.Found, error) {
	count(s.key + ".both")
	spans := s.find(d.Text)
	res := evaluator.Result{Matched: len(spans) > 0, Confidence: 1}
	if s.lost && len(spans) > 0 {
		return res, evaluator.Found{Err: errors.New("lost")}, nil
	}
	return res, evaluator.Found{Spans: spans}, nil
}

// RequiredLiterals makes the engine's prefilter skip a text without the needle.
func (s *spanCounter) RequiredLiterals() ([]string, bool, bool) {
	return []string{s.needle}, false, true
}

// spanOnly (evaluator "needle-only") is a spanCounter without Spans: only EvaluateSpans tells its spans.
type spanOnly struct{ c *spanCounter }

func (s spanOnly) Evaluate(ctx context.Context, d *evaluator.Data) (evaluator.Result, error) {
	return s.c.Evaluate(ctx, d)
}

func (s spanOnly) EvaluateSpans(ctx context.Context, d *evaluator.Data) (evaluator.Result, evaluator.Found, error) {
	return s.c.EvaluateSpans(ctx, d)
}

func spanCounterEngine(t *testing.T, controls ...guard.Control) *guard.Engine {
	t.Helper()
	reg := evaluator.NewRegistry()
	reg.Register(evaluator.Factory{Name: "needle", Version: "1", ConfigSchema: json.RawMessage(`{"type":"object"}`),
		New: func(c map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
			lost, _ := c["lost"].(bool)
			return &spanCounter{needle: c["needle"].(string), key: c["key"].(string), lost: lost}, nil
		}})
	reg.Register(evaluator.Factory{Name: "needle-ext", Version: "1", ConfigSchema: json.RawMessage(`{"type":"object"}`), External: true,
		New: func(c map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
			return &spanCounter{needle: c["needle"].(string), key: c["key"].(string)}, nil
		}})
	reg.Register(evaluator.Factory{Name: "needle-only", Version: "1", ConfigSchema: json.RawMessage(`{"type":"object"}`),
		New: func(c map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
			return spanOnly{&spanCounter{needle: c["needle"].(string), key: c["key"].(string)}}, nil
		}})
	eng := guard.New(guard.WithRegistry(reg))
	if err := eng.Update(controls); err != nil {
		t.Fatal(err)
	}
	return eng
}

func needleLeaf(path, needle, key string) guard.Condition {
	return guard.Condition{Selector: &guard.Selector{Path: path},
		Evaluator: &guard.EvaluatorSpec{Name: "needle", Config: map[string]any{"needle": needle, "key": key}}}
}

func needleControl(id int64, cond guard.Condition, redact bool) guard.Control {
	c := guard.Control{ID: id, Name: "needle", Data: guard.ControlData{Enabled: true, Condition: cond,
		Action: guard.Action{Decision: guard.DecisionWarn}}}
	if redact {
		c.Data.Action.Redact = &guard.Redaction{Replacement: "#"}
	}
	return c
}

// TestRedactSearchesOnce: a leaf of a redacting control whose evaluator implements SpanEvaluator is
// evaluated once, with EvaluateSpans, and the redaction uses what it found instead of asking Spans;
// leaves of other controls keep calling Evaluate. (Check never runs a redacting control: it stops
// before the decisions that let the step through.)
func TestRedactSearchesOnce(t *testing.T) {
	resetCalls()
	eng := spanCounterEngine(t,
		needleControl(1, needleLeaf("output", "pin", "r"), true),
		needleControl(2, needleLeaf("output", "pin", "plain"), false))
	step := guard.Step{Type: "llm", Name: "c", Output: "pin 1, pin 2"}
	res, err := eng.Evaluate(context.Background(), &step, guard.StagePost)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&guard.Redacted{Output: "# 1, # 2"}); !reflect.DeepEqual(res.Redacted, want) {
		t.Fatalf("redacted %+v, want %+v", res.Redacted, want)
	}
	for key, want := range map[string]int64{"r.both": 1, "r.spans": 0, "r.eval": 0, "plain.eval": 1, "plain.both": 0, "plain.spans": 0} {
		if got := calls(key); got != want {
			t.Errorf("%s called %d times, want %d", key, got, want)
		}
	}
}

// TestRedactSearchesWhatWasNotEvaluated: the redaction pass still searches the leaves the evaluation
// did not run (an or stopped at its first match), a leaf at the other stage's payload, and a selected
// object (each string on its own); it skips a leaf the prefilter rules out; spans that could not all be
// found replace the whole string.
func TestRedactSearchesWhatWasNotEvaluated(t *testing.T) {
	or := guard.Condition{Or: []guard.Condition{needleLeaf("output.text", "pin", "first"), needleLeaf("output.text", "code", "second"),
		needleLeaf("output.text", "absent", "filtered"), needleLeaf("input", "pin", "input")}}
	lost := needleLeaf("output.notes", "key", "lost")
	lost.Evaluator.Config["lost"] = true
	eng := spanCounterEngine(t,
		needleControl(1, or, true),
		needleControl(2, needleLeaf("output.list", "tok", "object"), true),
		needleControl(3, lost, true))
	step := guard.Step{Type: "llm", Name: "c", Input: "pin", Output: map[string]any{
		"text": "pin and code", "list": []any{"tok 1", "no"}, "notes": "the key is here"}}
	resetCalls()
	res, err := eng.Evaluate(context.Background(), &step, guard.StagePost)
	if err != nil {
		t.Fatal(err)
	}
	want := &guard.Redacted{Output: map[string]any{"text": "# and #", "list": []any{"# 1", "no"}, "notes": "#"}}
	if !reflect.DeepEqual(res.Redacted, want) {
		t.Fatalf("redacted %+v, want %+v", res.Redacted, want)
	}
	for key, want := range map[string]int64{
		"first.both": 1, "first.spans": 0, // evaluated once, its spans kept
		"second.both": 0, "second.spans": 1, // not evaluated (the or stopped): searched
		"filtered.both": 0, "filtered.spans": 0, // the prefilter rules it out: nothing to search
		"input.spans": 0, "input.both": 0, // not the payload at post
		"object.eval": 1, "object.both": 0, "object.spans": 2, // a list: evaluated as JSON, each string searched
		"lost.both": 1, "lost.spans": 0, // the whole string replaced, not searched again
	} {
		if got := calls(key); got != want {
			t.Errorf("%s called %d times, want %d", key, got, want)
		}
	}
}

// TestRedactSearchesOnceConcurrently: with an external evaluator the controls run concurrently; a local
// leaf of a redacting control still keeps its spans (evaluated in the control's goroutine, read after
// it), while an external leaf is never given EvaluateSpans and is searched by the redaction pass.
func TestRedactSearchesOnceConcurrently(t *testing.T) {
	ext := needleLeaf("output", "pin", "ext")
	ext.Evaluator.Name = "needle-ext"
	eng := spanCounterEngine(t,
		needleControl(1, guard.Condition{And: []guard.Condition{ext, needleLeaf("output", "code", "local")}}, true),
		needleControl(2, needleLeaf("output", "key", "main"), true))
	step := guard.Step{Type: "llm", Name: "c", Output: "pin, code, key"}
	resetCalls()
	res, err := eng.Evaluate(context.Background(), &step, guard.StagePost)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&guard.Redacted{Output: "#, #, #"}); !reflect.DeepEqual(res.Redacted, want) {
		t.Fatalf("redacted %+v, want %+v", res.Redacted, want)
	}
	for key, want := range map[string]int64{"ext.eval": 1, "ext.both": 0, "ext.spans": 1, "local.both": 1, "local.spans": 0, "main.both": 1, "main.spans": 0} {
		if got := calls(key); got != want {
			t.Errorf("%s called %d times, want %d", key, got, want)
		}
	}
}

// TestRedactWithEvaluateSpansOnly: an evaluator that implements SpanEvaluator and not Spanner still
// redacts where the evaluation did not give the spans (a selected object: each string is asked).
func TestRedactWithEvaluateSpansOnly(t *testing.T) {
	leaf := needleLeaf("output", "pin", "only")
	leaf.Evaluator.Name = "needle-only"
	eng := spanCounterEngine(t, needleControl(1, leaf, true))
	step := guard.Step{Type: "llm", Name: "c", Output: map[string]any{"a": "pin 1", "b": "none"}}
	resetCalls()
	res, err := eng.Evaluate(context.Background(), &step, guard.StagePost)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&guard.Redacted{Output: map[string]any{"a": "# 1", "b": "none"}}); !reflect.DeepEqual(res.Redacted, want) {
		t.Fatalf("redacted %+v, want %+v", res.Redacted, want)
	}
	if got := calls("only.both"); got != 2 {
		t.Errorf("EvaluateSpans called %d times, want 2 (once per string)", got)
	}
}
