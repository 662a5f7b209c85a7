package client

import (
	"context"
	"errors"
	"testing"
)

// TestLiveControlTemplates: through the Go client against a real server: list the templates, read one,
// render it (a bad parameter is a 422 naming it), and create a control from the rendered data.
func TestLiveControlTemplates(t *testing.T) {
	ls := startLiveServer(t)
	admin := ls.admin(t)
	ctx := context.Background()
	list, err := admin.ListControlTemplates(ctx)
	if err != nil || len(list) == 0 {
		t.Fatalf("ListControlTemplates = %d, %v", len(list), err)
	}
	found := false
	for _, tpl := range list {
		if tpl.Name == "tool-allow-list" && len(tpl.Parameters) > 0 && tpl.Parameters[0].Name == "allowed_tools" && tpl.Parameters[0].Required {
			found = true
		}
	}
	if !found {
		t.Fatalf("tool-allow-list is not listed with its required parameter: %+v", list)
	}
	one, err := admin.GetControlTemplate(ctx, "tool-allow-list")
	if err != nil || len(one.DataTemplate) == 0 {
		t.Fatalf("GetControlTemplate = %+v, %v", one, err)
	}
	var apiErr *APIError
	if _, err := admin.GetControlTemplate(ctx, "nope"); !errors.As(err, &apiErr) || apiErr.Status != 404 {
		t.Fatalf("unknown template: %v", err)
	}
	_, err = admin.RenderControlTemplate(ctx, "tool-allow-list", map[string]any{"allowed_tools": "search"})
	if !errors.As(err, &apiErr) || apiErr.Status != 422 || len(apiErr.Problems) != 1 || apiErr.Problems[0].Field != "parameters.allowed_tools" {
		t.Fatalf("a string for a list: %v", err)
	}
	r, err := admin.RenderControlTemplate(ctx, "tool-allow-list", map[string]any{"allowed_tools": []string{"search", "read_file"}})
	if err != nil || len(r.ControlData.Tests) != 3 || len(r.OmittedTests) != 0 {
		t.Fatalf("RenderControlTemplate = %+v, %v", r, err)
	}
	if _, err := admin.CreateControl(ctx, "agent-tools", &r.ControlData); err != nil {
		t.Fatalf("CreateControl from the rendered data: %v", err)
	}
}
