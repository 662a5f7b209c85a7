package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/capture"
	"github.com/guardrail-control/guard/server/problem"
)

// Problem codes of the approval routes.
const (
	codeApprovalNotFound    = "APPROVAL_NOT_FOUND"
	codeApprovalDecided     = "APPROVAL_DECIDED"
	codeApprovalUnavailable = "APPROVALS_UNAVAILABLE"
)

// maxApprovalWait bounds GET /approvals/{id}?wait=: below the server's write timeout (60 s).
const maxApprovalWait = 50

// approvalConfig configures approvals (WithApprovalWebhook, WithApprovalRedact).
type approvalConfig struct {
	webhookURL string
	redact     []capture.RedactPath
}

// WithApprovalWebhook makes the server POST a Slack-compatible JSON body to url when an approval request
// opens (GUARD_APPROVAL_WEBHOOK_URL): in the background, with bounded retries, never delaying an evaluation.
func WithApprovalWebhook(url string) Option { return func(c *config) { c.approvals.webhookURL = url } }

// WithApprovalRedact replaces what paths select in the step an approval request keeps and shows, as
// captured steps are redacted (GUARD_CAPTURE_REDACT).
func WithApprovalRedact(paths []capture.RedactPath) Option {
	return func(c *config) { c.approvals.redact = append([]capture.RedactPath(nil), paths...) }
}

// approvals is the server's approval state: who waits for a decision, and the webhook sender.
type approvals struct {
	mu   sync.Mutex
	wake chan struct{} // closed and replaced on every decision this replica records
	hook *webhook      // nil without a webhook URL
}

func newApprovals(cfg approvalConfig, s *Server) *approvals {
	a := &approvals{wake: make(chan struct{})}
	if cfg.webhookURL != "" {
		a.hook = newWebhook(cfg.webhookURL, s.log)
	}
	return a
}

// decided wakes the requests waiting on this replica.
func (a *approvals) decided() {
	a.mu.Lock()
	close(a.wake)
	a.wake = make(chan struct{})
	a.mu.Unlock()
}

func (a *approvals) waitChan() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.wake
}

// announce sends a new request to the webhook, if any, without waiting.
func (a *approvals) announce(rec *guard.ApprovalRecord) {
	if a.hook != nil {
		a.hook.enqueue(rec)
	}
}

// approvalView is a request as the API shows it: the record, and its grant while it can be used.
type approvalView struct {
	guard.ApprovalRecord
	Grant string `json:"grant,omitempty"`
	URL   string `json:"url"`
}

func (s *Server) approvalStore(w http.ResponseWriter, r *http.Request) (guard.ApprovalStore, bool) {
	as, ok := s.store.(guard.ApprovalStore)
	if !ok {
		s.writeErr(w, r, problem.New(http.StatusServiceUnavailable, codeApprovalUnavailable, "this server's store keeps no approvals"))
	}
	return as, ok
}

func (s *Server) view(ctx context.Context, as guard.ApprovalStore, rec guard.ApprovalRecord) (approvalView, error) {
	v := approvalView{ApprovalRecord: rec, URL: approvalPath(rec.ID)}
	if rec.Status == guard.ApprovalApproved && rec.UsedAt == nil && rec.GrantExpiresAt != nil && time.Now().Before(*rec.GrantExpiresAt) {
		key, err := as.ApprovalKey(ctx)
		if err != nil {
			return v, err
		}
		v.Grant = signGrant(key, &rec)
	}
	return v, nil
}

// scopedApproval reads a request as the request's key may see it: one of an agent outside a scoped key's
// agents is not found, as if it did not exist (the scoped keys' rule, server/scope.go).
func (s *Server) scopedApproval(ctx context.Context, as guard.ApprovalStore, id string) (guard.ApprovalRecord, error) {
	rec, err := as.GetApproval(ctx, id)
	if err != nil {
		return rec, err
	}
	if !KeyAllowsAgent(ctx, rec.AgentName) {
		return guard.ApprovalRecord{}, guard.ErrApprovalNotFound
	}
	return rec, nil
}

func approvalErr(err error) error {
	switch {
	case errors.Is(err, guard.ErrApprovalNotFound):
		return problem.New(http.StatusNotFound, codeApprovalNotFound, "approval request not found")
	case errors.Is(err, guard.ErrApprovalDecided):
		return problem.New(http.StatusConflict, codeApprovalDecided, "the approval request was already decided or has expired")
	}
	return err
}

// listApprovals is GET /api/v1/approvals: pending requests first, then the others, newest first;
// filters agent_name, status, control_id; limit 1..100.
func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	as, ok := s.approvalStore(w, r)
	if !ok {
		return
	}
	qv := r.URL.Query()
	var q guard.ApprovalQuery
	var probs []guard.Problem
	if v := qv.Get("agent_name"); v != "" {
		name, err := guard.NormalizeAgentName(v)
		if err != nil {
			probs = append(probs, guard.Problem{Field: "agent_name", Code: "invalid", Message: err.Error()})
		}
		q.AgentName = name
		if err == nil {
			if err := checkAgent(r.Context(), name, "agent_name"); err != nil {
				s.writeErr(w, r, err)
				return
			}
		}
	}
	switch st := qv.Get("status"); st {
	case "", guard.ApprovalPending, guard.ApprovalApproved, guard.ApprovalRejected, guard.ApprovalExpired:
		q.Status = st
	default:
		probs = append(probs, guard.Problem{Field: "status", Code: "enum", Message: "must be one of pending, approved, rejected, expired"})
	}
	if v := qv.Get("control_id"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			probs = append(probs, guard.Problem{Field: "control_id", Code: "type", Message: "must be a positive integer"})
		}
		q.ControlID = n
	}
	if v := qv.Get("payload_hash"); v != "" {
		if !strings.HasPrefix(v, guard.PayloadHashPrefix) || len(v) != len(guard.PayloadHashPrefix)+64 {
			probs = append(probs, guard.Problem{Field: "payload_hash", Code: "invalid", Message: "must be sha256: and 64 hex digits"})
		}
		q.PayloadHash = strings.ToLower(v)
	}
	limit, p := queryLimit(qv)
	if p != nil {
		probs = append(probs, *p)
	}
	q.Limit = limit
	if len(probs) > 0 {
		s.writeErr(w, r, problem.Validation("invalid query parameters", probs...))
		return
	}
	sc, err := s.agentScope(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	q.Scope = sc
	recs, err := as.ListApprovals(r.Context(), q)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := make([]approvalView, len(recs))
	for i := range recs {
		if out[i], err = s.view(r.Context(), as, recs[i]); err != nil {
			s.writeErr(w, r, err)
			return
		}
	}
	problem.Respond(w, r, s.log, http.StatusOK, map[string]any{"approvals": out, "limit": limit})
}

// getApproval is GET /api/v1/approvals/{approval_id}; with wait=N (seconds, up to maxApprovalWait) it
// answers as soon as the request is no longer pending, or after N seconds with it still pending.
func (s *Server) getApproval(w http.ResponseWriter, r *http.Request) {
	as, ok := s.approvalStore(w, r)
	if !ok {
		return
	}
	var wait time.Duration
	if v := r.URL.Query().Get("wait"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxApprovalWait {
			s.writeErr(w, r, invalidParam("wait", "range", "must be a whole number of seconds from 0 to "+strconv.Itoa(maxApprovalWait)))
			return
		}
		wait = time.Duration(n) * time.Second
	}
	ctx := r.Context()
	deadline := time.Now().Add(wait)
	id := r.PathValue("approval_id")
	for {
		woke := s.approvals.waitChan() // taken before the read: a decision after the read wakes us
		rec, err := s.scopedApproval(ctx, as, id)
		if err != nil {
			s.writeErr(w, r, approvalErr(err))
			return
		}
		left := time.Until(deadline)
		if rec.Status != guard.ApprovalPending || left <= 0 {
			v, err := s.view(ctx, as, rec)
			if err != nil {
				s.writeErr(w, r, err)
				return
			}
			problem.Respond(w, r, s.log, http.StatusOK, v)
			return
		}
		// A decision on this replica wakes the wait; one on another replica is seen by the next poll.
		t := time.NewTimer(min(left, 500*time.Millisecond))
		select {
		case <-woke:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		t.Stop()
	}
}

type decisionRequest struct {
	Decision string  `json:"decision"`
	Comment  *string `json:"comment"`
	Via      *string `json:"via"` // how the decision was made, as the deciding key says (decisionVias)
}

// decisionVias are the values of a decision's via: "api" (the default: the API, the CLI, the dashboard,
// stored as "") and guard.DecidedViaMCPElicitation.
var decisionVias = map[string]string{"api": "", guard.DecidedViaMCPElicitation: guard.DecidedViaMCPElicitation}

// maxDecisionComment bounds a decision's comment.
const maxDecisionComment = 2000

// decideApproval is POST /api/v1/approvals/{approval_id} {decision: approve|reject, comment?, via?}: an admin
// key, or a key with the approve permission (levelApprove), within its agents.
func (s *Server) decideApproval(w http.ResponseWriter, r *http.Request) {
	as, ok := s.approvalStore(w, r)
	if !ok {
		return
	}
	var req decisionRequest
	if err := problem.DecodeJSON(r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	var probs []guard.Problem
	switch req.Decision {
	case "approve", "reject":
	case "":
		probs = append(probs, guard.Problem{Field: "decision", Code: "required", Message: "is required: approve or reject"})
	default:
		probs = append(probs, guard.Problem{Field: "decision", Code: "enum", Message: "must be one of approve, reject"})
	}
	comment := ""
	if req.Comment != nil {
		comment = *req.Comment
		if len([]rune(comment)) > maxDecisionComment {
			probs = append(probs, guard.Problem{Field: "comment", Code: "too_long", Message: "must be at most 2000 characters"})
		}
	}
	via := ""
	if req.Via != nil {
		v, ok := decisionVias[*req.Via]
		if !ok {
			probs = append(probs, guard.Problem{Field: "via", Code: "enum", Message: "must be one of api, " + guard.DecidedViaMCPElicitation})
		}
		via = v
	}
	if len(probs) > 0 {
		s.writeErr(w, r, problem.Validation("the decision is not valid", probs...))
		return
	}
	if _, err := s.scopedApproval(r.Context(), as, r.PathValue("approval_id")); err != nil {
		s.writeErr(w, r, approvalErr(err))
		return
	}
	rec, err := as.DecideApproval(r.Context(), r.PathValue("approval_id"), guard.ApprovalDecision{
		Approve: req.Decision == "approve", Comment: comment, DecidedBy: s.deciderIdentity(r), Via: via, At: time.Now()})
	if err != nil {
		s.writeErr(w, r, approvalErr(err))
		return
	}
	s.approvals.decided()
	v, err := s.view(r.Context(), as, rec)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	problem.Respond(w, r, s.log, http.StatusOK, v)
}
