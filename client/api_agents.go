package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/guardrail-control/guard"
)

// AgentInfo is the agent part of an initAgent request.
type AgentInfo struct {
	Name        string         `json:"agent_name"`
	Description string         `json:"agent_description,omitempty"`
	Version     string         `json:"agent_version,omitempty"`
	Metadata    map[string]any `json:"agent_metadata,omitempty"`
}

// InitAgentRequest is the body of POST /agents/initAgent.
type InitAgentRequest struct {
	Agent        AgentInfo          `json:"agent"`
	Steps        []guard.StepSchema `json:"steps"`
	ConflictMode guard.ConflictMode `json:"conflict_mode,omitempty"`
}

// InitAgentResponse is the answer of POST /agents/initAgent.
type InitAgentResponse struct {
	Created  bool                 `json:"created"`
	Agent    guard.Agent          `json:"agent"`
	Controls []guard.AgentControl `json:"controls"`
}

// AgentListOptions filters GET /agents.
type AgentListOptions struct {
	PageOptions
	Name string // substring of the agent name
}

// AgentPage is one page of GET /agents.
type AgentPage struct {
	Agents     []guard.AgentSummary `json:"agents"`
	Pagination guard.PageInfo       `json:"pagination"`
}

// AgentDetail is an agent with its steps and, from GetAgent, its controls.
type AgentDetail struct {
	Agent    guard.Agent          `json:"agent"`
	Steps    []guard.StepSchema   `json:"steps"`
	Controls []guard.AgentControl `json:"controls,omitempty"`
}

// AgentPatch is the body of PATCH /agents/{name}; nil fields are left alone, a non-nil Metadata replaces
// the stored one.
type AgentPatch struct {
	Description *string         `json:"agent_description,omitempty"`
	Version     *string         `json:"agent_version,omitempty"`
	Metadata    map[string]any  `json:"agent_metadata,omitempty"`
	RemoveSteps []guard.StepRef `json:"remove_steps,omitempty"`
}

func agentPath(name string) string { return "/agents/" + url.PathEscape(name) }

// InitAgent registers or updates an agent with its steps.
func (c *HTTPClient) InitAgent(ctx context.Context, req InitAgentRequest) (InitAgentResponse, error) {
	if req.Steps == nil {
		req.Steps = []guard.StepSchema{}
	}
	var out InitAgentResponse
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/agents/initAgent", in: req, out: &out})
	return out, err
}

// ListAgents returns one page of agents, newest first.
func (c *HTTPClient) ListAgents(ctx context.Context, opts AgentListOptions) (AgentPage, error) {
	q := opts.values()
	if opts.Name != "" {
		q.Set("name", opts.Name)
	}
	var out AgentPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/agents", query: q, out: &out})
	return out, err
}

// GetAgent returns an agent with its steps and controls.
func (c *HTTPClient) GetAgent(ctx context.Context, name string) (AgentDetail, error) {
	var out AgentDetail
	_, err := c.do(ctx, call{method: http.MethodGet, path: agentPath(name), out: &out})
	return out, err
}

// PatchAgent changes an agent's description, version, metadata or removes steps.
func (c *HTTPClient) PatchAgent(ctx context.Context, name string, patch AgentPatch) (AgentDetail, error) {
	var out AgentDetail
	_, err := c.do(ctx, call{method: http.MethodPatch, path: agentPath(name), in: patch, out: &out})
	return out, err
}

// AgentControls returns the controls linked to an agent and the ETag of that list. With etag set to the
// tag of a previous answer it sends If-None-Match; an unchanged list then comes back as notModified true
// with nil controls (a 304).
func (c *HTTPClient) AgentControls(ctx context.Context, name, etag string) (controls []guard.AgentControl, newETag string, notModified bool, err error) {
	var out struct {
		Controls []guard.AgentControl `json:"controls"`
	}
	cl := call{method: http.MethodGet, path: agentPath(name) + "/controls", out: &out, accept304: true}
	if etag != "" {
		cl.header = http.Header{"If-None-Match": {etag}}
	}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return nil, "", false, err
	}
	if resp.StatusCode == http.StatusNotModified {
		tag := resp.Header.Get("ETag")
		if tag == "" {
			tag = etag
		}
		return nil, tag, true, nil
	}
	if out.Controls == nil {
		out.Controls = []guard.AgentControl{}
	}
	return out.Controls, resp.Header.Get("ETag"), false, nil
}

// LinkControl links a control to an agent (idempotent).
func (c *HTTPClient) LinkControl(ctx context.Context, agentName string, controlID int64) error {
	_, err := c.do(ctx, call{method: http.MethodPost, path: agentPath(agentName) + "/controls/" + strconv.FormatInt(controlID, 10)})
	return err
}

// UnlinkControl removes a control from an agent and reports whether it was linked.
func (c *HTTPClient) UnlinkControl(ctx context.Context, agentName string, controlID int64) (bool, error) {
	var out struct {
		Removed bool `json:"removed"`
	}
	_, err := c.do(ctx, call{method: http.MethodDelete, path: agentPath(agentName) + "/controls/" + strconv.FormatInt(controlID, 10), out: &out})
	return out.Removed, err
}
