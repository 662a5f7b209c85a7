package guard

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/internal/cases"
)

// validateBoth validates d with the decoded form built directly (Validate, SkipEvaluatorConfigs) and by
// the JSON round trip, and fails when the problems differ.
func validateBoth(t *testing.T, what string, d ControlData, extra ...ValidateOption) {
	t.Helper()
	opts := append([]ValidateOption{SkipEvaluatorConfigs()}, extra...)
	got := d.Validate(opts...)
	c := d
	if c.Execution == "" {
		c.Execution = ExecutionServer
	}
	want := validateByJSON(&c, opts)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\ndirect:     %v\nround trip: %v", what, got, want)
	}
}

// TestValidateTreeMatchesJSON: on the corpus's control data and on mutations of it that break every rule
// validation checks (and values the round trip changes or cannot encode), Validate reports exactly what
// the JSON round trip reports.
func TestValidateTreeMatchesJSON(t *testing.T) {
	files, err := cases.Load("testdata/cases")
	if err != nil {
		t.Fatal(err)
	}
	var base []ControlData
	for _, f := range files {
		for _, c := range f.Cases {
			for _, ctl := range c.Controls {
				if d, err := ParseControlData(ctl.Data, AllowUnknownEvaluators()); err == nil {
					base = append(base, d)
				}
			}
		}
	}
	if len(base) < 50 {
		t.Fatalf("only %d corpus controls", len(base))
	}
	r := rand.New(rand.NewPCG(11, 12))
	checked := 0
	for i, d := range base {
		if c := d; func() bool {
			b := treeBuilders.Get().(*treeBuilder)
			defer b.release()
			_, ok := b.dataTree(&c)
			return !ok
		}() {
			t.Fatalf("corpus %d: the direct path declines a plain control", i)
		}
		validateBoth(t, fmt.Sprintf("corpus %d", i), d)
		validateBoth(t, fmt.Sprintf("corpus %d, unknown evaluators allowed", i), d, AllowUnknownEvaluators())
		for k := 0; k < 12; k++ {
			m := cloneData(t, d)
			name := mutateData(r, &m)
			validateBoth(t, fmt.Sprintf("corpus %d mutated: %s", i, name), m)
			checked++
		}
	}
	for k, name := range dataMutations {
		d := cloneData(t, base[0])
		dataMutators[k](&d)
		validateBoth(t, "every mutation: "+name, d)
	}
	t.Logf("%d corpus controls, %d mutations", len(base), checked)
}

func cloneData(t *testing.T, d ControlData) ControlData {
	t.Helper()
	raw, err := json.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseControlData(raw, AllowUnknownEvaluators())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mutateData(r *rand.Rand, d *ControlData) string {
	k := r.IntN(len(dataMutators))
	dataMutators[k](d)
	return dataMutations[k]
}

// firstLeaf returns the first leaf of d's condition (nil when there is none).
func firstLeafOf(c *Condition) *Condition {
	switch {
	case c.IsLeaf():
		return c
	case len(c.And) > 0:
		return firstLeafOf(&c.And[0])
	case len(c.Or) > 0:
		return firstLeafOf(&c.Or[0])
	case c.Not != nil:
		return firstLeafOf(c.Not)
	}
	return nil
}

func withLeaf(d *ControlData, f func(l *Condition)) {
	if l := firstLeafOf(&d.Condition); l != nil {
		f(l)
	}
}

func deepAny(n int) any {
	var v any = "x"
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			v = []any{v}
		} else {
			v = map[string]any{"k": v}
		}
	}
	return v
}

func nestNot(c Condition, n int) Condition {
	for i := 0; i < n; i++ {
		inner := c
		c = Condition{Not: &inner}
	}
	return c
}

var dataMutations, dataMutators = func() ([]string, []func(*ControlData)) {
	var names []string
	var fs []func(*ControlData)
	add := func(name string, f func(*ControlData)) { names = append(names, name); fs = append(fs, f) }
	add("invalid UTF-8 description", func(d *ControlData) { d.Description = "bad \xff" })
	add("long description", func(d *ControlData) { d.Description = strings.Repeat("é", MaxDescriptionLength+1) })
	add("invalid UTF-8 regex", func(d *ControlData) { d.Scope.StepNameRegex = "a\xffb" })
	add("bad regex", func(d *ControlData) { d.Scope.StepNameRegex = "(" })
	add("long regex", func(d *ControlData) { d.Scope.StepNameRegex = strings.Repeat("a", MaxStepNameRegexLength+1) })
	add("empty step types", func(d *ControlData) { d.Scope.StepTypes = []string{} })
	add("blank step type", func(d *ControlData) { d.Scope.StepTypes = []string{" "} })
	add("empty step names", func(d *ControlData) { d.Scope.StepNames = []string{} })
	add("bad stage", func(d *ControlData) { d.Scope.Stages = []Stage{"mid"} })
	add("empty stages", func(d *ControlData) { d.Scope.Stages = []Stage{} })
	add("bad execution", func(d *ControlData) { d.Execution = "edge" })
	add("nil tags", func(d *ControlData) { d.Tags = nil })
	add("empty tag", func(d *ControlData) { d.Tags = []string{""} })
	add("too many tags", func(d *ControlData) { d.Tags = strings.Split(strings.Repeat("t,", MaxTags+1), ",") })
	add("invalid UTF-8 tag", func(d *ControlData) { d.Tags = []string{"\xfe"} })
	add("no decision", func(d *ControlData) { d.Action.Decision = "" })
	add("bad decision", func(d *ControlData) { d.Action.Decision = "block" })
	add("steer without context", func(d *ControlData) { d.Action = Action{Decision: DecisionSteer} })
	add("steer, empty message", func(d *ControlData) {
		d.Action = Action{Decision: DecisionSteer, SteeringContext: &SteeringContext{RequiredActions: []string{""}}}
	})
	add("empty action metadata", func(d *ControlData) { d.Action.Metadata = map[string]any{} })
	add("NaN in action metadata", func(d *ControlData) { d.Action.Metadata = map[string]any{"x": math.NaN()} })
	add("func in action metadata", func(d *ControlData) { d.Action.Metadata = map[string]any{"x": func() {}} })
	add("deep action metadata", func(d *ControlData) { d.Action.Metadata = map[string]any{"x": deepAny(MaxJSONDepth)} })
	add("action metadata at the depth limit", func(d *ControlData) { d.Action.Metadata = map[string]any{"x": deepAny(MaxJSONDepth - 3)} })
	add("action metadata one past the limit", func(d *ControlData) { d.Action.Metadata = map[string]any{"x": deepAny(MaxJSONDepth - 2)} })
	add("cyclic metadata", func(d *ControlData) {
		l := []any{nil}
		l[0] = l
		d.Action.Metadata = map[string]any{"x": l}
	})
	add("empty condition", func(d *ControlData) { d.Condition = Condition{} })
	add("empty and", func(d *ControlData) { d.Condition = Condition{And: []Condition{}} })
	add("leaf and and", func(d *ControlData) {
		l := firstLeafOf(&d.Condition)
		if l != nil {
			d.Condition = Condition{Selector: l.Selector, Evaluator: l.Evaluator, And: []Condition{*l}}
		}
	})
	add("too deep", func(d *ControlData) { d.Condition = nestNot(d.Condition, MaxConditionDepth) })
	add("too many leaves", func(d *ControlData) {
		if l := firstLeafOf(&d.Condition); l != nil {
			or := make([]Condition, MaxConditionLeaves+1)
			for i := range or {
				or[i] = *l
			}
			d.Condition = Condition{Or: or}
		}
	})
	add("no selector", func(d *ControlData) { withLeaf(d, func(l *Condition) { l.Selector = nil }) })
	add("no evaluator", func(d *ControlData) { withLeaf(d, func(l *Condition) { l.Evaluator = nil }) })
	add("bad path", func(d *ControlData) { withLeaf(d, func(l *Condition) { l.Selector = &Selector{Path: "inputs.x"} }) })
	add("invalid UTF-8 path", func(d *ControlData) { withLeaf(d, func(l *Condition) { l.Selector = &Selector{Path: "input.\xff"} }) })
	add("unknown evaluator", func(d *ControlData) {
		withLeaf(d, func(l *Condition) { l.Evaluator = &EvaluatorSpec{Name: "nope", Config: map[string]any{}} })
	})
	add("empty evaluator name", func(d *ControlData) { withLeaf(d, func(l *Condition) { l.Evaluator = &EvaluatorSpec{} }) })
	add("nil config", func(d *ControlData) {
		withLeaf(d, func(l *Condition) { e := *l.Evaluator; e.Config = nil; l.Evaluator = &e })
	})
	add("config with Inf and a channel", func(d *ControlData) {
		withLeaf(d, func(l *Condition) {
			e := *l.Evaluator
			e.Config = map[string]any{"pattern": "x", "v": math.Inf(1), "c": make(chan int)}
			l.Evaluator = &e
		})
	})
	add("config with ints and []string", func(d *ControlData) {
		withLeaf(d, func(l *Condition) {
			e := *l.Evaluator
			e.Config = map[string]any{"values": []string{"a"}, "timeout_ms": 5, "n": int64(7)}
			l.Evaluator = &e
		})
	})
	add("deep config", func(d *ControlData) {
		withLeaf(d, func(l *Condition) {
			e := *l.Evaluator
			e.Config = map[string]any{"x": deepAny(MaxJSONDepth)}
			l.Evaluator = &e
		})
	})
	add("empty evaluator metadata", func(d *ControlData) {
		withLeaf(d, func(l *Condition) { e := *l.Evaluator; e.Metadata = map[string]any{}; l.Evaluator = &e })
	})
	add("struct in evaluator metadata", func(d *ControlData) {
		withLeaf(d, func(l *Condition) {
			e := *l.Evaluator
			e.Metadata = map[string]any{"s": struct{ A int }{1}}
			l.Evaluator = &e
		})
	})
	return names, fs
}()
