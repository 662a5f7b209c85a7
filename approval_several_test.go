package guard_test

import (
	"context"
	"testing"

	"github.com/guardrail-control/guard"
)

// TestEvaluateGrantedSeveral (issue 32): EvaluateGranted without ids lets every approval control through
// and lists, in evaluation order, those that matched; with ids only those; ApprovalControlsOf names the
// approval controls that genuinely matched (a control that failed closed asks no one).
func TestEvaluateGrantedSeveral(t *testing.T) {
	approval := func(c guard.Control, msg string) guard.Control {
		c.Data.Action.Approval = &guard.Approval{Message: msg, Approvers: []string{"team-" + c.Name}, TTLSeconds: 60}
		return c
	}
	steerA := approval(ctl(2, guard.DecisionSteer, has("refund")), "")
	denyB := approval(ctl(5, guard.DecisionDeny, has("2500")), "big")
	failing := approval(ctl(7, guard.DecisionDeny, leaf("input", "fail", nil)), "fails")
	e := newEngine(t, steerA, denyB, ctl(9, guard.DecisionLog, has("refund")))
	step := &guard.Step{Type: "tool", Name: "refund", Input: "refund 2500"}
	ctx := context.Background()

	res, err := e.Evaluate(ctx, step, guard.StagePre)
	if err != nil || res.Approval == nil || res.Approval.ControlID != 5 {
		t.Fatalf("refused by the deny first: %+v %v", res.Approval, err)
	}
	if e.ApprovalControls() != 2 {
		t.Fatalf("ApprovalControls = %d", e.ApprovalControls())
	}
	all, err := e.EvaluateGranted(ctx, step, guard.StagePre)
	if err != nil || !all.IsSafe || all.Approval == nil || all.Approval.Status != guard.ApprovalGranted || all.Approval.ControlID != 5 ||
		len(all.Approval.Controls) != 2 || all.Approval.Controls[1].ControlID != 2 || all.Approval.Controls[1].Message != "steer c" ||
		all.Approval.Controls[0].Message != "big" || all.Approval.Controls[0].Approvers[0] != "team-c5" {
		t.Fatalf("every approval control let through: %+v %v", all.Approval, err)
	}
	if got := e.ApprovalControlsOf(all); len(got) != 2 || got[0].ControlID != 5 || got[1].ControlID != 2 {
		t.Fatalf("ApprovalControlsOf = %+v", got)
	}
	// Only the deny let through: the steer approval control refuses, asking for itself.
	one, err := e.EvaluateGranted(ctx, step, guard.StagePre, 5)
	if err != nil || one.IsSafe || one.Approval == nil || one.Approval.Status != guard.ApprovalRequired || one.Approval.ControlID != 2 {
		t.Fatalf("one let through: %+v %v", one.Approval, err)
	}
	// Both by id: granted, as without ids.
	both, err := e.EvaluateGranted(ctx, step, guard.StagePre, 2, 5)
	if err != nil || !both.IsSafe || both.Approval == nil || len(both.Approval.Controls) != 2 {
		t.Fatalf("both by id: %+v %v", both.Approval, err)
	}
	// A control that failed closed is let through by a grant (and counted: the grant is used) but asks no
	// one.
	ef := newEngine(t, denyB, failing)
	fres, err := ef.EvaluateGranted(ctx, step, guard.StagePre)
	if err != nil || !fres.IsSafe || fres.Approval == nil || len(fres.Approval.Controls) != 2 {
		t.Fatalf("failing control let through: %+v %v", fres.Approval, err)
	}
	if got := ef.ApprovalControlsOf(fres); len(got) != 1 || got[0].ControlID != 5 {
		t.Fatalf("ApprovalControlsOf with a failed control = %+v", got)
	}
}
