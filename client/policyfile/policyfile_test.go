package policyfile_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/policyfile"
)

const good = `controls:
  - name: block-ssn
    data:
      scope: {stages: [pre]}
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: '\b\d{3}-\d{2}-\d{4}\b'}}}
      action: {decision: deny}
---
controls:
  - name: no-sql
    data:
      enabled: false
      condition: {selector: {path: input}, evaluator: {name: list, config: {values: [drop table], match_mode: contains}}}
      action: {decision: deny}
agents:
  - name: Support-Bot
    controls: [block-ssn, no-sql]
tests:
  - name: ssn denied
    step: {type: llm, name: chat, input: "ssn 123-45-6789"}
    stage: pre
    expect: {decision: deny, matches: [block-ssn]}
  - name: sql found
    control: no-sql
    step: {type: llm, name: chat, input: "drop table x"}
    stage: pre
    expect: match
`

func TestParseGood(t *testing.T) {
	pol, err := policyfile.Parse("p.yaml", []byte(good), policyfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pol.Controls) != 2 || pol.Controls[0].Name != "block-ssn" || pol.Controls[1].Data.Enabled {
		t.Fatalf("controls %+v", pol.Controls)
	}
	if !reflect.DeepEqual(pol.Agents, []policyfile.Agent{{File: "p.yaml (document 2)", Name: "support-bot", Controls: []string{"block-ssn", "no-sql"}}}) {
		t.Fatalf("agents %+v", pol.Agents)
	}
	if len(pol.Tests) != 2 || pol.Tests[1].Expect.Match != guard.ExpectMatch || pol.Tests[0].Expect.Decision != guard.DecisionDeny {
		t.Fatalf("tests %+v", pol.Tests)
	}
	res, err := guard.RunTests(t.Context(), pol.EngineControls(), pol.TestCases())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Passed {
			t.Fatalf("%s: %v", r.Name, r.Failures)
		}
	}
}

func TestParseJSON(t *testing.T) {
	raw := `{"controls": [{"id": 7, "name": "a", "data": {"condition": {"selector": {"path": "input"},
		"evaluator": {"name": "regex", "config": {"pattern": "x"}}}, "action": {"decision": "log"}}}]}`
	pol, err := policyfile.Parse("p.json", []byte(raw), policyfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pol.EngineControls(); len(got) != 1 || got[0].ID != 7 || got[0].Name != "a" {
		t.Fatalf("%+v", got)
	}
}

func TestParseProblems(t *testing.T) {
	leaf := `{selector: {path: input}, evaluator: {name: regex, config: {pattern: x}}}`
	cases := []struct {
		name string
		in   string
		want []string // Problem.String() of every problem, in order
	}{
		{"unknown top-level field", "control: []\n", []string{`f.yaml: control: unknown field (expected one of [controls agents tests])`}},
		{"unknown control field", "controls:\n  - {name: a, date: {}}\n", []string{
			`f.yaml: controls.0.date: unknown field (expected one of [id name data])`,
			`f.yaml: control "a": controls.0.data: is required`}},
		{"bad data, every problem", "controls:\n  - name: a\n    data: {condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: '('}}}, action: {decision: nope}}\n",
			nil},
		{"bad name", "controls:\n  - {name: 'a b', data: {condition: " + leaf + ", action: {decision: deny}}}\n", nil},
		// A bad name hides none of the control's other problems, nor the agent's (issue 26).
		{"bad name and every other problem", "controls:\n  - {name: 'a b', id: -1, data: {condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: '('}}}, action: {decision: nope}}}\n" +
			"agents:\n  - {name: 'B@D', controls: [x, x]}\n", []string{
			`f.yaml: controls.0.name: may contain only letters, digits, '_' and '-'`,
			`f.yaml: controls.0.id: must be a positive integer`,
			`f.yaml: controls.0.data.condition.evaluator.config.pattern: is not a valid regular expression: missing closing )`,
			`f.yaml: controls.0.data.action.decision: must be one of allow, deny, steer, warn, log, observe`,
			`f.yaml: agents.0.name: may contain only ASCII letters, digits, '.', '_', ':' and '-'`,
			`f.yaml: control "x": agents.0.controls.1: is listed twice`}},
		{"duplicate control", "controls:\n  - {name: a, data: {condition: " + leaf + ", action: {decision: deny}}}\n  - {name: a, data: {condition: " + leaf + ", action: {decision: deny}}}\n",
			[]string{`f.yaml: control "a": is defined twice (first in f.yaml)`}},
		{"agent links unknown control", "agents:\n  - {name: bot, controls: [missing]}\n",
			[]string{`f.yaml: control "missing": agent "bot" links a control no file defines`}},
		{"agent unknown field", "agents:\n  - {name: bot, control: [a]}\n", []string{`f.yaml: agents.0.control: unknown field (expected one of [name controls])`}},
		{"test unknown field in step", "tests:\n  - {name: t, step: {type: llm, inptu: x}, stage: pre, expect: {decision: allow}}\n",
			[]string{`f.yaml: tests.0.step.inptu: unknown field (expected one of [type name input output context])`}},
		{"test names unknown control", "tests:\n  - {name: t, control: a, step: {type: llm}, stage: pre, expect: match}\n",
			[]string{`f.yaml: control "a": test "t" names a control no file defines`}},
		{"test bad stage", "tests:\n  - {name: t, step: {type: llm}, stage: later, expect: {decision: allow}}\n",
			[]string{`f.yaml: tests.0.stage: must be one of pre, post`}},
		{"duplicate key", "controls: []\ncontrols: []\n", nil},
		{"not yaml", "controls: [\n", nil},
		{"empty", "", []string{`f.yaml: holds no document: expected controls, agents and/or tests`}},
		{"bad json", `{"controls": [}`, nil},
		{"duplicate json key", `{"controls": [{"name": "a", "name": "b"}]}`, []string{`f.yaml: not valid JSON: controls.0.name: appears more than once in the same object`}},
		{"non-string key", "controls:\n  - name: a\n    data: {1: x}\n", nil},
		// Keys are compared exactly in YAML and JSON alike (issue 32): another case is an unknown field.
		{"yaml key in another case", "controls:\n  - {name: a, Name: b, data: {condition: " + leaf + ", action: {decision: deny}}}\n",
			[]string{`f.yaml: controls.0.Name: unknown field (expected one of [id name data])`}},
		{"yaml data key in another case", "controls:\n  - {name: a, data: {condition: " + leaf + ", action: {Decision: deny}}}\n", nil},
		{"json key in another case", `{"Controls": []}`, []string{`f.yaml: Controls: unknown field (expected one of [controls agents tests])`}},
		{"test expect in another case", "tests:\n  - {name: t, step: {type: llm}, stage: pre, expect: {Decision: allow}}\n",
			[]string{`f.yaml: tests.0.expect.Decision: unknown field (expected one of [decision matches no_matches])`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := policyfile.Parse("f.yaml", []byte(c.in), policyfile.Options{})
			var pe *policyfile.Error
			if !errors.As(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("err %v, want a *policyfile.Error", err)
			}
			got := strings.Split(pe.Error(), "\n")
			if c.want != nil && !reflect.DeepEqual(got, c.want) {
				t.Fatalf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			for _, line := range got {
				if !strings.HasPrefix(line, "f.yaml") {
					t.Fatalf("problem without its file: %q", line)
				}
			}
		})
	}
}

func TestParseDataProblemsCarryControlAndPath(t *testing.T) {
	in := "controls:\n  - name: a\n    data: {condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: '('}}}, action: {decision: nope}}\n"
	_, err := policyfile.Parse("f.yaml", []byte(in), policyfile.Options{})
	var pe *policyfile.Error
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	fields := map[string]bool{}
	for _, p := range pe.Problems {
		if p.Control != "a" {
			t.Fatalf("problem without its control: %+v", p)
		}
		fields[p.Field] = true
	}
	for _, f := range []string{"controls.0.data.condition.evaluator.config.pattern", "controls.0.data.action.decision"} {
		if !fields[f] {
			t.Fatalf("no problem at %s: %+v", f, pe.Problems)
		}
	}
}

func TestLoadAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c := write("controls.yaml", "controls:\n  - {name: a, data: {condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: x}}}, action: {decision: deny}}}\n")
	ts := write("tests.yaml", "tests:\n  - {name: t, control: a, step: {type: llm, input: x}, stage: pre, expect: match}\n")
	pol, err := policyfile.Load([]string{c, ts}, policyfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pol.Controls) != 1 || len(pol.Tests) != 1 {
		t.Fatalf("%+v", pol)
	}
	if _, err := policyfile.Load([]string{ts}, policyfile.Options{}); err == nil || !strings.Contains(err.Error(), "no file defines") {
		t.Fatalf("tests alone: %v", err)
	}
	if _, err := policyfile.Load([]string{filepath.Join(dir, "missing.yaml")}, policyfile.Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestWriteRoundTrip(t *testing.T) {
	pol, err := policyfile.Parse("p.yaml", []byte(good), policyfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var a bytes.Buffer
	if err := policyfile.Write(&a, pol); err != nil {
		t.Fatal(err)
	}
	back, err := policyfile.Parse("out.yaml", a.Bytes(), policyfile.Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, a.String())
	}
	if len(back.Controls) != 2 || !reflect.DeepEqual(back.Controls[0].Data, pol.Controls[0].Data) || !reflect.DeepEqual(back.Controls[1].Data, pol.Controls[1].Data) {
		t.Fatalf("controls differ after a round trip:\n%s", a.String())
	}
	if !reflect.DeepEqual(back.Agents[0].Controls, []string{"block-ssn", "no-sql"}) {
		t.Fatalf("agents %+v", back.Agents)
	}
	var b bytes.Buffer
	if err := policyfile.Write(&b, back); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("not deterministic:\n%s\n---\n%s", a.String(), b.String())
	}
	if !strings.HasPrefix(a.String(), "controls:\n- name: block-ssn\n") {
		t.Fatalf("output starts %q", a.String()[:40])
	}
}
