package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

type fakeEvaluator struct{}

func (fakeEvaluator) Evaluate(_ context.Context, _ *evaluator.Data) (evaluator.Result, error) {
	return evaluator.Result{}, nil
}

// testRegistry has two fake evaluators: "fake" needs a string "pattern" that compiles with Go's regexp
// and accepts nothing else; "any" accepts every config.
func testRegistry() *evaluator.Registry {
	r := evaluator.NewRegistry()
	r.Register(evaluator.Factory{
		Name:         "fake",
		ConfigSchema: json.RawMessage(`{"type":"object"}`),
		New: func(config map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
			var fes []evaluator.FieldError
			for k := range config {
				if k != "pattern" {
					fes = append(fes, evaluator.FieldError{Field: k, Code: "unknown_field", Message: "unknown field"})
				}
			}
			switch pat, ok := config["pattern"].(string); {
			case config["pattern"] == nil:
				fes = append(fes, evaluator.FieldError{Field: "pattern", Code: "required", Message: "is required"})
			case !ok:
				fes = append(fes, evaluator.FieldError{Field: "pattern", Code: "type", Message: "must be a string"})
			default:
				if _, err := regexp.Compile(pat); err != nil {
					fes = append(fes, evaluator.FieldError{Field: "pattern", Code: "invalid_regex", Message: "is not a valid regular expression"})
				}
			}
			if len(fes) > 0 {
				return nil, &evaluator.ConfigError{Problems: fes}
			}
			return fakeEvaluator{}, nil
		},
	})
	r.Register(evaluator.Factory{
		Name:         "any",
		ConfigSchema: json.RawMessage(`{"type":"object"}`),
		New: func(map[string]any, evaluator.Options) (evaluator.Evaluator, error) {
			return fakeEvaluator{}, nil
		},
	})
	return r
}

const okLeaf = `{"selector":{"path":"input"},"evaluator":{"name":"fake","config":{"pattern":"x"}}}`

// withCond returns control data with the given condition and a deny action.
func withCond(cond string) string {
	return `{"condition":` + cond + `,"action":{"decision":"deny"}}`
}

func parse(t *testing.T, raw string, opts ...guard.ValidateOption) (guard.ControlData, []guard.Problem) {
	t.Helper()
	opts = append([]guard.ValidateOption{guard.WithValidationRegistry(testRegistry())}, opts...)
	d, err := guard.ParseControlData([]byte(raw), opts...)
	if err == nil {
		return d, nil
	}
	var ve *guard.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error is %T, want *guard.ValidationError: %v", err, err)
	}
	if len(ve.Problems) == 0 {
		t.Fatal("ValidationError without problems")
	}
	return d, ve.Problems
}

// keys renders problems as sorted "field:code" strings.
func keys(ps []guard.Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Field + ":" + p.Code
	}
	sort.Strings(out)
	return out
}

func TestParseControlDataProblems(t *testing.T) {
	deep := func(n int) string { // n nested "not" levels around a leaf: n+1 levels in all
		return strings.Repeat(`{"not":`, n) + okLeaf + strings.Repeat(`}`, n)
	}
	manyLeaves := func(n int) string {
		return `{"or":[` + strings.TrimSuffix(strings.Repeat(okLeaf+",", n), ",") + `]}`
	}
	tests := []struct {
		name string
		raw  string
		want []string // sorted field:code
	}{
		{"invalid json", `{"condition":`, []string{":invalid_json"}},
		{"trailing garbage", `{} x`, []string{":invalid_json"}},
		{"empty input", ``, []string{":invalid_json"}},
		{"not an object", `[1,2]`, []string{":type"}},
		{"string", `"deny"`, []string{":type"}},
		{"empty object", `{}`, []string{"action:required", "condition:required"}},
		{"unknown top-level field", `{"condition":` + okLeaf + `,"action":{"decision":"deny"},"colour":"red"}`, []string{"colour:unknown_field"}},
		{"wrong types", `{"description":1,"enabled":"yes","execution":true,"scope":[],"condition":` + okLeaf + `,"action":{"decision":"deny"},"tags":"a"}`,
			[]string{"description:type", "enabled:type", "execution:type", "scope:type", "tags:type"}},
		{"execution enum", `{"execution":"edge","condition":` + okLeaf + `,"action":{"decision":"deny"}}`, []string{"execution:enum"}},
		{"description too long", `{"description":"` + strings.Repeat("é", 4097) + `","condition":` + okLeaf + `,"action":{"decision":"deny"}}`, []string{"description:too_long"}},
		{"too many tags", `{"tags":[` + strings.TrimSuffix(strings.Repeat(`"t",`, 65), ",") + `],"condition":` + okLeaf + `,"action":{"decision":"deny"}}`, []string{"tags:too_long"}},
		{"bad tags", `{"tags":["ok","",1,"` + strings.Repeat("x", 65) + `"],"condition":` + okLeaf + `,"action":{"decision":"deny"}}`,
			[]string{"tags.1:empty", "tags.2:type", "tags.3:too_long"}},
		{"scope problems", `{"scope":{"stages":["pre","during"],"step_types":[],"step_names":[""],"step_name_regex":"(","when":1},"condition":` + okLeaf + `,"action":{"decision":"deny"}}`,
			[]string{"scope.stages.1:enum", "scope.step_name_regex:invalid_regex", "scope.step_names.0:empty", "scope.step_types:empty", "scope.when:unknown_field"}},
		{"empty stages", `{"scope":{"stages":[]},"condition":` + okLeaf + `,"action":{"decision":"deny"}}`, []string{"scope.stages:empty"}},
		{"look-around step_name_regex is not RE2", `{"scope":{"step_name_regex":"(?=a)"},"condition":` + okLeaf + `,"action":{"decision":"deny"}}`, []string{"scope.step_name_regex:invalid_regex"}},
		{"decision missing", `{"condition":` + okLeaf + `,"action":{}}`, []string{"action.decision:required"}},
		{"decision enum", `{"condition":` + okLeaf + `,"action":{"decision":"block"}}`, []string{"action.decision:enum"}},
		{"action not object", `{"condition":` + okLeaf + `,"action":"deny"}`, []string{"action:type"}},
		{"steer without context", `{"condition":` + okLeaf + `,"action":{"decision":"steer"}}`, []string{"action.steering_context:required"}},
		{"steer with empty message", `{"condition":` + okLeaf + `,"action":{"decision":"steer","steering_context":{"message":"  "}}}`, []string{"action.steering_context.message:required"}},
		{"steer without message", `{"condition":` + okLeaf + `,"action":{"decision":"steer","steering_context":{"required_actions":["x"]}}}`, []string{"action.steering_context.message:required"}},
		{"steering context fields", `{"condition":` + okLeaf + `,"action":{"decision":"steer","steering_context":{"message":"m","required_actions":"x","hint":1},"metadata":[]}}`,
			[]string{"action.metadata:type", "action.steering_context.hint:unknown_field", "action.steering_context.required_actions:type"}},
		{"node with two shapes", withCond(`{"and":[` + okLeaf + `],"or":[` + okLeaf + `]}`), []string{"condition:shape"}},
		{"leaf and not", withCond(`{"selector":{"path":"input"},"evaluator":{"name":"any"},"not":` + okLeaf + `}`), []string{"condition:shape"}},
		{"empty node", withCond(`{}`), []string{"condition:shape"}},
		{"node not object", withCond(`[]`), []string{"condition:type"}},
		{"empty and", withCond(`{"and":[]}`), []string{"condition.and:empty"}},
		{"or not a list", withCond(`{"or":{}}`), []string{"condition.or:type"}},
		{"nested problems", withCond(`{"and":[` + okLeaf + `,{"selector":{"path":"input"},"evaluator":{"name":"fake","config":{}}}, {"not":{"or":[]}}]}`),
			[]string{"condition.and.1.evaluator.config.pattern:required", "condition.and.2.not.or:empty"}},
		{"leaf without evaluator", withCond(`{"selector":{"path":"input"}}`), []string{"condition.evaluator:required"}},
		{"leaf without selector", withCond(`{"evaluator":{"name":"any"}}`), []string{"condition.selector:required"}},
		{"unknown field in node", withCond(`{"selector":{"path":"input"},"evaluator":{"name":"any"},"weight":2}`), []string{"condition.weight:unknown_field"}},
		{"selector path missing", withCond(`{"selector":{},"evaluator":{"name":"any"}}`), []string{"condition.selector.path:required"}},
		{"selector path type", withCond(`{"selector":{"path":3},"evaluator":{"name":"any"}}`), []string{"condition.selector.path:type"}},
		{"selector empty", withCond(`{"selector":{"path":""},"evaluator":{"name":"any"}}`), []string{"condition.selector.path:invalid_path"}},
		{"selector bad root", withCond(`{"selector":{"path":"inputs.query"},"evaluator":{"name":"any"}}`), []string{"condition.selector.path:invalid_path"}},
		{"selector empty segment", withCond(`{"selector":{"path":"input..a"},"evaluator":{"name":"any"}}`), []string{"condition.selector.path:invalid_path"}},
		{"selector trailing dot", withCond(`{"selector":{"path":"input."},"evaluator":{"name":"any"}}`), []string{"condition.selector.path:invalid_path"}},
		{"selector star not alone", withCond(`{"selector":{"path":"input.*"},"evaluator":{"name":"any"}}`), []string{"condition.selector.path:invalid_path"}},
		{"selector star root", withCond(`{"selector":{"path":"*.input"},"evaluator":{"name":"any"}}`), []string{"condition.selector.path:invalid_path"}},
		{"unknown evaluator", withCond(`{"selector":{"path":"input"},"evaluator":{"name":"nope","config":{}}}`), []string{"condition.evaluator.name:unknown_evaluator"}},
		{"evaluator name missing", withCond(`{"selector":{"path":"input"},"evaluator":{"config":{}}}`), []string{"condition.evaluator.name:required"}},
		{"evaluator config type", withCond(`{"selector":{"path":"input"},"evaluator":{"name":"fake","config":[]}}`), []string{"condition.evaluator.config:type"}},
		{"evaluator config errors", withCond(`{"selector":{"path":"input"},"evaluator":{"name":"fake","config":{"pattern":"(","extra":1}}}`),
			[]string{"condition.evaluator.config.extra:unknown_field", "condition.evaluator.config.pattern:invalid_regex"}},
		{"evaluator unknown field", withCond(`{"selector":{"path":"input"},"evaluator":{"name":"any","cfg":{}}}`), []string{"condition.evaluator.cfg:unknown_field"}},
		{"depth 7", withCond(deep(6)), []string{"condition" + strings.Repeat(".not", 6) + ":max_depth"}},
		{"depth 7 under and", withCond(`{"and":[` + deep(5) + `]}`), []string{"condition.and.0" + strings.Repeat(".not", 5) + ":max_depth"}},
		{"65 leaves", withCond(manyLeaves(65)), []string{"condition:max_leaves"}},
		{"legacy and condition", `{"selector":{"path":"input"},"evaluator":{"name":"any"},"condition":` + okLeaf + `,"action":{"decision":"deny"}}`, []string{"condition:conflict"}},
		{"legacy half", `{"selector":{"path":"input"},"action":{"decision":"deny"}}`, []string{"evaluator:required"}},
		{"legacy config error", `{"selector":{"path":"input"},"evaluator":{"name":"fake","config":{}},"action":{"decision":"deny"}}`, []string{"evaluator.config.pattern:required"}},
		{"legacy bad path", `{"selector":{"path":"foo"},"evaluator":{"name":"any"},"action":{"decision":"deny"}}`, []string{"selector.path:invalid_path"}},
		{"many problems at once", `{"enabled":1,"scope":{"stages":["x"]},"condition":{"and":[]},"action":{"decision":"steer"}}`,
			[]string{"action.steering_context:required", "condition.and:empty", "enabled:type", "scope.stages.0:enum"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps := parse(t, tt.raw)
			if got := keys(ps); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems = %v, want %v", got, tt.want)
			}
			for _, p := range ps {
				if p.Message == "" {
					t.Errorf("problem %s has no message", p.Field)
				}
			}
		})
	}
}

func TestParseControlDataAccepts(t *testing.T) {
	leaf := guard.Condition{
		Selector:  &guard.Selector{Path: "input"},
		Evaluator: &guard.EvaluatorSpec{Name: "fake", Config: map[string]any{"pattern": "x"}},
	}
	tests := []struct {
		name string
		raw  string
		want guard.ControlData
	}{
		{"defaults", withCond(okLeaf), guard.ControlData{
			Enabled: true, Execution: guard.ExecutionServer, Condition: leaf,
			Action: guard.Action{Decision: guard.DecisionDeny}, Tags: []string{},
		}},
		{"nulls are omitted", `{"description":null,"enabled":null,"execution":null,"scope":null,"tags":null,"condition":` + okLeaf + `,"action":{"decision":"deny","steering_context":null,"metadata":null}}`,
			guard.ControlData{Enabled: true, Execution: guard.ExecutionServer, Condition: leaf, Action: guard.Action{Decision: guard.DecisionDeny}, Tags: []string{}}},
		{"everything", `{"description":"d","enabled":false,"execution":"sdk","scope":{"step_types":["llm"],"step_names":["chat"],"step_name_regex":"^c","stages":["pre","post"]},` +
			`"condition":{"and":[` + okLeaf + `,{"not":{"selector":{"path":"*"},"evaluator":{"name":"any","metadata":{"k":1}}}}]},` +
			`"action":{"decision":"steer","steering_context":{"message":"m","required_actions":["a"]},"metadata":{"severity":"high"}},"tags":["pii"]}`,
			guard.ControlData{
				Description: "d", Enabled: false, Execution: guard.ExecutionSDK,
				Scope: guard.Scope{StepTypes: []string{"llm"}, StepNames: []string{"chat"}, StepNameRegex: "^c", Stages: []guard.Stage{guard.StagePre, guard.StagePost}},
				Condition: guard.Condition{And: []guard.Condition{leaf, {Not: &guard.Condition{
					Selector:  &guard.Selector{Path: "*"},
					Evaluator: &guard.EvaluatorSpec{Name: "any", Config: map[string]any{}, Metadata: map[string]any{"k": 1.0}},
				}}}},
				Action: guard.Action{Decision: guard.DecisionSteer, SteeringContext: &guard.SteeringContext{Message: "m", RequiredActions: []string{"a"}},
					Metadata: map[string]any{"severity": "high"}},
				Tags: []string{"pii"},
			}},
		{"observe is kept as written", `{"condition":` + okLeaf + `,"action":{"decision":"observe"}}`, guard.ControlData{
			Enabled: true, Execution: guard.ExecutionServer, Condition: leaf, Action: guard.Action{Decision: guard.DecisionObserve}, Tags: []string{},
		}},
		{"legacy form", `{"selector":{"path":"input"},"evaluator":{"name":"fake","config":{"pattern":"x"}},"action":{"decision":"deny"}}`, guard.ControlData{
			Enabled: true, Execution: guard.ExecutionServer, Condition: leaf, Action: guard.Action{Decision: guard.DecisionDeny}, Tags: []string{},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ps := parse(t, tt.raw)
			if ps != nil {
				t.Fatalf("unexpected problems %v", keys(ps))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParseControlDataLimitsAccepted(t *testing.T) {
	deep := strings.Repeat(`{"not":`, 5) + okLeaf + strings.Repeat(`}`, 5) // exactly 6 levels
	leaves := `{"or":[` + strings.TrimSuffix(strings.Repeat(okLeaf+",", 64), ",") + `]}`
	tags := `[` + strings.TrimSuffix(strings.Repeat(`"`+strings.Repeat("t", 64)+`",`, 64), ",") + `]`
	for name, raw := range map[string]string{
		"depth 6":     withCond(deep),
		"64 leaves":   withCond(leaves),
		"64 tags":     `{"tags":` + tags + `,"condition":` + okLeaf + `,"action":{"decision":"deny"}}`,
		"description": `{"description":"` + strings.Repeat("é", 4096) + `","condition":` + okLeaf + `,"action":{"decision":"deny"}}`,
		"deep config": withCond(`{"selector":{"path":"input"},"evaluator":{"name":"any","config":{"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}}}`),
	} {
		t.Run(name, func(t *testing.T) {
			if _, ps := parse(t, raw); ps != nil {
				t.Errorf("unexpected problems %v", keys(ps))
			}
		})
	}
}

func TestParseControlDataAllowUnknownEvaluators(t *testing.T) {
	raw := withCond(`{"selector":{"path":"input"},"evaluator":{"name":"ext.custom","config":{"anything":1}}}`)
	if _, ps := parse(t, raw, guard.AllowUnknownEvaluators()); ps != nil {
		t.Errorf("unexpected problems %v", keys(ps))
	}
	// A known evaluator's config is still checked.
	raw = withCond(`{"selector":{"path":"input"},"evaluator":{"name":"fake","config":{}}}`)
	_, ps := parse(t, raw, guard.AllowUnknownEvaluators())
	if got := keys(ps); !reflect.DeepEqual(got, []string{"condition.evaluator.config.pattern:required"}) {
		t.Errorf("problems = %v", got)
	}
}

func TestParseControlDataSkipEvaluatorConfigs(t *testing.T) {
	raw := withCond(`{"and":[{"selector":{"path":"input"},"evaluator":{"name":"fake","config":{}}},{"selector":{"path":"input"},"evaluator":{"name":"nope"}}]}`)
	_, ps := parse(t, raw, guard.SkipEvaluatorConfigs())
	if got := keys(ps); !reflect.DeepEqual(got, []string{"condition.and.1.evaluator.name:unknown_evaluator"}) {
		t.Errorf("problems = %v, want only the unknown name", got)
	}
}

func TestParseControlDataDeepNestingIsBounded(t *testing.T) {
	for _, n := range []int{100_000, 1_000_000} {
		for name, raw := range map[string]string{
			"arrays":        strings.Repeat("[", n) + strings.Repeat("]", n),
			"unterminated":  strings.Repeat("[", n),
			"not chain":     withCond(strings.Repeat(`{"not":`, n) + okLeaf + strings.Repeat(`}`, n)),
			"inside config": withCond(`{"selector":{"path":"input"},"evaluator":{"name":"any","config":{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}`),
		} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				_, ps := parse(t, raw)
				if got := keys(ps); !reflect.DeepEqual(got, []string{":max_depth"}) {
					t.Errorf("problems = %v, want [:max_depth]", got)
				}
			})
		}
	}
	// Brackets inside strings do not count.
	raw := withCond(`{"selector":{"path":"input"},"evaluator":{"name":"fake","config":{"pattern":"` + strings.Repeat(`[\"{`, 200) + `"}}}`)
	if _, ps := parse(t, raw); len(ps) != 1 || ps[0].Code != "invalid_regex" {
		t.Errorf("problems = %v, want only the pattern's invalid_regex", keys(ps))
	}
}

func TestParseControlDataProblemsAreBounded(t *testing.T) {
	raw := `{"scope":{"stages":[` + strings.TrimSuffix(strings.Repeat(`"x",`, 10_000), ",") + `]},"condition":` + okLeaf + `,"action":{"decision":"deny"}}`
	_, ps := parse(t, raw)
	if len(ps) != guard.MaxProblems {
		t.Errorf("got %d problems, want %d", len(ps), guard.MaxProblems)
	}
}

func TestParseControlDataDoesNotEchoValues(t *testing.T) {
	const secret = "sk-SECRET-123"
	raw := `{"description":` + fmt.Sprintf("%q", strings.Repeat(secret, 400)) + `,"execution":"` + secret + `","scope":{"stages":["` + secret + `"],"step_name_regex":"(` + secret + `"},` +
		`"condition":{"selector":{"path":"` + secret + `"},"evaluator":{"name":"` + secret + `"}},"action":{"decision":"` + secret + `"},"tags":["` + strings.Repeat(secret, 10) + `"]}`
	_, ps := parse(t, raw)
	if len(ps) < 7 {
		t.Fatalf("expected many problems, got %v", keys(ps))
	}
	for _, p := range ps {
		if strings.Contains(p.Message, "SECRET") || strings.Contains(p.Field, "SECRET") {
			t.Errorf("problem %+v echoes a client value", p)
		}
	}
	_, ps = parse(t, `{"a": "`+secret+`" x}`)
	if strings.Contains(ps[0].Message, "SECRET") {
		t.Errorf("JSON error %q echoes input", ps[0].Message)
	}
}

func TestValidate(t *testing.T) {
	reg := guard.WithValidationRegistry(testRegistry())
	leaf := guard.Condition{
		Selector:  &guard.Selector{Path: "input"},
		Evaluator: &guard.EvaluatorSpec{Name: "fake", Config: map[string]any{"pattern": "x"}},
	}
	good := guard.ControlData{Condition: leaf, Action: guard.Action{Decision: guard.DecisionDeny}}
	if err := good.Validate(reg); err != nil {
		t.Fatalf("zero-valued optional fields: %v", err)
	}
	if good.Enabled || good.Execution != "" || good.Tags != nil {
		t.Error("Validate modified its receiver")
	}
	observe := good
	observe.Action.Decision = guard.DecisionObserve
	if err := observe.Validate(reg); err != nil {
		t.Errorf("observe: %v", err)
	}

	bad := guard.ControlData{
		Execution: "edge",
		Scope:     guard.Scope{Stages: []guard.Stage{"during"}},
		Condition: guard.Condition{And: []guard.Condition{leaf, {Selector: &guard.Selector{Path: "x"}, Evaluator: &guard.EvaluatorSpec{Name: "fake", Config: map[string]any{"pattern": 1}}}, {}}},
		Action:    guard.Action{Decision: guard.DecisionSteer},
	}
	err := bad.Validate(reg)
	var ve *guard.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want *ValidationError", err)
	}
	want := []string{
		"action.steering_context:required", "condition.and.1.evaluator.config.pattern:type", "condition.and.1.selector.path:invalid_path",
		"condition.and.2:shape", "execution:enum", "scope.stages.0:enum",
	}
	if got := keys(ve.Problems); !reflect.DeepEqual(got, want) {
		t.Errorf("problems = %v\nwant %v", got, want)
	}

	var nilData *guard.ControlData
	if err := nilData.Validate(reg); !errors.As(err, &ve) {
		t.Errorf("nil data: %v", err)
	}
	unencodable := good
	unencodable.Action.Metadata = map[string]any{"ch": make(chan int)}
	if err := unencodable.Validate(reg); !errors.As(err, &ve) {
		t.Errorf("unencodable data: %v", err)
	}
}

func TestParseControlDataDefaultRegistry(t *testing.T) {
	// Without WithValidationRegistry the process-wide registry is used; a name nobody registers is unknown.
	_, err := guard.ParseControlData([]byte(withCond(`{"selector":{"path":"input"},"evaluator":{"name":"no.such.evaluator"}}`)))
	var ve *guard.ValidationError
	if !errors.As(err, &ve) || keys(ve.Problems)[0] != "condition.evaluator.name:unknown_evaluator" {
		t.Errorf("err = %v", err)
	}
}

func TestParseControlDataBuiltinsDoNotEchoValues(t *testing.T) {
	// With the real registry, evaluator config problems must not repeat config values either.
	const secret = "sk-SECRET-123"
	for _, cond := range []string{
		`{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"(` + secret + `","flags":["` + secret + `"]}}}`,
		`{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"(?<=` + secret + `","on_error":"` + secret + `"}}}`,
		`{"selector":{"path":"input"},"evaluator":{"name":"list","config":{"values":[" "],"logic":"` + secret + `","match_mode":"` + secret + `","` + secret + `":1}}}`,
	} {
		_, err := guard.ParseControlData([]byte(withCond(cond)))
		var ve *guard.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("err = %v, want *ValidationError", err)
		}
		for _, p := range ve.Problems {
			if strings.Contains(p.Message, "SECRET") {
				t.Errorf("problem %+v echoes a client value", p)
			}
		}
	}
}

func BenchmarkParseControlData(b *testing.B) {
	raw := []byte(`{"description":"block SSNs","scope":{"step_types":["llm"],"stages":["pre"]},"condition":{"or":[` +
		`{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"\\b\\d{3}-\\d{2}-\\d{4}\\b"}}},` +
		`{"selector":{"path":"input"},"evaluator":{"name":"list","config":{"values":["ssn","social security"],"match_mode":"contains"}}}]},` +
		`"action":{"decision":"deny","metadata":{"severity":"high"}},"tags":["pii"]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := guard.ParseControlData(raw); err != nil {
			b.Fatal(err)
		}
	}
}
