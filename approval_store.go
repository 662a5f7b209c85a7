package guard

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Errors of an ApprovalStore.
var (
	ErrApprovalNotFound = errors.New("guard: approval request not found")
	// ErrApprovalDecided: the request was already approved or rejected, or it expired undecided.
	ErrApprovalDecided = errors.New("guard: approval request is no longer pending")
)

// Statuses of a stored approval request (ApprovalRecord.Status).
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalRejected = "rejected"
	// ApprovalExpired is a pending request past its expiry. It is stored only when a new request of the
	// same step replaces it (one pending request per step, migration 00013); otherwise it is read so.
	ApprovalExpired = "expired"
)

// ApprovalRecord is one stored approval request, with its decision and the use of its grant.
type ApprovalRecord struct {
	ID             string `json:"id"`
	AgentName      string `json:"agent_name"`
	ControlID      int64  `json:"control_id"`
	ControlVersion int    `json:"control_version"`
	ControlName    string `json:"control_name"`
	StepType       string `json:"step_type"`
	StepName       string `json:"step_name"`
	Stage          Stage  `json:"stage"`
	// PayloadHash is PayloadHash of the step at the stage: what a grant is bound to.
	PayloadHash string `json:"payload_hash"`
	// Step is the step as it would run, redacted as captured steps are (JSON).
	Step      json.RawMessage `json:"step"`
	Message   string          `json:"message,omitempty"`
	Approvers []string        `json:"approvers"`
	// Controls are the controls with action.approval the request covers, ControlID's first: a step that
	// several of them refuse has one request for them all, decided once, whose grant lets them all
	// through (docs/approvals.md). One entry for a request of one control.
	Controls  []ApprovalControl `json:"controls"`
	Status    string            `json:"status"`
	CreatedAt time.Time         `json:"created_at"`
	ExpiresAt time.Time         `json:"expires_at"`
	// TTL is the control's approval TTL: the grant is valid this long after the approval.
	TTL       time.Duration `json:"-"`
	DecidedAt *time.Time    `json:"decided_at,omitempty"`
	// DecidedBy identifies the key that decided (a key fingerprint, docs/approvals.md).
	DecidedBy string `json:"decided_by,omitempty"`
	// DecidedVia is how the decision was made, as the deciding key said: DecidedViaMCPElicitation, or ""
	// (the API, the CLI, the dashboard).
	DecidedVia     string     `json:"decided_via,omitempty"`
	Comment        string     `json:"comment,omitempty"`
	GrantExpiresAt *time.Time `json:"grant_expires_at,omitempty"`
	UsedAt         *time.Time `json:"used_at,omitempty"`
	// UsedExecutionID is the control_execution_id of the evaluation the grant let through (its event).
	UsedExecutionID string `json:"used_execution_id,omitempty"`
}

// ApprovalQuery filters ListApprovals; zero fields do not filter. Results list pending requests first,
// then the others, each newest first.
type ApprovalQuery struct {
	AgentName string
	Status    string // pending, approved, rejected or expired
	ControlID int64
	// PayloadHash finds the requests of one payload (an auditor recomputes it from a step that ran).
	PayloadHash string
	// Scope keeps the requests of the agents an API key reaches (the zero scope: every agent).
	Scope AgentScope
	Limit int
}

// ApprovalDecision is what an approver decided.
type ApprovalDecision struct {
	Approve   bool
	Comment   string
	DecidedBy string
	// Via is how the decision was made (ApprovalRecord.DecidedVia).
	Via string
	At  time.Time
}

// DecidedViaMCPElicitation is the DecidedVia of a decision the user of an MCP client made when the guard
// MCP gateway asked them (MCP elicitation) and recorded with its approver key (docs/approvals.md).
const DecidedViaMCPElicitation = "mcp_elicitation"

// ApprovalStore keeps approval requests and consumes their grants. The store package implements it over
// SQLite and PostgreSQL.
type ApprovalStore interface {
	// OpenApproval stores a pending request, or returns the pending, unexpired request of the same agent,
	// control, control version, step, stage and payload hash (created false): an agent that retries
	// before anyone decided does not open a second request.
	OpenApproval(ctx context.Context, rec ApprovalRecord) (out ApprovalRecord, created bool, err error)
	GetApproval(ctx context.Context, id string) (ApprovalRecord, error)
	ListApprovals(ctx context.Context, q ApprovalQuery) ([]ApprovalRecord, error)
	// DecideApproval records a decision on a pending, unexpired request (ErrApprovalDecided otherwise);
	// an approval sets the grant's expiry to the decision time plus the request's TTL.
	DecideApproval(ctx context.Context, id string, d ApprovalDecision) (ApprovalRecord, error)
	// ConsumeApproval marks an approved request's grant used, atomically: it reports false when the
	// grant was used already, expired, or the request is not approved. Of concurrent callers (on any
	// replica), exactly one gets true.
	ConsumeApproval(ctx context.Context, id, executionID string, at time.Time) (bool, error)
	// ApprovalKey returns the database's secret for signing grants (created by the migration, like the
	// cursor secret: every replica on one database verifies the grants the others signed).
	ApprovalKey(ctx context.Context) ([]byte, error)
}
