package client

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/guardrail-control/guard"
)

// TestLiveApprovalInProcess: an agent that evaluates the server's controls in-process
// (Config.LocalServerControls, guard mcp's default) still gets an approval request (only the server opens
// one: the refused step goes to the server), and its retry after the approval uses the grant (only the
// server consumes one): the step runs once. Without approvalAtServer the refusal had no request id and the
// retry was refused in-process for ever.
func TestLiveApprovalInProcess(t *testing.T) {
	ls := startLiveServer(t)
	admin := ls.admin(t)
	ctx := context.Background()
	initAgent(t, testConfig(ls.url()))
	c := ctl(0, "refund-over-limit", guard.ExecutionServer, guard.DecisionDeny, "input.amount", `^[0-9]{4,}`, guard.StagePre)
	c.Control.Action.Approval = &guard.Approval{Message: "Refund of 1000 or more"}
	mustCreate(t, admin, "test-agent", c)
	cfg := testConfig(ls.url())
	cfg.LocalServerControls = true
	a := initAgent(t, cfg)
	var ran atomic.Int32
	refund := Protect(a, func(_ context.Context, in refundArgs) (string, error) { ran.Add(1); return "refunded " + in.Order, nil },
		StepType("tool"), StepName("refund"))

	if out, err := refund(ctx, refundArgs{"A-1", 20}); err != nil || out != "refunded A-1" {
		t.Fatalf("a small refund, in-process: %q %v", out, err)
	}
	_, err := refund(ctx, refundArgs{"A-17", 2500})
	var ar *ApprovalRequiredError
	if !errors.As(err, &ar) || ar.Approval.ID == "" {
		t.Fatalf("refused in-process without a request: %v", err)
	}
	if _, err := admin.DecideApproval(ctx, ar.Approval.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	if out, err := refund(ctx, refundArgs{"A-17", 2500}); err != nil || out != "refunded A-17" {
		t.Fatalf("the retry after the approval: %q %v", out, err)
	}
	if _, err := refund(ctx, refundArgs{"A-17", 2500}); !errors.As(err, &ar) {
		t.Fatalf("the grant was used twice: %v", err)
	}
	if ran.Load() != 2 {
		t.Fatalf("ran %d times, want 2", ran.Load())
	}
	got, err := admin.GetApproval(ctx, ar.Approval.ID, 0)
	if err != nil || got.Status != guard.ApprovalPending {
		t.Fatalf("the third call's request: %+v %v", got, err)
	}
}
