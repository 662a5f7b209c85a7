package server

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/server/problem"
)

// templateServer is a server whose responses are checked against the OpenAPI document.
func templateServer(t *testing.T, opts ...Option) *tserver {
	ts := newTS(t, opts...)
	v := newValidator(t)
	ts.onResponse = func(req *http.Request, r *resp) {
		if _, pattern := ts.srv.mux.Handler(req); pattern != "" {
			v.check(req, r, pattern)
		}
	}
	return ts
}

// TestControlTemplatesList: the list holds the shipped library with typed parameters, and GET of one
// template shows its data with placeholders.
func TestControlTemplatesList(t *testing.T) {
	ts := templateServer(t)
	m := ts.ok(200, "GET", "/api/v1/control-templates", nil)
	list := m["templates"].([]any)
	if len(list) < 15 {
		t.Fatalf("%d templates, want at least 15", len(list))
	}
	names := map[string]map[string]any{}
	for _, item := range list {
		tpl := item.(map[string]any)
		names[tpl["name"].(string)] = tpl
	}
	for _, want := range []string{"us-ssn", "payment-cards", "phone-numbers", "pii-in-outputs", "destructive-shell", "sql-injection",
		"destructive-sql", "secrets-in-inputs", "secrets-in-outputs", "dangerous-uris", "approval-steer", "tool-allow-list",
		"spend-limit", "prompt-injection", "system-prompt-extraction", "jailbreak-markers"} {
		if names[want] == nil {
			t.Errorf("template %s is not listed", want)
		}
	}
	params := names["tool-allow-list"]["parameters"].([]any)
	first := params[0].(map[string]any)
	if first["name"] != "allowed_tools" || first["type"] != "string_list" || first["required"] != true || first["example"] == nil {
		t.Errorf("tool-allow-list parameter: %v", first)
	}
	d := ts.ok(200, "GET", "/api/v1/control-templates/spend-limit", nil)
	raw, _ := json.Marshal(d["data_template"])
	if !strings.Contains(string(raw), `"{{max_amount}}"`) || !reflect.DeepEqual(d["evaluators"], []any{"json"}) {
		t.Errorf("detail: %s", raw)
	}
	ts.expectProblem(404, problem.CodeNotFound, "GET", "/api/v1/control-templates/nope", nil)
}

// TestControlTemplatesFollowTheRegistry: a server with only the builtins (regex, list, threshold) neither lists nor renders
// the templates that need them.
func TestControlTemplatesFollowTheRegistry(t *testing.T) {
	reg := evaluator.NewRegistry()
	evaluator.RegisterBuiltins(reg)
	ts := templateServer(t, WithRegistry(reg))
	m := ts.ok(200, "GET", "/api/v1/control-templates", nil)
	for _, item := range m["templates"].([]any) {
		for _, e := range item.(map[string]any)["evaluators"].([]any) {
			if e != "regex" && e != "list" && e != "threshold" { // the builtins
				t.Errorf("%s needs %s, which this server does not have", item.(map[string]any)["name"], e)
			}
		}
	}
	ts.expectProblem(404, problem.CodeNotFound, "GET", "/api/v1/control-templates/us-ssn", nil)
	ts.expectProblem(404, problem.CodeNotFound, "POST", "/api/v1/control-templates/us-ssn/render", `{}`)
	// The prompt templates use the prompt-attack classifier beside their patterns (issue 37): a server
	// without evaluator/promptattack does not offer them.
	ts.expectProblem(404, problem.CodeNotFound, "POST", "/api/v1/control-templates/prompt-injection/render", `{}`)
	ts.ok(200, "POST", "/api/v1/control-templates/sql-injection/render", `{}`)
}

// TestControlTemplateRenderSaves: a render answers control data the server saves as it is, tests included,
// and the saved control decides as the template says.
func TestControlTemplateRenderSaves(t *testing.T) {
	ts := templateServer(t)
	m := ts.ok(200, "POST", "/api/v1/control-templates/tool-allow-list/render",
		map[string]any{"parameters": map[string]any{"allowed_tools": []string{"search", "read_file"}}})
	data := m["control_data"].(map[string]any)
	if len(data["tests"].([]any)) != 3 || len(m["omitted_tests"].([]any)) != 0 {
		t.Fatalf("render: %v", m)
	}
	created := ts.ok(200, "PUT", "/api/v1/controls", map[string]any{"name": "allow-list", "data": data})
	ts.initAgent("bot")
	ts.link("bot", int64(created["control_id"].(float64)))
	for tool, want := range map[string]string{"search": "allow", "drop_database": "deny"} {
		r := ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": "pre",
			"step": map[string]any{"type": "tool", "name": tool, "input": map[string]any{}}})
		if r["decision"] != want {
			t.Errorf("%s: decision %v, want %s", tool, r["decision"], want)
		}
	}
	// The allow-list now allows the tool of the deny test: that test is left out and named.
	m = ts.ok(200, "POST", "/api/v1/control-templates/tool-allow-list/render",
		map[string]any{"parameters": map[string]any{"allowed_tools": []string{"search", "drop_database"}}})
	omitted := m["omitted_tests"].([]any)
	if len(omitted) != 1 || omitted[0].(map[string]any)["name"] != "an unlisted tool is denied" {
		t.Fatalf("omitted: %v", omitted)
	}
	ts.ok(200, "PUT", "/api/v1/controls", map[string]any{"name": "allow-list-2", "data": m["control_data"]})
}

// TestControlTemplateRenderProblems: each mistake is a 422 naming the parameter (or the body field), an
// unknown template a 404; nothing is rendered.
func TestControlTemplateRenderProblems(t *testing.T) {
	ts := templateServer(t)
	cases := []struct {
		name, template, body string
		status               int
		want                 []string // field:code
	}{
		{"missing required", "tool-allow-list", `{"parameters":{}}`, 422, []string{"parameters.allowed_tools:required"}},
		{"no body parameters", "tool-allow-list", `{}`, 422, []string{"parameters.allowed_tools:required"}},
		{"unknown parameter", "us-ssn", `{"parameters":{"decison":"warn"}}`, 422, []string{"parameters.decison:unknown_field"}},
		{"list as a string", "tool-allow-list", `{"parameters":{"allowed_tools":"search"}}`, 422, []string{"parameters.allowed_tools:type"}},
		{"json in a string stays a string", "destructive-shell", `{"parameters":{"path":"input\"}}"}}`, 422, []string{"parameters.path:invalid_path"}},
		{"bad regex", "prompt-injection", `{"parameters":{"pattern":"(ignore"}}`, 422, []string{"parameters.pattern:invalid_regex"}},
		{"enum mismatch", "us-ssn", `{"parameters":{"decision":"allow"}}`, 422, []string{"parameters.decision:enum"}},
		{"list item not allowed", "us-ssn", `{"parameters":{"stages":["pre","later"]}}`, 422, []string{"parameters.stages:enum"}},
		{"number out of range", "spend-limit", `{"parameters":{"tools":["pay"],"max_amount":-1}}`, 422, []string{"parameters.max_amount:minimum"}},
		{"boolean as a string", "destructive-sql", `{"parameters":{"tool_names":["q"],"require_where":"yes"}}`, 422, []string{"parameters.require_where:type"}},
		{"several at once", "destructive-sql", `{"parameters":{"tool_names":[],"decision":"block","x":1}}`, 422,
			[]string{"parameters.x:unknown_field", "parameters.tool_names:empty", "parameters.decision:enum"}},
		{"unknown body field", "us-ssn", `{"paramters":{}}`, 422, []string{"paramters:unknown_field"}},
		{"duplicate key", "us-ssn", `{"parameters":{"decision":"warn","decision":"log"}}`, 422, []string{"parameters.decision:duplicate_key"}},
		{"not an object", "us-ssn", `[]`, 422, []string{":type"}},
		{"parameters not an object", "us-ssn", `{"parameters":[]}`, 422, []string{"parameters:type"}},
		{"invalid JSON", "us-ssn", `{"parameters":`, 400, nil},
		{"unknown template", "nope", `{}`, 404, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.do("POST", "/api/v1/control-templates/"+c.template+"/render", c.body)
			if r.Code != c.status {
				t.Fatalf("status %d, want %d: %s", r.Code, c.status, r.Body)
			}
			b := r.problem(t)
			if c.want == nil {
				return
			}
			var got []string
			for _, p := range b.Errors {
				got = append(got, p.Field+":"+p.Code)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("problems %v, want %v (%s)", got, c.want, r.Body)
			}
		})
	}
}
