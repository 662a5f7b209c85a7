package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/guardrail-control/guard"
)

// PageOptions asks for one page of a list: Cursor is "" for the first page or the NextCursor of the
// previous page; Limit 0 means the server's default (20).
type PageOptions struct {
	Cursor string
	Limit  int
}

func (p PageOptions) values() url.Values {
	q := url.Values{}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	return q
}

// ControlListOptions filters GET /controls; zero fields do not filter.
type ControlListOptions struct {
	PageOptions
	Name     string // substring of the name
	Enabled  *bool
	Tag      string
	StepType string
	Stage    guard.Stage
}

// ControlPage is one page of GET /controls.
type ControlPage struct {
	Controls   []guard.ControlSummary `json:"controls"`
	Pagination guard.PageInfo         `json:"pagination"`
}

// VersionPage is one page of a control's history.
type VersionPage struct {
	Versions   []guard.ControlVersion `json:"versions"`
	Pagination guard.PageInfo         `json:"pagination"`
}

// wireData returns a copy of d ready to send: an empty execution becomes server and nil tags an empty
// list, so that a ControlData built in Go with zero values is what its author meant.
func wireData(d guard.ControlData) guard.ControlData {
	if d.Execution == "" {
		d.Execution = guard.ExecutionServer
	}
	if d.Tags == nil {
		d.Tags = []string{}
	}
	return d
}

func controlPath(id int64) string { return "/controls/" + strconv.FormatInt(id, 10) }

// CreateControl creates a control (PUT /controls) and returns its id. With nil data the control exists
// disabled and without a condition until PutControlData.
func (c *HTTPClient) CreateControl(ctx context.Context, name string, data *guard.ControlData) (int64, error) {
	body := struct {
		Name string             `json:"name"`
		Data *guard.ControlData `json:"data,omitempty"`
	}{Name: name}
	if data != nil {
		d := wireData(*data)
		body.Data = &d
	}
	var out struct {
		ControlID int64 `json:"control_id"`
	}
	_, err := c.do(ctx, call{method: http.MethodPut, path: "/controls", in: body, out: &out})
	return out.ControlID, err
}

// ListControls returns one page of controls, newest first (GET /controls).
func (c *HTTPClient) ListControls(ctx context.Context, opts ControlListOptions) (ControlPage, error) {
	q := opts.values()
	if opts.Name != "" {
		q.Set("name", opts.Name)
	}
	if opts.Enabled != nil {
		q.Set("enabled", strconv.FormatBool(*opts.Enabled))
	}
	if opts.Tag != "" {
		q.Set("tag", opts.Tag)
	}
	if opts.StepType != "" {
		q.Set("step_type", opts.StepType)
	}
	if opts.Stage != "" {
		q.Set("stage", string(opts.Stage))
	}
	var out ControlPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/controls", query: q, out: &out})
	return out, err
}

// GetControl returns a control with its data (GET /controls/{id}).
func (c *HTTPClient) GetControl(ctx context.Context, id int64) (guard.ControlRecord, error) {
	var out guard.ControlRecord
	_, err := c.do(ctx, call{method: http.MethodGet, path: controlPath(id), out: &out})
	return out, err
}

// PatchControl renames and/or enables or disables a control (PATCH /controls/{id}).
func (c *HTTPClient) PatchControl(ctx context.Context, id int64, patch guard.ControlPatch) (guard.ControlRecord, error) {
	var out guard.ControlRecord
	_, err := c.do(ctx, call{method: http.MethodPatch, path: controlPath(id), in: patch, out: &out})
	return out, err
}

// DeleteControl soft-deletes a control and returns the agents it was unlinked from. Without force a
// control linked to agents is refused with a 409 CONTROL_IN_USE *APIError.
func (c *HTTPClient) DeleteControl(ctx context.Context, id int64, force bool) ([]string, error) {
	q := url.Values{}
	if force {
		q.Set("force", "true")
	}
	var out struct {
		UnlinkedAgents []string `json:"unlinked_agents"`
	}
	_, err := c.do(ctx, call{method: http.MethodDelete, path: controlPath(id), query: q, out: &out})
	return out.UnlinkedAgents, err
}

// GetControlData returns a control's data (404 when it has none yet).
func (c *HTTPClient) GetControlData(ctx context.Context, id int64) (guard.ControlData, error) {
	var out struct {
		Data guard.ControlData `json:"data"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, path: controlPath(id) + "/data", out: &out})
	return out.Data, err
}

// PutControlData replaces a control's data and returns the new version number.
func (c *HTTPClient) PutControlData(ctx context.Context, id int64, data guard.ControlData) (int, error) {
	body := struct {
		Data guard.ControlData `json:"data"`
	}{Data: wireData(data)}
	var out struct {
		Version int `json:"version"`
	}
	_, err := c.do(ctx, call{method: http.MethodPut, path: controlPath(id) + "/data", in: body, out: &out})
	return out.Version, err
}

// ValidateControlData asks the server to validate data without saving it. It returns nil when valid and
// an *APIError (422, every problem in Problems) when not.
func (c *HTTPClient) ValidateControlData(ctx context.Context, data guard.ControlData) error {
	body := struct {
		Data guard.ControlData `json:"data"`
	}{Data: wireData(data)}
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/controls/validate", in: body})
	return err
}

// ListControlVersions returns one page of a control's history, newest first.
func (c *HTTPClient) ListControlVersions(ctx context.Context, id int64, page PageOptions) (VersionPage, error) {
	var out VersionPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: controlPath(id) + "/versions", query: page.values(), out: &out})
	return out, err
}

// GetControlVersion returns one version of a control: the full snapshot after that change.
func (c *HTTPClient) GetControlVersion(ctx context.Context, id int64, version int) (guard.ControlVersion, error) {
	var out guard.ControlVersion
	_, err := c.do(ctx, call{method: http.MethodGet, path: controlPath(id) + "/versions/" + strconv.Itoa(version), out: &out})
	out.ControlID = id
	return out, err
}

// RestoreControlVersion makes a control what it was at version, as a new version, and returns it.
func (c *HTTPClient) RestoreControlVersion(ctx context.Context, id int64, version int) (guard.ControlRecord, error) {
	var out guard.ControlRecord
	_, err := c.do(ctx, call{method: http.MethodPost, path: controlPath(id) + "/versions/" + strconv.Itoa(version) + "/restore", out: &out})
	return out, err
}
