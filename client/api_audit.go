package client

import (
	"context"
	"net/http"
	"strconv"
	"time"

	guard "github.com/guardrail-control/guard"
)

// AuditOptions filters GET /audit; zero fields do not filter.
type AuditOptions struct {
	PageOptions
	KeyName   string
	AgentName string
	ControlID int64
	Action    string
	Since     time.Time
	Until     time.Time
}

// AuditPage is one page of the audit trail, newest first.
type AuditPage struct {
	Entries    []guard.AuditEntry `json:"entries"`
	Pagination guard.PageInfo     `json:"pagination"`
}

// Audit reads one page of the audit trail (GET /audit): who changed which control or agent, when, and
// what changed.
func (c *HTTPClient) Audit(ctx context.Context, opts AuditOptions) (AuditPage, error) {
	q := opts.values()
	for k, v := range map[string]string{"key_name": opts.KeyName, "agent_name": opts.AgentName, "action": opts.Action} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if opts.ControlID != 0 {
		q.Set("control_id", strconv.FormatInt(opts.ControlID, 10))
	}
	if !opts.Since.IsZero() {
		q.Set("since", opts.Since.UTC().Format(time.RFC3339Nano))
	}
	if !opts.Until.IsZero() {
		q.Set("until", opts.Until.UTC().Format(time.RFC3339Nano))
	}
	var out AuditPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/audit", query: q, out: &out})
	return out, err
}
