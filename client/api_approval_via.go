package client

import (
	"context"
	"net/http"
	"net/url"
)

// DecideApprovalVia is DecideApproval that also says how the decision was made (via: "api", or
// guard.DecidedViaMCPElicitation when the user of an MCP client answered the guard MCP gateway); the server
// records it as the request's decided_via ("" sends none, as DecideApproval does). It needs an admin key or
// a key with the approve permission.
func (c *HTTPClient) DecideApprovalVia(ctx context.Context, id string, approve bool, comment, via string) (Approval, error) {
	body := map[string]any{"decision": "reject"}
	if via != "" {
		body["via"] = via // older servers refuse the field; DecideApproval sends none
	}
	if approve {
		body["decision"] = "approve"
	}
	if comment != "" {
		body["comment"] = comment
	}
	var out Approval
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/approvals/" + url.PathEscape(id), in: body, out: &out})
	return out, err
}
