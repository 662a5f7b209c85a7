package client

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guardrail-control/guard"
)

// TestLiveSeveralApprovalControls (issue 32, item 3): two approval controls refuse one refund. The
// client gets one request naming both; approved, the same call retried runs exactly once (with
// ApprovalWait too); rejected, it fails saying so.
func TestLiveSeveralApprovalControls(t *testing.T) {
	ls := startLiveServer(t)
	admin := ls.admin(t)
	ctx := context.Background()
	var ran atomic.Int32
	refundFn := func(_ context.Context, in refundArgs) (string, error) { ran.Add(1); return "refunded " + in.Order, nil }
	setup := func(wait time.Duration) func(context.Context, refundArgs) (string, error) {
		cfg := testConfig(ls.url())
		cfg.ApprovalWait = wait
		return Protect(initAgent(t, cfg), refundFn, StepType("tool"), StepName("refund"))
	}
	initAgent(t, testConfig(ls.url()))
	over := ctl(0, "refund-over-limit", guard.ExecutionServer, guard.DecisionDeny, "input.amount", `^[0-9]{4,}`, guard.StagePre)
	over.Control.Action.Approval = &guard.Approval{Message: "Refund of 1000 or more"}
	mustCreate(t, admin, "test-agent", over)
	orderA := ctl(0, "orders-a-need-accounts", guard.ExecutionServer, guard.DecisionDeny, "input.order", `^A-`, guard.StagePre)
	orderA.Control.Action.Approval = &guard.Approval{Message: "Orders A- need the account team"}
	mustCreate(t, admin, "test-agent", orderA)
	refund := setup(0)

	_, err := refund(ctx, refundArgs{"A-17", 2500})
	var ar *ApprovalRequiredError
	if !errors.As(err, &ar) || ar.Approval.ID == "" || len(ar.Approval.Controls) != 2 ||
		ar.Approval.Controls[0].ControlName != "refund-over-limit" || ar.Approval.Controls[1].ControlName != "orders-a-need-accounts" {
		t.Fatalf("refused: %v (%+v)", err, ar)
	}
	if _, err := admin.DecideApproval(ctx, ar.Approval.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	if out, err := refund(ctx, refundArgs{"A-17", 2500}); err != nil || out != "refunded A-17" || ran.Load() != 1 {
		t.Fatalf("retry after the approval: %q %v (ran %d)", out, err, ran.Load())
	}
	if _, err := refund(ctx, refundArgs{"A-17", 2500}); !errors.As(err, &ar) || ran.Load() != 1 {
		t.Fatalf("a second retry: %v (ran %d)", err, ran.Load())
	}
	if _, err := admin.DecideApproval(ctx, ar.Approval.ID, false, "old"); err != nil {
		t.Fatal(err)
	}

	waiting := setup(20 * time.Second)
	decide := func(approve bool, comment string) {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			l, err := admin.ListApprovals(ctx, ApprovalListOptions{Status: guard.ApprovalPending})
			if err != nil {
				t.Error(err)
				return
			}
			if len(l) > 0 {
				if len(l[0].Controls) != 2 {
					t.Errorf("the request covers %d controls, want 2", len(l[0].Controls))
				}
				if _, err := admin.DecideApproval(ctx, l[0].ID, approve, comment); err != nil {
					t.Error(err)
				}
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Error("no pending request appeared")
	}
	decided := make(chan struct{})
	go func() { defer close(decided); decide(true, "") }()
	out, err := waiting(ctx, refundArgs{"A-18", 2600})
	<-decided
	if err != nil || out != "refunded A-18" || ran.Load() != 2 {
		t.Fatalf("approved while waiting: %q %v (ran %d)", out, err, ran.Load())
	}
	decided = make(chan struct{})
	go func() { defer close(decided); decide(false, "not this one") }()
	_, err = waiting(ctx, refundArgs{"A-19", 2700})
	<-decided
	if !errors.As(err, &ar) || ar.Status != guard.ApprovalRejected || ran.Load() != 2 {
		t.Fatalf("rejected while waiting: %v", err)
	}
}
