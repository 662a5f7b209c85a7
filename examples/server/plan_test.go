package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/policyfile"
)

func mustData(t *testing.T, js string) *guard.ControlData {
	t.Helper()
	d, err := guard.ParseControlData([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return &d
}

const (
	denyA = `{"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "a"}}}, "action": {"decision": "deny"}}`
	// the same data written in another order, with defaults spelled out
	denyAReordered = `{"tags": [], "execution": "server", "action": {"decision": "deny"}, "enabled": true,
		"condition": {"evaluator": {"config": {"pattern": "a"}, "name": "regex"}, "selector": {"path": "input"}}}`
	denyB        = `{"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "b"}}}, "action": {"decision": "deny"}, "tags": ["x"]}`
	denyDisabled = `{"enabled": false, "condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "a"}}}, "action": {"decision": "deny"}}`
	// a json evaluator config under guard's name, and the form the server stores it in
	jsonSchemaWritten = `{"condition": {"selector": {"path": "input"}, "evaluator": {"name": "json", "config": {"schema": {"type": "object"}}}}, "action": {"decision": "deny"}}`
	jsonSchemaStored  = `{"condition": {"selector": {"path": "input"}, "evaluator": {"name": "json", "config": {"json_schema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}}}}, "action": {"decision": "deny"}}`
)

// summaryOf is a plan as short strings, for comparing with a table.
func summaryOf(p plan) []string {
	var out []string
	for _, c := range p.Creates {
		out = append(out, "create "+c.Name)
	}
	for _, c := range p.Updates {
		s := "update " + c.Name
		if c.Enable != nil {
			s += map[bool]string{true: " enable", false: " disable"}[*c.Enable]
		}
		for _, d := range c.DataDiff {
			s += " [" + d.String() + "]"
		}
		out = append(out, s)
	}
	for _, a := range p.Agents {
		s := "agent " + a.Name
		if a.Create {
			s += " create"
		}
		s += " +" + strings.Join(a.Link, ",") + " -" + strings.Join(a.Unlink, ",")
		out = append(out, s)
	}
	for _, c := range p.Deletes {
		out = append(out, "delete "+c.Name)
	}
	return out
}

func TestComputePlan(t *testing.T) {
	type fileControl struct{ name, data string }
	type agent struct {
		name     string
		controls []string
	}
	cases := []struct {
		name     string
		file     []fileControl
		agents   []agent
		server   map[string]remoteControl
		links    map[string][]string
		prune    bool
		want     []string
		emptyOut bool
	}{
		{name: "empty server: create all, agents too",
			file:   []fileControl{{"b", denyA}, {"a", denyB}},
			agents: []agent{{"bot", []string{"a", "b"}}},
			want:   []string{"create a", "create b", "agent bot create +a,b -"}},
		{name: "identical (order and defaults aside): nothing",
			file:   []fileControl{{"a", denyAReordered}},
			agents: []agent{{"bot", []string{"a"}}},
			server: map[string]remoteControl{"a": {ID: 1, Version: 3, Enabled: true, Data: mustData(t, denyA)}},
			links:  map[string][]string{"bot": {"a"}},
			want:   nil, emptyOut: true},
		{name: "json config in guard's names, stored in the canonical form: nothing",
			file:   []fileControl{{"a", jsonSchemaWritten}},
			server: map[string]remoteControl{"a": {ID: 1, Version: 3, Enabled: true, Data: mustData(t, jsonSchemaStored)}},
			want:   nil, emptyOut: true},
		{name: "data changed: one update with the changed paths",
			file:   []fileControl{{"a", denyB}},
			server: map[string]remoteControl{"a": {ID: 1, Version: 3, Enabled: true, Data: mustData(t, denyA)}},
			want:   []string{`update a [~ data.condition.evaluator.config.pattern: "a" -> "b"] [+ data.tags.0: "x"]`}},
		{name: "only enabled changed: a patch, no data write",
			file:   []fileControl{{"a", denyDisabled}},
			server: map[string]remoteControl{"a": {ID: 1, Version: 3, Enabled: true, Data: mustData(t, denyA)}},
			want:   []string{"update a disable"}},
		{name: "data and enabled changed: the data write carries enabled",
			file:   []fileControl{{"a", denyB}},
			server: map[string]remoteControl{"a": {ID: 1, Version: 3, Enabled: false, Data: mustData(t, denyDisabled)}},
			want:   []string{`update a enable [~ data.condition.evaluator.config.pattern: "a" -> "b"] [+ data.tags.0: "x"]`}},
		{name: "server control without data: every path is new",
			file:   []fileControl{{"a", denyA}},
			server: map[string]remoteControl{"a": {ID: 1, Version: 1}},
			want: []string{`update a enable [+ data.action.decision: "deny"] [+ data.condition.evaluator.config.pattern: "a"] ` +
				`[+ data.condition.evaluator.name: "regex"] [+ data.condition.selector.path: "input"]`}},
		{name: "links: add and remove, agents not in the file untouched",
			file:   []fileControl{{"a", denyA}, {"b", denyA}},
			agents: []agent{{"bot", []string{"b"}}},
			server: map[string]remoteControl{"a": {ID: 1, Enabled: true, Data: mustData(t, denyA)}, "b": {ID: 2, Enabled: true, Data: mustData(t, denyA)}},
			links:  map[string][]string{"bot": {"a"}, "other": {"a", "b"}},
			want:   []string{"agent bot +b -a"}},
		{name: "agent with no controls listed: unlink all",
			agents: []agent{{"bot", nil}},
			server: map[string]remoteControl{"a": {ID: 1, Enabled: true, Data: mustData(t, denyA)}},
			links:  map[string][]string{"bot": {"a"}},
			want:   []string{"agent bot + -a"}},
		{name: "control not in the files, no prune: kept",
			server: map[string]remoteControl{"old": {ID: 9, Enabled: true, Data: mustData(t, denyA)}},
			want:   nil, emptyOut: true},
		{name: "control not in the files, prune: deleted",
			file:   []fileControl{{"a", denyA}},
			server: map[string]remoteControl{"a": {ID: 1, Enabled: true, Data: mustData(t, denyA)}, "old": {ID: 9, Enabled: true, Data: mustData(t, denyA)}, "older": {ID: 8}},
			prune:  true,
			want:   []string{"delete old", "delete older"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pol := &policyfile.Policy{}
			for _, fc := range c.file {
				pol.Controls = append(pol.Controls, policyfile.Control{Name: fc.name, Data: *mustData(t, fc.data)})
			}
			for _, a := range c.agents {
				pol.Agents = append(pol.Agents, policyfile.Agent{Name: a.name, Controls: a.controls})
			}
			state := remoteState{Controls: map[string]remoteControl{}, Agents: map[string][]string{}}
			for n, r := range c.server {
				r.Name = n
				state.Controls[n] = r
			}
			for n, l := range c.links {
				state.Agents[n] = l
			}
			p, err := computePlan(pol, state, c.prune)
			if err != nil {
				t.Fatal(err)
			}
			if got := summaryOf(p); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("plan\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			if p.empty() != c.emptyOut {
				t.Fatalf("empty %v, want %v", p.empty(), c.emptyOut)
			}
		})
	}
}

func TestDiffJSON(t *testing.T) {
	cases := []struct {
		name     string
		old, new any
		want     []string
	}{
		{"equal", map[string]any{"a": 1.0, "b": []any{"x"}}, map[string]any{"b": []any{"x"}, "a": 1.0}, nil},
		{"leaf", map[string]any{"a": 1.0}, map[string]any{"a": 2.0}, []string{"~ d.a: 1 -> 2"}},
		{"added and removed keys", map[string]any{"a": 1.0}, map[string]any{"b": "<x>"}, []string{"- d.a: 1", `+ d.b: "<x>"`}},
		{"list grows and shrinks", []any{"a", "b"}, []any{"a"}, []string{`- d.1: "b"`}},
		{"list grows", []any{"a"}, []any{"a", map[string]any{"k": true}}, []string{"+ d.1.k: true"}},
		{"null to list", map[string]any{"s": nil}, map[string]any{"s": []any{"pre"}}, []string{`~ d.s: null -> ["pre"]`}},
		{"object to string", map[string]any{"s": map[string]any{"k": 1.0}}, map[string]any{"s": "x"}, []string{`~ d.s: {"k":1} -> "x"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, ch := range diffJSON("d", c.old, c.new) {
				got = append(got, ch.String())
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestRenderPlan(t *testing.T) {
	en := false
	p := plan{
		Creates: []controlChange{{Name: "new", Data: mustData(t, denyA)}},
		Updates: []controlChange{{Name: "upd", Remote: remoteControl{ID: 2, Version: 4, Enabled: true}, Enable: &en,
			DataDiff: diffJSON("data", map[string]any{"x": "a"}, map[string]any{"x": "b"})}},
		Agents:  []agentChange{{Name: "bot", Create: true, Link: []string{"new"}}, {Name: "old-bot", Unlink: []string{"upd"}}},
		Deletes: []controlChange{{Name: "gone", Remote: remoteControl{ID: 7, AgentCount: 1}}},
	}
	var b bytes.Buffer
	p.render(&b)
	for _, want := range []string{
		"+ control new (create)\n    + data.action.decision: \"deny\"\n",
		"~ control upd (id 2, version 4)\n    ~ enabled: true -> false\n    ~ data.x: \"a\" -> \"b\"\n",
		"+ agent bot (create, no steps)\n    + link new\n",
		"~ agent old-bot\n    - link upd\n",
		"- control gone (id 7, delete; linked to 1 agent now)\n",
		"Plan: 1 control to create, 1 to update, 1 to delete; 2 agents to change.\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("render lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	(&plan{}).render(&b)
	if b.String() != "No changes: the server matches the files.\n" {
		t.Fatalf("empty plan: %q", b.String())
	}
}
