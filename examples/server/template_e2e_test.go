package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
)

// TestTemplateCommands runs `guard template` offline with the built binary: list, show, render in each
// format (a policy file that guard validate accepts), and the exit status 1 naming the parameter for each
// kind of mistake.
func TestTemplateCommands(t *testing.T) {
	dir := t.TempDir()
	out := expectGuard(t, nil, 0, []string{"NAME", "CATEGORY", "TITLE"}, "template", "list")
	for _, name := range []string{"us-ssn", "payment-cards", "destructive-sql", "secrets-in-outputs", "tool-allow-list", "spend-limit", "jailbreak-markers"} {
		if !strings.Contains(out, name) {
			t.Errorf("template list lacks %s:\n%s", name, out)
		}
	}
	expectGuard(t, nil, 0, []string{"spend-limit: Spend limit on payment tools", "evaluators: json", "tools (string_list) [required; example", "max_amount (number) [default 1000; minimum 0]"},
		"template", "show", "spend-limit")
	js := expectGuard(t, nil, 0, []string{`"data_template"`, `"{{max_amount}}"`}, "template", "show", "spend-limit", "-o", "json")
	if !json.Valid([]byte(js)) {
		t.Fatalf("show -o json is not JSON:\n%s", js)
	}

	// YAML (the default): a policy file that guard validate accepts, the control's tests run offline.
	yml := expectGuard(t, nil, 0, []string{"controls:", "name: my-tools", "values:", "- search", "- read_file"},
		"template", "render", "tool-allow-list", "--set", "allowed_tools=search,read_file", "--name", "my-tools")
	file := filepath.Join(dir, "tools.yaml")
	if err := os.WriteFile(file, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	expectGuard(t, nil, 0, []string{"ok: 1 file valid (1 control, 0 agents, 0 tests)"}, "validate", "-f", file)

	// JSON: the same policy file; list items from a JSON list and from repeated --set flags.
	js = expectGuard(t, nil, 0, nil, "template", "render", "tool-allow-list", "--set", `allowed_tools=["search"]`, "--set", "allowed_tools=send_reply", "-o", "json")
	var pol struct {
		Controls []struct {
			Name string          `json:"name"`
			Data json.RawMessage `json:"data"`
		} `json:"controls"`
	}
	if err := json.Unmarshal([]byte(js), &pol); err != nil || len(pol.Controls) != 1 || pol.Controls[0].Name != "tool-allow-list" {
		t.Fatalf("render -o json: %v\n%s", err, js)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, pol.Controls[0].Data); err != nil || !strings.Contains(compact.String(), `"values":["search","send_reply"]`) {
		t.Errorf("list items: %v %s", err, compact.String())
	}

	// data: control data only, as PUT /controls takes it; numbers and booleans keep their JSON types.
	js = expectGuard(t, nil, 0, nil, "template", "render", "destructive-sql", "--set", "tool_names=run_sql", "--set", "require_where=false", "-o", "data")
	d, err := guard.ParseControlData([]byte(js))
	if err != nil {
		t.Fatalf("render -o data: %v\n%s", err, js)
	}
	if cfg := d.Condition.Evaluator.Config; cfg["require_where"] != false || cfg["allow_multi_statements"] != false {
		t.Errorf("config: %v", cfg)
	}
	// A test the parameters contradict is left out, with a note.
	expectGuard(t, nil, 0, []string{`note: the template's test "deleting every row" is left out`},
		"template", "render", "destructive-sql", "--set", "tool_names=run_sql", "--set", "require_where=false", "-o", "data")

	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"missing required", []string{"tool-allow-list"}, []string{"parameters.allowed_tools: is required (required)"}},
		{"bad regex", []string{"prompt-injection", "--set", "pattern=(ignore"}, []string{"parameters.pattern:", "(invalid_regex)"}},
		{"enum", []string{"us-ssn", "--set", "decision=allow"}, []string{"parameters.decision: must be one of deny, warn, log (enum)"}},
		{"number", []string{"spend-limit", "--set", "tools=pay", "--set", "max_amount=lots"}, []string{"parameters.max_amount: must be a number (type)"}},
		{"boolean", []string{"destructive-sql", "--set", "tool_names=q", "--set", "require_where=perhaps"}, []string{"parameters.require_where: must be a boolean (type)"}},
		{"unknown parameter", []string{"us-ssn", "--set", "stage=pre"}, []string{"parameters.stage: is not a parameter of this template (unknown_field)"}},
		{"set twice", []string{"us-ssn", "--set", "decision=warn", "--set", "decision=log"}, []string{"--set decision is given twice"}},
		{"unknown template", []string{"nope"}, []string{`no template named "nope"`}},
		{"bad control name", []string{"us-ssn", "--name", "a b"}, []string{"--name: "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			expectGuard(t, nil, 1, c.want, append([]string{"template", "render"}, c.args...)...)
		})
	}
	expectGuard(t, nil, 2, []string{"usage: guard template"}, "template")
	expectGuard(t, nil, 2, []string{"-o must be yaml, json or data"}, "template", "render", "us-ssn", "-o", "toml")
}

// TestTemplateRenderApplies: a rendered control, applied to a running server with an agents file, decides
// as its template says.
func TestTemplateRenderApplies(t *testing.T) {
	dir := t.TempDir()
	yml := expectGuard(t, nil, 0, nil, "template", "render", "us-ssn", "--set", "stages=pre", "--name", "no-ssn")
	controls := filepath.Join(dir, "controls.yaml")
	agents := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(controls, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agents, []byte("agents:\n  - {name: bot, controls: [no-ssn]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServer(t, map[string]string{"DB_URL": filepath.Join(dir, "guard.db"), "GUARD_API_KEY_ENABLED": "true",
		"GUARD_API_KEYS": "regular-secret-key", "GUARD_ADMIN_API_KEYS": "admin-secret-key"}, "serve", "--migrate")
	admin := []string{"GUARD_URL=" + p.base, "GUARD_API_KEY=admin-secret-key"}
	expectGuard(t, admin, 0, []string{"created control no-ssn", "linked no-ssn to agent bot", "Applied."}, "apply", "-f", controls, "-f", agents)
	for input, want := range map[string]string{"my social security number is 536-22-8410": "deny", "my order number is 42": "allow"} {
		if got := p.evalWithKey(t, "regular-secret-key", "bot", input); got != want {
			t.Errorf("%q: %s, want %s", input, got, want)
		}
	}
}
