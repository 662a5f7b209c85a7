package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/guardrail-control/guard"
)

// ControlTemplateParameter is a parameter of a control template (see docs/templates.md).
type ControlTemplateParameter struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"` // string, string_list, enum, boolean, regex or number
	Description string   `json:"description"`
	Required    bool     `json:"required"`
	Default     any      `json:"default,omitempty"`
	Example     any      `json:"example,omitempty"`
	Values      []string `json:"values,omitempty"` // allowed values of an enum, or of each item of a string_list
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
}

// ControlTemplate is a control template the server can render. DataTemplate is set by GetControlTemplate
// only: the template's control data, in which a string "{{name}}" stands for a parameter.
type ControlTemplate struct {
	Name         string                     `json:"name"`
	Title        string                     `json:"title"`
	Description  string                     `json:"description"`
	Category     string                     `json:"category"`
	Evaluators   []string                   `json:"evaluators"`
	Parameters   []ControlTemplateParameter `json:"parameters"`
	DataTemplate json.RawMessage            `json:"data_template,omitempty"`
}

// RenderedControl is the answer of a render: valid control data, ready for CreateControl, and the template's
// tests left out of it because the parameters contradict them.
type RenderedControl struct {
	ControlData  guard.ControlData `json:"control_data"`
	OmittedTests []struct {
		Name    string `json:"name"`
		Message string `json:"message"`
	} `json:"omitted_tests"`
}

func templatePath(name string) string { return "/control-templates/" + url.PathEscape(name) }

// ListControlTemplates lists the control templates the server can render (GET /control-templates).
func (c *HTTPClient) ListControlTemplates(ctx context.Context) ([]ControlTemplate, error) {
	var out struct {
		Templates []ControlTemplate `json:"templates"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/control-templates", out: &out})
	return out.Templates, err
}

// GetControlTemplate returns one template with its DataTemplate; an unknown name is an *APIError (404).
func (c *HTTPClient) GetControlTemplate(ctx context.Context, name string) (ControlTemplate, error) {
	var out ControlTemplate
	_, err := c.do(ctx, call{method: http.MethodGet, path: templatePath(name), out: &out})
	return out, err
}

// RenderControlTemplate renders a template with parameters (name to a value of the parameter's type: a string,
// []string, bool or number) on the server, storing nothing. A bad parameter is an *APIError (422) whose
// Problems name each one at parameters.<name>. An admin key is needed when authentication is on.
func (c *HTTPClient) RenderControlTemplate(ctx context.Context, name string, params map[string]any) (RenderedControl, error) {
	body := struct {
		Parameters map[string]any `json:"parameters"`
	}{params}
	var out RenderedControl
	_, err := c.do(ctx, call{method: http.MethodPost, path: templatePath(name) + "/render", in: body, out: &out})
	return out, err
}
