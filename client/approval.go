package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guardrail-control/guard"
)

// ApprovalRequiredError is returned when a control with action.approval refused the step: a person may
// approve it (docs/approvals.md). It wraps the refusal (*guard.ControlViolationError or
// *guard.ControlSteerError, which errors.As still finds) and carries the request. Status is "required"
// (nobody decided, or Config.ApprovalWait is off or ran out) or "rejected" (a person said no while the
// client waited).
type ApprovalRequiredError struct {
	Approval guard.ApprovalRequest
	Status   string
	Comment  string // the rejection's comment, if any
	Err      error
}

// Error implements the error interface.
func (e *ApprovalRequiredError) Error() string {
	if e.Status == guard.ApprovalRejected {
		msg := fmt.Sprintf("guard: approval %s was rejected", e.Approval.ID)
		if e.Comment != "" {
			msg += ": " + e.Comment
		}
		return msg + " (" + e.Err.Error() + ")"
	}
	return fmt.Sprintf("guard: approval required (request %s, decide at %s): %v", e.Approval.ID, e.Approval.URL, e.Err)
}

// Unwrap returns the refusal.
func (e *ApprovalRequiredError) Unwrap() error { return e.Err }

// awaitApproval, for a server result that asks for approval, waits up to Config.ApprovalWait for the
// decision; approved, it evaluates the step again with the grant in its context and returns that result.
// Otherwise it returns the result it got and the error to report (nil: use res.Err()).
func (a *Agent) awaitApproval(ctx context.Context, p *policy, step *guard.Step, stage guard.Stage, cfg *protectConfig, res *guard.Result) (*guard.Result, error) {
	apv := *res.Approval
	wrap := func(status, comment string) error {
		if status == guard.ApprovalRequired {
			// Remembered: the same step tried again once approved carries the grant (approval_retry.go).
			a.approvals.remember(step, stage, apv.ID)
		}
		return &ApprovalRequiredError{Approval: apv, Status: status, Comment: comment, Err: res.Err()}
	}
	if a.s.ApprovalWait <= 0 {
		return res, wrap(guard.ApprovalRequired, "")
	}
	deadline := time.Now().Add(a.s.ApprovalWait)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return res, wrap(guard.ApprovalRequired, "")
		}
		got, err := a.api.GetApproval(ctx, apv.ID, left)
		if err != nil {
			if ctx.Err() != nil {
				return res, wrap(guard.ApprovalRequired, "")
			}
			return res, errors.Join(wrap(guard.ApprovalRequired, ""), err)
		}
		switch got.Status {
		case guard.ApprovalPending:
			continue
		case guard.ApprovalApproved:
			if got.Grant == "" {
				return res, wrap(guard.ApprovalRequired, "")
			}
			retry := withGrant(step, got.Grant)
			// The retry is a new evaluation: the wait for a person does not spend its deadline.
			ectx, cancel := a.evaluationContext(ctx)
			res2, err := a.evaluateServer(ctx, ectx, p, retry, stage, cfg)
			cancel()
			if err != nil {
				return res, err
			}
			step.Input, step.Output = retry.Input, retry.Output // what a redacting control replaced
			if res2.Approval != nil && res2.Approval.Status == guard.ApprovalRequired {
				res, apv = res2, *res2.Approval
				return res, wrap(guard.ApprovalRequired, "")
			}
			return res2, nil
		case guard.ApprovalRejected:
			return res, wrap(guard.ApprovalRejected, got.Comment)
		default: // expired
			return res, wrap(guard.ApprovalRequired, "")
		}
	}
}

// GrantContextKey is the step context key a grant is presented under (the server's).
const GrantContextKey = "guard_approval_grant"
