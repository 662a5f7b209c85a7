package client

import (
	"time"

	"github.com/guardrail-control/guard"
)

// approvalAtServer reports whether a step the agent evaluates in-process (Config.LocalServerControls, as
// guard mcp does by default) must be evaluated by the server instead, because only the server opens approval
// requests and consumes grants: res is nil before the in-process evaluation (true when the step presents a
// grant), else its result (true when a control with action.approval refused the step, which in-process
// has no request id). Either way the server must be registered with and not known to be failing; otherwise
// the in-process refusal stands, as a plain deny or steer (docs/approvals.md). Steps without approvals pay
// one map lookup (res nil) or one nil check.
func (a *Agent) approvalAtServer(step *guard.Step, res *guard.Result) bool {
	if res == nil {
		if _, ok := step.Context[GrantContextKey]; !ok {
			return false
		}
	} else if res.Approval == nil || res.Approval.ID != "" || res.Approval.Status != guard.ApprovalRequired {
		return false
	}
	return a.registered.Load() && time.Now().UnixNano() >= a.evalDownUntil.Load()
}
