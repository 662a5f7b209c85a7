package templates_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/templates"
)

// testTemplate has one parameter of every type, used as whole values, inside a string and as a key.
const testTemplate = `
name: every-type
title: Every type
description: A template with one parameter of each type.
category: test
parameters:
  - {name: words, type: string_list, default: [alpha, beta], description: the list}
  - {name: stages, type: string_list, values: [pre, post], default: [pre], description: stages}
  - {name: decision, type: enum, values: [deny, warn], default: deny, description: the decision}
  - {name: sensitive, type: boolean, default: false, description: case}
  - {name: pattern, type: regex, required: true, example: 'secret\d+', description: a pattern}
  - {name: label, type: string, default: hello, description: a label}
  - {name: field, type: string, default: amount, description: a key}
  - {name: limit, type: number, minimum: 0, maximum: 100, default: 10, description: a number}
  - {name: step_regex, type: regex, description: optional step name regex}
data:
  description: "label {{label}} limit {{ limit }}"
  scope: {stages: "{{stages}}", step_name_regex: "{{step_regex}}"}
  condition:
    or:
      - selector: {path: input}
        evaluator: {name: list, config: {values: "{{words}}", case_sensitive: "{{sensitive}}"}}
      - selector: {path: input}
        evaluator: {name: regex, config: {pattern: "{{pattern}}"}}
  action: {decision: "{{decision}}", metadata: {"{{field}}": "{{limit}}"}}
  tests:
    - {name: a word, step: {type: llm, input: alpha}, stage: pre, expect: match}
    - {name: the pattern, step: {type: llm, input: "a secret42"}, stage: pre, expect: match}
    - {name: nothing, step: {type: llm, input: gamma}, stage: pre, expect: no_match}
`

func load(t *testing.T, files map[string]string) (*templates.Set, error) {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, body := range files {
		fsys["library/"+name] = &fstest.MapFile{Data: []byte(body)}
	}
	return templates.Load(fsys)
}

func testSet(t *testing.T) *templates.Template {
	t.Helper()
	set, err := load(t, map[string]string{"every.yaml": testTemplate})
	if err != nil {
		t.Fatal(err)
	}
	tpl, ok := set.Get("every-type")
	if !ok {
		t.Fatal("not loaded")
	}
	return tpl
}

// TestRenderIsTyped: every type renders as its JSON type, inside strings as text and as a key; an optional
// parameter without a value drops its key.
func TestRenderIsTyped(t *testing.T) {
	tpl := testSet(t)
	r, err := tpl.Render(context.Background(), map[string]any{
		"pattern": `secret\d+`, "words": []any{"alpha", `"],"x":["`}, "sensitive": true, "limit": 42.5,
		"label": `", "enabled": false, "x": "`, "field": "max",
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(r.Data)
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	leaf := got["condition"].(map[string]any)["or"].([]any)[0].(map[string]any)["evaluator"].(map[string]any)["config"].(map[string]any)
	if !reflect.DeepEqual(leaf["values"], []any{"alpha", `"],"x":["`}) || leaf["case_sensitive"] != true {
		t.Errorf("list leaf: %v", leaf)
	}
	if got["description"] != `label ", "enabled": false, "x": " limit 42.5` || got["enabled"] != true {
		t.Errorf("a string parameter changed the JSON around it: %s", raw)
	}
	if md := got["action"].(map[string]any)["metadata"].(map[string]any); md["max"] != 42.5 {
		t.Errorf("key or number: %v", md)
	}
	if _, ok := got["scope"].(map[string]any)["step_name_regex"]; ok {
		t.Errorf("an optional parameter without a value kept its key: %s", raw)
	}
	if len(r.Data.Tests) != 3 || len(r.OmittedTests) != 0 {
		t.Errorf("tests %d, omitted %v", len(r.Data.Tests), r.OmittedTests)
	}
	// A value that looks like a placeholder is not substituted again.
	r, err = tpl.Render(context.Background(), map[string]any{"pattern": `secret\d+`, "label": "{{pattern}}", "field": "{{label}}"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Data.Description != "label {{pattern}} limit 10" || r.Data.Action.Metadata["{{label}}"] == nil {
		t.Errorf("a value was substituted again: %q %v", r.Data.Description, r.Data.Action.Metadata)
	}
}

// TestRenderProblems: each bad parameter is named, with the control language's codes; values are never
// repeated in messages.
func TestRenderProblems(t *testing.T) {
	tpl := testSet(t)
	cases := []struct {
		name   string
		params map[string]any
		want   []string // field:code
	}{
		{"missing required", map[string]any{}, []string{"parameters.pattern:required"}},
		{"unknown", map[string]any{"pattern": "a", "nope": 1, "also": "x"}, []string{"parameters.also:unknown_field", "parameters.nope:unknown_field"}},
		{"wrong types", map[string]any{"pattern": 7, "words": "alpha", "sensitive": "yes", "limit": "10", "label": []any{"a"}},
			[]string{"parameters.words:type", "parameters.sensitive:type", "parameters.pattern:type", "parameters.label:type", "parameters.limit:type"}},
		{"bad regex", map[string]any{"pattern": "(unclosed"}, []string{"parameters.pattern:invalid_regex"}},
		{"bad regex in scope", map[string]any{"pattern": "a", "step_regex": `(?<=x)y`}, []string{"parameters.step_regex:invalid_regex"}},
		{"enum", map[string]any{"pattern": "a", "decision": "allow"}, []string{"parameters.decision:enum"}},
		{"list item not allowed", map[string]any{"pattern": "a", "stages": []any{"pre", "during"}}, []string{"parameters.stages:enum"}},
		{"empty list and blank string", map[string]any{"pattern": "a", "words": []any{}, "label": " "}, []string{"parameters.words:empty", "parameters.label:required"}},
		{"blank item", map[string]any{"pattern": "a", "words": []any{"a", " "}}, []string{"parameters.words:empty"}},
		{"range", map[string]any{"pattern": "a", "limit": 101.0}, []string{"parameters.limit:maximum"}},
		{"below range", map[string]any{"pattern": "a", "limit": -1.0}, []string{"parameters.limit:minimum"}},
		{"null is not given", map[string]any{"pattern": nil}, []string{"parameters.pattern:required"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := tpl.Render(context.Background(), c.params)
			var ve *guard.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a ValidationError", err)
			}
			var got []string
			for _, p := range ve.Problems {
				got = append(got, p.Field+":"+p.Code)
				if strings.Contains(p.Message, "unclosed") || strings.Contains(p.Message, "during") {
					t.Errorf("message repeats the value: %s", p.Message)
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("problems %v, want %v", got, c.want)
			}
		})
	}
}

// TestRenderOmitsFailingTests: a test the parameters contradict is left out and listed, so the server
// accepts the control; the others stay.
func TestRenderOmitsFailingTests(t *testing.T) {
	tpl := testSet(t)
	r, err := tpl.Render(context.Background(), map[string]any{"pattern": "zzz", "words": []any{"gamma"}})
	if err != nil {
		t.Fatal(err)
	}
	var omitted []string
	for _, o := range r.OmittedTests {
		omitted = append(omitted, o.Name)
		if !strings.HasPrefix(o.Message, "expected ") {
			t.Errorf("message %q", o.Message)
		}
	}
	if !reflect.DeepEqual(omitted, []string{"a word", "the pattern", "nothing"}) || len(r.Data.Tests) != 0 {
		t.Errorf("omitted %v, kept %d", omitted, len(r.Data.Tests))
	}
	if err := guard.CheckControlTests(context.Background(), "x", r.Data); err != nil {
		t.Errorf("rendered data fails its tests: %v", err)
	}
}

// TestParseRejectsBrokenTemplates: the checks of a template file.
func TestParseRejectsBrokenTemplates(t *testing.T) {
	base := "name: t\ntitle: T\ndescription: D\ncategory: c\n"
	cases := []struct{ name, body, want string }{
		{"unknown placeholder", base + "data: {description: '{{nope}}'}\n", "names no parameter"},
		{"unused parameter", base + "parameters: [{name: p, type: string, default: x, description: d}]\ndata: {description: x}\n", "not used"},
		{"list inside a string", base + "parameters: [{name: p, type: string_list, default: [x], description: d}]\ndata: {description: 'a {{p}}'}\n", "whole value"},
		{"optional inside a string", base + "parameters: [{name: p, type: string, description: d}]\ndata: {description: 'a {{p}}'}\n", "whole value"},
		{"unknown type", base + "parameters: [{name: p, type: float, default: 1, description: d}]\ndata: {description: '{{p}}'}\n", "unknown type"},
		{"enum without values", base + "parameters: [{name: p, type: enum, default: a, description: d}]\ndata: {description: '{{p}}'}\n", "needs values"},
		{"default of the wrong type", base + "parameters: [{name: p, type: boolean, default: 'yes', description: d}]\ndata: {description: '{{p}}'}\n", "must be a boolean"},
		{"required with a default", base + "parameters: [{name: p, type: string, required: true, default: a, example: a, description: d}]\ndata: {description: '{{p}}'}\n", "no default"},
		{"required without an example", base + "parameters: [{name: p, type: string, required: true, description: d}]\ndata: {description: '{{p}}'}\n", "needs an example"},
		{"duplicate parameter", base + "parameters: [{name: p, type: string, default: a, description: d}, {name: p, type: string, default: a, description: d}]\ndata: {description: '{{p}}'}\n", "twice"},
		{"bad parameter name", base + "parameters: [{name: P-1, type: string, default: a, description: d}]\ndata: {description: '{{P-1}}'}\n", "name must be"},
		{"unknown key", base + "titel: x\ndata: {description: x}\n", "unknown field"},
		{"duplicate key", base + "title: again\ndata: {description: x}\n", "already set"},
		{"no data", base, "data is required"},
		{"evaluator as a parameter", base + "parameters: [{name: e, type: string, default: regex, description: d}]\ndata: {condition: {selector: {path: input}, evaluator: {name: '{{e}}'}}}\n", "evaluator name"},
		{"bad name", "name: 'a b'\ntitle: T\ndescription: D\ncategory: c\ndata: {}\n", "name:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := templates.Parse([]byte(c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
	if _, err := load(t, map[string]string{"a.yaml": testTemplate, "b.yaml": testTemplate}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a name defined twice: %v", err)
	}
}

// TestParseSetting: command-line text becomes the parameter's type.
func TestParseSetting(t *testing.T) {
	tpl := testSet(t)
	cases := []struct {
		param, text string
		want        any
	}{
		{"words", "a, b ,c", []any{"a", "b", "c"}},
		{"words", `["a,b","c"]`, []any{"a,b", "c"}},
		{"sensitive", "true", true},
		{"sensitive", "maybe", "maybe"},
		{"limit", "12.5", 12.5},
		{"limit", "ten", "ten"},
		{"label", "a, b", "a, b"},
	}
	for _, c := range cases {
		p, _ := tpl.Parameter(c.param)
		if got := p.ParseSetting(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %q: %#v, want %#v", c.param, c.text, got, c.want)
		}
	}
}

// TestAvailable leaves out templates whose evaluators are not registered.
func TestAvailable(t *testing.T) {
	lib := templates.Shipped()
	all := lib.List()
	onlyBuiltins := lib.Available(func(name string) bool { return name == "regex" || name == "list" })
	if len(onlyBuiltins) == 0 || len(onlyBuiltins) >= len(all) {
		t.Fatalf("%d of %d available with regex and list only", len(onlyBuiltins), len(all))
	}
	for _, tpl := range onlyBuiltins {
		for _, e := range tpl.Evaluators() {
			if e != "regex" && e != "list" {
				t.Errorf("%s uses %s", tpl.Name, e)
			}
		}
	}
}
