package guard

import (
	"context"
	"encoding/json"
	"time"
)

// AuditEntry is one control-plane change as the audit trail records it (GET /api/v1/audit): who (the
// API key's name, never the key), when, through which route, and what changed.
type AuditEntry struct {
	ID      int64     `json:"id"`
	Time    time.Time `json:"timestamp"`
	KeyName string    `json:"key_name"` // "" when authentication is off
	Method  string    `json:"method"`
	Route   string    `json:"route"` // the route's pattern, e.g. /api/v1/controls/{control_id}
	Path    string    `json:"path"`  // the request's path
	Action  string    `json:"action"`
	// Agents are the agents the change reached: the agent of an agent route, the agents a control was
	// linked to when it changed. A key scoped to agents reads the entries of its agents and those
	// reaching none (an unlinked control's).
	Agents    []string `json:"agents"`
	ControlID int64    `json:"control_id,omitempty"`
	// Version is the control's version after the change (0 when the change made none, e.g. a link).
	Version   int    `json:"version,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	// Changes lists what changed, path by path (the diff between the control's versions; for an agent, of
	// its description, version and metadata), as "~ data.action.decision: \"deny\" -> \"warn\"" lines.
	Changes []string `json:"changes"`
	// Detail holds what else the route reports (e.g. the agents a deleted control was unlinked from).
	Detail json.RawMessage `json:"detail,omitempty"`
}

// AuditQuery narrows the audit trail; zero fields do not filter.
type AuditQuery struct {
	KeyName   string
	AgentName string
	ControlID int64
	Action    string
	Since     time.Time
	Until     time.Time
	// Scope keeps the entries reaching one of these agents, and those reaching none about a live control
	// linked to one of them or to none (a scoped key's view).
	Scope AgentScope
}

// AuditStore records and lists audit entries; the store package implements it.
type AuditStore interface {
	InsertAudit(ctx context.Context, e AuditEntry) (int64, error)
	// ListAudit lists entries newest first.
	ListAudit(ctx context.Context, q AuditQuery, page PageRequest) ([]AuditEntry, PageInfo, error)
}
