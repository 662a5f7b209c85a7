package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/guardrail-control/guard"
)

// Approval is an approval request as the server shows it (docs/approvals.md): the stored record, its URL,
// and, while it is approved, unused and unexpired, the grant to present in the step's context.
type Approval struct {
	guard.ApprovalRecord
	Grant string `json:"grant,omitempty"`
	URL   string `json:"url"`
}

// ApprovalListOptions filters ListApprovals; zero fields do not filter.
type ApprovalListOptions struct {
	AgentName   string
	Status      string // pending, approved, rejected, expired
	ControlID   int64
	PayloadHash string // guard.PayloadHash of a step: the requests of that payload
	Limit       int    // 1..100; 0: the server's default (20)
}

// ListApprovals returns approval requests, pending first, then the others, newest first
// (GET /approvals).
func (c *HTTPClient) ListApprovals(ctx context.Context, opts ApprovalListOptions) ([]Approval, error) {
	q := url.Values{}
	if opts.AgentName != "" {
		q.Set("agent_name", opts.AgentName)
	}
	if opts.Status != "" {
		q.Set("status", opts.Status)
	}
	if opts.ControlID != 0 {
		q.Set("control_id", strconv.FormatInt(opts.ControlID, 10))
	}
	if opts.PayloadHash != "" {
		q.Set("payload_hash", opts.PayloadHash)
	}
	if opts.Limit != 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	var out struct {
		Approvals []Approval `json:"approvals"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/approvals", query: q, out: &out})
	return out.Approvals, err
}

// maxApprovalWait is the longest wait one GET /approvals/{id} asks for: the server's bound, and below the
// client's default request timeout.
const maxApprovalWait = 25 * time.Second

// GetApproval returns one approval request (GET /approvals/{id}). With wait > 0 the server answers as soon
// as the request is decided, or after wait with it still pending; one request waits at most 25 s, and
// one second less than the client's request timeout (WithTimeout).
func (c *HTTPClient) GetApproval(ctx context.Context, id string, wait time.Duration) (Approval, error) {
	q := url.Values{}
	if wait > 0 {
		w := min(wait, maxApprovalWait)
		if c.timeout > 2*time.Second && w > c.timeout-time.Second {
			w = c.timeout - time.Second
		}
		q.Set("wait", strconv.Itoa(max(1, int(w.Seconds()))))
	}
	var out Approval
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/approvals/" + url.PathEscape(id), query: q, out: &out})
	return out, err
}

// DecideApproval approves (approve true) or rejects an approval request, with an optional comment
// (POST /approvals/{id}; an admin key). An approval answers the grant.
func (c *HTTPClient) DecideApproval(ctx context.Context, id string, approve bool, comment string) (Approval, error) {
	return c.DecideApprovalVia(ctx, id, approve, comment, "")
}
