package server

import (
	"strings"
	"testing"
)

// FuzzMutatingBodies sends arbitrary bodies to the routes that decode JSON: the answer is never a 5xx.
func FuzzMutatingBodies(f *testing.F) {
	for _, seed := range []string{
		`{"agent_name":"bot","stage":"pre","step":{"type":"llm","name":"chat","input":"x"}}`,
		`{"name":"c","data":{"condition":{"and":[{"not":{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"("}}}}]},"action":{"decision":"steer"}}}`,
		`{"data":{"scope":{"step_name_regex":"[","stages":[]},"condition":{},"action":{}}}`,
		`{"agent":{"agent_name":"a"},"steps":[{"type":"t","name":"n","input_schema":{"$ref":"#"}}]}`,
		`{"enabled":null,"name":null}`, `[]`, `null`, `"x"`, `{"a":` + strings.Repeat("[", 200),
	} {
		f.Add(seed)
	}
	ts := newTS(f)
	ts.initAgent("bot")
	ts.link("bot", ts.createControl("seed", regexData("x", "deny")))
	routes := []struct{ method, path string }{
		{"POST", "/api/v1/evaluation"},
		{"PUT", "/api/v1/controls"},
		{"POST", "/api/v1/controls/validate"},
		{"PUT", "/api/v1/controls/1/data"},
		{"PATCH", "/api/v1/controls/1"},
		{"POST", "/api/v1/agents/initAgent"},
		{"PATCH", "/api/v1/agents/bot"},
	}
	f.Fuzz(func(t *testing.T, body string) {
		sub := &tserver{t: t, srv: ts.srv, st: ts.st}
		for _, rt := range routes {
			r := sub.do(rt.method, rt.path, body)
			if r.Code >= 500 {
				t.Fatalf("%s %s %q: %d %s", rt.method, rt.path, body, r.Code, r.Body)
			}
		}
	})
}
