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

func TestRedactValidation(t *testing.T) {
	leaf := `{"selector":{"path":"output"},"evaluator":{"name":"regex","config":{"pattern":"x"}}}`
	tests := []struct {
		name   string
		action string
		want   []string // field:code, sorted; nil: valid
	}{
		{"warn with the default", `{"decision":"warn","redact":{}}`, nil},
		{"log with a replacement", `{"decision":"log","redact":{"replacement":"<{type}>"}}`, nil},
		{"observe", `{"decision":"observe","redact":{}}`, nil},
		{"allow", `{"decision":"allow","redact":{}}`, nil},
		{"null is no redaction", `{"decision":"deny","redact":null}`, nil},
		{"deny", `{"decision":"deny","redact":{}}`, []string{"action.redact:conflict"}},
		{"steer", `{"decision":"steer","steering_context":{"message":"m"},"redact":{}}`, []string{"action.redact:conflict"}},
		{"unknown field", `{"decision":"warn","redact":{"replacement":"x","mask":"*"}}`, []string{"action.redact.mask:unknown_field"}},
		{"not an object", `{"decision":"warn","redact":true}`, []string{"action.redact:type"}},
		{"empty replacement", `{"decision":"warn","redact":{"replacement":""}}`, []string{"action.redact.replacement:empty"}},
		{"replacement not a string", `{"decision":"warn","redact":{"replacement":1}}`, []string{"action.redact.replacement:type"}},
		{"replacement too long", `{"decision":"warn","redact":{"replacement":"` + strings.Repeat("é", 257) + `"}}`, []string{"action.redact.replacement:too_long"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := `{"condition":` + leaf + `,"action":` + tc.action + `}`
			d, err := guard.ParseControlData([]byte(raw))
			got := problemKeys(err)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("problems %v, want %v", got, tc.want)
			}
			if err != nil {
				return
			}
			// Go-built data validates the same way, and the wire form reads back as written.
			if err := d.Validate(); err != nil {
				t.Fatalf("Validate of the parsed data: %v", err)
			}
			b, _ := json.Marshal(d)
			back, err := guard.ParseControlData(b)
			if err != nil || !reflect.DeepEqual(back.Action, d.Action) {
				t.Fatalf("round trip %s: %+v %v", b, back.Action, err)
			}
		})
	}
	// A Go-built deny with redaction is refused by Validate too (both of its paths).
	d := guard.ControlData{Condition: guard.Condition{Selector: &guard.Selector{Path: "output"},
		Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": "x"}}},
		Action: guard.Action{Decision: guard.DecisionDeny, Redact: &guard.Redaction{}}}
	for _, opts := range [][]guard.ValidateOption{nil, {guard.SkipEvaluatorConfigs()}} {
		if got := problemKeys(d.Validate(opts...)); !reflect.DeepEqual(got, []string{"action.redact:conflict"}) {
			t.Errorf("Validate(%d options) = %v", len(opts), got)
		}
	}
}

// problemKeys lists the field:code of a *ValidationError's problems, sorted; nil for nil.
func problemKeys(err error) []string {
	if err == nil {
		return nil
	}
	var ve *guard.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var out []string
	for _, p := range ve.Problems {
		out = append(out, p.Field+":"+p.Code)
	}
	return out
}

// redactControl is a warn control with action.redact on one leaf.
func redactControl(id int64, path, evName string, config map[string]any, replacement string) guard.Control {
	return guard.Control{ID: id, Name: "redact-" + evName, Data: guard.ControlData{Enabled: true,
		Condition: guard.Condition{Selector: &guard.Selector{Path: path}, Evaluator: &guard.EvaluatorSpec{Name: evName, Config: config}},
		Action:    guard.Action{Decision: guard.DecisionWarn, Redact: &guard.Redaction{Replacement: replacement}}}}
}

type ticket struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

func TestRedactEngine(t *testing.T) {
	tests := []struct {
		name     string
		controls []guard.Control
		step     guard.Step
		stage    guard.Stage
		want     *guard.Redacted
	}{
		{"a Go struct output is redacted as the selectors see it",
			[]guard.Control{redactControl(1, "output.body", "regex", map[string]any{"pattern": `\d+`}, "#")},
			guard.Step{Type: "tool", Name: "t", Output: ticket{Title: "t 1", Body: "pin 42"}}, guard.StagePost,
			&guard.Redacted{Output: map[string]any{"title": "t 1", "body": "pin #"}}},
		{"a backtracking pattern's spans are byte offsets in non-ASCII text",
			[]guard.Control{redactControl(1, "input", "regex", map[string]any{"pattern": `(?<=née )\w+`}, "")},
			guard.Step{Type: "llm", Name: "c", Input: "Édith née Piaf, née Gassion"}, guard.StagePre,
			&guard.Redacted{Input: "Édith née [REDACTED:regex], née [REDACTED:regex]"}},
		{"the whole step selector redacts the stage's payload only",
			[]guard.Control{redactControl(1, "*", "regex", map[string]any{"pattern": `tok-\w+`}, "")},
			guard.Step{Type: "llm", Name: "c", Input: "tok-in", Output: []any{"tok-out", 1.0}, Context: map[string]any{"k": "tok-ctx"}}, guard.StagePost,
			&guard.Redacted{Output: []any{"[REDACTED:regex]", 1.0}}},
		{"input is not redacted at post",
			[]guard.Control{redactControl(1, "input", "regex", map[string]any{"pattern": `a`}, "")},
			guard.Step{Type: "llm", Name: "c", Input: "a", Output: "b"}, guard.StagePost, nil},
		{"an exact list value is redacted in every item that equals it",
			[]guard.Control{redactControl(1, "input", "list", map[string]any{"values": []any{"Top Secret"}}, "")},
			guard.Step{Type: "tool", Name: "c", Input: []any{"top secret", "TOP SECRET", "top secrets"}}, guard.StagePre,
			&guard.Redacted{Input: []any{"[REDACTED:list]", "[REDACTED:list]", "top secrets"}}},
		{"a list with match_on no_match redacts nothing",
			[]guard.Control{redactControl(1, "input", "list", map[string]any{"values": []any{"ok"}, "match_on": "no_match"}, "")},
			guard.Step{Type: "tool", Name: "c", Input: "not fine"}, guard.StagePre, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eng := guard.New()
			if err := eng.Update(tc.controls); err != nil {
				t.Fatal(err)
			}
			if !eng.Redacts() {
				t.Error("Redacts() = false with a redacting control")
			}
			before, _ := json.Marshal(tc.step)
			res, err := eng.Evaluate(context.Background(), &tc.step, tc.stage)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Redacted, tc.want) {
				got, _ := json.Marshal(res.Redacted)
				want, _ := json.Marshal(tc.want)
				t.Errorf("redacted %s, want %s", got, want)
			}
			if after, _ := json.Marshal(tc.step); string(after) != string(before) {
				t.Errorf("the step changed: %s, was %s", after, before)
			}
		})
	}
}

// failingSpanner matches every non-empty text but cannot find its spans.
type failingSpanner struct{}

func (failingSpanner) Evaluate(_ context.Context, d *evaluator.Data) (evaluator.Result, error) {
	return evaluator.Result{Matched: d.Text != "", Confidence: 1}, nil
}

func (failingSpanner) Spans(context.Context, *evaluator.Data) ([]evaluator.Span, error) {
	return nil, errors.New("lost")
}

// TestRedactFailsClosed: an evaluator that cannot say where it found something has the whole string
// replaced, never left as it was.
func TestRedactFailsClosed(t *testing.T) {
	reg := evaluator.NewRegistry()
	reg.Register(evaluator.Factory{Name: "lost", Version: "1", ConfigSchema: json.RawMessage(`{"type":"object"}`),
		New: func(map[string]any, evaluator.Options) (evaluator.Evaluator, error) { return failingSpanner{}, nil }})
	eng := guard.New(guard.WithRegistry(reg))
	if err := eng.Update([]guard.Control{redactControl(1, "output", "lost", map[string]any{}, "")}); err != nil {
		t.Fatal(err)
	}
	step := guard.Step{Type: "llm", Name: "c", Output: map[string]any{"a": "secret", "b": ""}}
	res, err := eng.Evaluate(context.Background(), &step, guard.StagePost)
	if err != nil {
		t.Fatal(err)
	}
	want := &guard.Redacted{Output: map[string]any{"a": "[REDACTED:lost]", "b": ""}}
	if !reflect.DeepEqual(res.Redacted, want) {
		t.Fatalf("redacted %+v, want %+v", res.Redacted, want)
	}
}

// TestRedactShadowAndCheck: a shadow control never redacts, and an engine without redacting controls
// says so.
func TestRedactShadowAndCheck(t *testing.T) {
	ctl := redactControl(1, "output", "regex", map[string]any{"pattern": "s"}, "")
	ctl.Data.Mode = guard.ModeShadow
	eng := guard.New()
	if err := eng.Update([]guard.Control{ctl}); err != nil {
		t.Fatal(err)
	}
	if eng.Redacts() {
		t.Error("Redacts() = true with only a shadow control")
	}
	step := guard.Step{Type: "llm", Name: "c", Output: "s"}
	res, err := eng.EvaluateShadow(context.Background(), &step, guard.StagePost)
	if err != nil || res == nil {
		t.Fatalf("EvaluateShadow: %v %v", res, err)
	}
	if len(res.Matches) != 1 || res.Redacted != nil {
		t.Errorf("shadow result: matches %d, redacted %+v", len(res.Matches), res.Redacted)
	}
}
