package ui_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestCreateControlFromTemplate: on "New control", pick a template, see the server's problem next to a
// missing parameter, fill it, and land in the editor prefilled with the rendered control, tests included;
// creating it stores what the template rendered.
func TestCreateControlFromTemplate(t *testing.T) {
	a := startApp(t, appOptions{})
	a.open("#/controls")
	a.click("#new-control")
	a.waitRendered("#/controls/new")
	a.waitJS("the templates", `document.getElementById('templates').dataset.loaded === 'true'`)
	if n := eval[int](a, "template options", `document.querySelectorAll('#tpl-select option[value]:not([value=""])').length`); n < 5 {
		t.Fatalf("%d templates offered", n)
	}
	a.setValue("#tpl-select", "tool-allow-list")
	a.waitJS("the parameters form", `!!document.getElementById('tpl-param-allowed_tools') && !!document.getElementById('tpl-param-case_sensitive')`)
	if !eval[bool](a, "boolean default", `document.getElementById('tpl-param-case_sensitive').checked`) {
		t.Errorf("case_sensitive does not show its default (true)")
	}
	// Every parameter type's input is labelled (the checks of a11y_browser_test.go), here and on a
	// template with enum, regex and list-of-values parameters.
	if probs := eval[[]string](a, "a11y checks", a11yProblems); len(probs) > 0 {
		t.Errorf("tool-allow-list form: %v", probs)
	}
	a.setValue("#tpl-select", "sql-injection")
	a.waitJS("the sql-injection form", `!!document.getElementById('tpl-param-pattern') && !!document.getElementById('tpl-param-stages-0')`)
	if probs := eval[[]string](a, "a11y checks", a11yProblems); len(probs) > 0 {
		t.Errorf("sql-injection form: %v", probs)
	}
	a.setValue("#tpl-select", "tool-allow-list")
	a.waitJS("the parameters form again", `!!document.getElementById('tpl-param-allowed_tools')`)

	// The required list is empty: the server's problem is shown next to it.
	a.click("#tpl-render")
	a.waitJS("the problem of allowed_tools", `!!document.querySelector('.problems[data-field="parameters.allowed_tools"] .problem')`)
	if got := a.text(`.problems[data-field="parameters.allowed_tools"] .problem`); got != "is required" {
		t.Errorf("problem = %q", got)
	}

	a.setValue("#tpl-param-allowed_tools", "search\nread_file")
	a.click("#tpl-render")
	a.waitJS("the editor, prefilled", `!!document.getElementById('from-template') && document.getElementById('ctl-name').value === 'tool-allow-list'`)
	if cond := eval[string](a, "condition", `document.getElementById('ctl-condition').value`); !strings.Contains(cond, `"read_file"`) || !strings.Contains(cond, `"no_match"`) {
		t.Errorf("condition in the editor: %s", cond)
	}
	a.waitJS("the template's tests, passing", `document.querySelectorAll('#tests-rows .test-row').length === 3 && [...document.querySelectorAll('#tests-rows .test-outcome')].every(x => x.textContent.startsWith('pass'))`)
	a.setValue("#ctl-name", "agent-tools")
	a.waitJS("the form to be valid", `!!document.getElementById('valid-mark')`)
	a.click("#save-control")
	a.waitJS("the editor of the new control", `/^#\/controls\/\d+$/.test(location.hash) && document.getElementById('main').getAttribute('aria-busy') === 'false'`)

	id := strings.TrimPrefix(eval[string](a, "hash", `location.hash`), "#/controls/")
	var got struct {
		Name string `json:"name"`
		Data struct {
			Scope     map[string]any `json:"scope"`
			Condition struct {
				Evaluator struct {
					Name   string         `json:"name"`
					Config map[string]any `json:"config"`
				} `json:"evaluator"`
			} `json:"condition"`
			Action struct {
				Decision string         `json:"decision"`
				Metadata map[string]any `json:"metadata"`
			} `json:"action"`
			Tests []any `json:"tests"`
		} `json:"data"`
	}
	a.call("GET", "/api/v1/controls/"+id, nil, http.StatusOK, &got)
	cfg := got.Data.Condition.Evaluator.Config
	if got.Name != "agent-tools" || got.Data.Condition.Evaluator.Name != "list" || !reflect.DeepEqual(cfg["values"], []any{"search", "read_file"}) ||
		cfg["match_on"] != "no_match" || got.Data.Action.Decision != "deny" || got.Data.Action.Metadata["template"] != "tool-allow-list" ||
		len(got.Data.Tests) != 3 || !reflect.DeepEqual(got.Data.Scope["step_types"], []any{"tool"}) {
		t.Fatalf("stored control = %+v", got)
	}
	a.noPageErrors()
}
