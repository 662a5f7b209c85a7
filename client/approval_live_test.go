package client

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guardrail-control/guard"
)

type refundArgs struct {
	Order  string `json:"order"`
	Amount int    `json:"amount"`
}

// TestLiveApproval: a refund refused by an approval control fails with *ApprovalRequiredError (still a
// *guard.ControlViolationError); with ApprovalWait the call waits, runs once when approved, and fails
// saying so when rejected.
func TestLiveApproval(t *testing.T) {
	ls := startLiveServer(t)
	admin := ls.admin(t)
	ctx := context.Background()
	var ran atomic.Int32
	refundFn := func(_ context.Context, in refundArgs) (string, error) { ran.Add(1); return "refunded " + in.Order, nil }

	setup := func(wait time.Duration) func(context.Context, refundArgs) (string, error) {
		cfg := testConfig(ls.url())
		cfg.ApprovalWait = wait
		a := initAgent(t, cfg)
		return Protect(a, refundFn, StepType("tool"), StepName("refund"))
	}
	// Register the agent, then give it the control; the agents below load it at Init.
	initAgent(t, testConfig(ls.url()))
	c := ctl(0, "refund-over-limit", guard.ExecutionServer, guard.DecisionDeny, "input.amount", `^[0-9]{4,}`, guard.StagePre)
	c.Control.Action.Approval = &guard.Approval{Message: "Refund of 1000 or more"}
	mustCreate(t, admin, "test-agent", c)
	refund := setup(0)

	_, err := refund(ctx, refundArgs{"A-17", 2500})
	var ar *ApprovalRequiredError
	var v *guard.ControlViolationError
	if !errors.As(err, &ar) || !errors.As(err, &v) || ar.Approval.ID == "" || ar.Status != guard.ApprovalRequired || v.ControlName != "refund-over-limit" {
		t.Fatalf("refused: %v", err)
	}
	if ran.Load() != 0 {
		t.Fatal("the refused refund ran")
	}

	// Waiting: the request is approved while the call waits; the refund runs once.
	waiting := setup(20 * time.Second)
	decide := func(approve bool, comment string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			l, err := admin.ListApprovals(ctx, ApprovalListOptions{Status: guard.ApprovalPending})
			if err != nil {
				t.Error(err)
				return
			}
			if len(l) > 0 {
				if _, err := admin.DecideApproval(ctx, l[0].ID, approve, comment); err != nil {
					t.Error(err)
				}
				return
			}
			if time.Now().After(deadline) {
				t.Error("no pending request appeared")
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Approved elsewhere (the dashboard, the CLI), the same call tried again runs, once: the client
	// remembered the request and presents its grant.
	if _, err := refund(ctx, refundArgs{"A-17", 2600}); !errors.As(err, &ar) {
		t.Fatalf("another amount: %v", err)
	}
	other := ar.Approval.ID
	if _, err := admin.DecideApproval(ctx, ar.Approval.ID, false, "no"); err != nil {
		t.Fatal(err)
	}
	first, err := admin.ListApprovals(ctx, ApprovalListOptions{Status: guard.ApprovalPending})
	if err != nil || len(first) != 1 || first[0].ID == other {
		t.Fatalf("pending: %+v %v", first, err)
	}
	if _, err := admin.DecideApproval(ctx, first[0].ID, true, ""); err != nil {
		t.Fatal(err)
	}
	if out, err := refund(ctx, refundArgs{"A-17", 2500}); err != nil || out != "refunded A-17" || ran.Load() != 1 {
		t.Fatalf("retry after the approval: %q %v (ran %d)", out, err, ran.Load())
	}
	if _, err := refund(ctx, refundArgs{"A-17", 2500}); !errors.As(err, &ar) || ran.Load() != 1 {
		t.Fatalf("a second retry: %v (ran %d)", err, ran.Load())
	}
	if _, err := refund(ctx, refundArgs{"A-17", 2600}); !errors.As(err, &ar) || ar.Approval.ID == other {
		t.Fatalf("after a rejection the step asks again: %v", err)
	}
	// Clear the pending requests so that the list below shows only new ones.
	pend, _ := admin.ListApprovals(ctx, ApprovalListOptions{Status: guard.ApprovalPending})
	for _, p := range pend {
		if _, err := admin.DecideApproval(ctx, p.ID, false, "old"); err != nil {
			t.Fatal(err)
		}
	}
	// Each decision runs beside the waiting call; the test waits for it too, so that the server is not
	// closed under its answer.
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
	if !errors.As(err, &ar) || ar.Status != guard.ApprovalRejected || ar.Comment != "not this one" || ran.Load() != 2 {
		t.Fatalf("rejected while waiting: %v", err)
	}
}
