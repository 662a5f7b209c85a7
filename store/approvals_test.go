package store_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

func approvalReq(agent, hash string) guard.ApprovalRecord {
	return guard.ApprovalRecord{AgentName: agent, ControlID: 7, ControlVersion: 2, ControlName: "refund-over-limit",
		StepType: "tool", StepName: "refund", Stage: guard.StagePre, PayloadHash: hash,
		Step: json.RawMessage(`{"type":"tool","name":"refund","input":{"amount":2500}}`), Message: "needs a person",
		Approvers: []string{"finance"}, TTL: time.Hour}
}

// TestApprovalLifecycle: open (a retry reuses the pending request), read, list pending first with
// filters, decide once, consume once; an expired request cannot be decided, an expired grant not used.
func TestApprovalLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		a, created, err := s.OpenApproval(ctx, approvalReq("bot", "sha256:aa"))
		if err != nil || !created || a.Status != guard.ApprovalPending || a.ID == "" {
			t.Fatalf("open = %+v, %v, %v", a, created, err)
		}
		if got := a.ExpiresAt.Sub(a.CreatedAt); got != time.Hour {
			t.Fatalf("expires after %v", got)
		}
		again, created, err := s.OpenApproval(ctx, approvalReq("bot", "sha256:aa"))
		if err != nil || created || again.ID != a.ID {
			t.Fatalf("a retry opened another request: %+v %v %v", again, created, err)
		}
		other := must[guard.ApprovalRecord](t)(func() (guard.ApprovalRecord, error) {
			r, _, err := s.OpenApproval(ctx, approvalReq("bot", "sha256:bb"))
			return r, err
		}())
		if other.ID == a.ID {
			t.Fatal("another payload reused the request")
		}
		got := must[guard.ApprovalRecord](t)(s.GetApproval(ctx, a.ID))
		if got.PayloadHash != "sha256:aa" || string(got.Step) != `{"type":"tool","name":"refund","input":{"amount":2500}}` ||
			len(got.Approvers) != 1 || got.ControlVersion != 2 || got.Stage != guard.StagePre {
			t.Fatalf("get = %+v", got)
		}
		if _, err := s.GetApproval(ctx, "nope"); err != guard.ErrApprovalNotFound {
			t.Fatalf("unknown id: %v", err)
		}

		// Reject the first: the list shows the pending one first.
		dec := must[guard.ApprovalRecord](t)(s.DecideApproval(ctx, a.ID, guard.ApprovalDecision{Approve: false, Comment: "no", DecidedBy: "key:abc"}))
		if dec.Status != guard.ApprovalRejected || dec.DecidedBy != "key:abc" || dec.Comment != "no" || dec.DecidedAt == nil || dec.GrantExpiresAt != nil {
			t.Fatalf("reject = %+v", dec)
		}
		if _, err := s.DecideApproval(ctx, a.ID, guard.ApprovalDecision{Approve: true}); err != guard.ErrApprovalDecided {
			t.Fatalf("second decision: %v", err)
		}
		list := must[[]guard.ApprovalRecord](t)(s.ListApprovals(ctx, guard.ApprovalQuery{}))
		if len(list) != 2 || list[0].ID != other.ID || list[1].ID != a.ID {
			t.Fatalf("list order: %+v", list)
		}
		for _, tt := range []struct {
			q    guard.ApprovalQuery
			want int
		}{
			{guard.ApprovalQuery{Status: guard.ApprovalPending}, 1},
			{guard.ApprovalQuery{Status: guard.ApprovalRejected}, 1},
			{guard.ApprovalQuery{Status: guard.ApprovalApproved}, 0},
			{guard.ApprovalQuery{AgentName: "other"}, 0},
			{guard.ApprovalQuery{ControlID: 7}, 2},
			{guard.ApprovalQuery{PayloadHash: "sha256:bb"}, 1},
			{guard.ApprovalQuery{Limit: 1}, 1},
		} {
			if l := must[[]guard.ApprovalRecord](t)(s.ListApprovals(ctx, tt.q)); len(l) != tt.want {
				t.Errorf("list %+v: %d, want %d", tt.q, len(l), tt.want)
			}
		}
		if ok, err := s.ConsumeApproval(ctx, a.ID, "x", time.Now()); ok || err != nil {
			t.Fatalf("a rejected request was consumed: %v %v", ok, err)
		}

		// Approve the other: its grant is used once.
		ap := must[guard.ApprovalRecord](t)(s.DecideApproval(ctx, other.ID, guard.ApprovalDecision{Approve: true, DecidedBy: "key:abc"}))
		if ap.Status != guard.ApprovalApproved || ap.GrantExpiresAt == nil || ap.GrantExpiresAt.Sub(*ap.DecidedAt) != time.Hour {
			t.Fatalf("approve = %+v", ap)
		}
		if ok, err := s.ConsumeApproval(ctx, other.ID, "exec-1", time.Now()); !ok || err != nil {
			t.Fatalf("first use: %v %v", ok, err)
		}
		if ok, err := s.ConsumeApproval(ctx, other.ID, "exec-2", time.Now()); ok || err != nil {
			t.Fatalf("second use: %v %v", ok, err)
		}
		used := must[guard.ApprovalRecord](t)(s.GetApproval(ctx, other.ID))
		if used.UsedAt == nil || used.UsedExecutionID != "exec-1" {
			t.Fatalf("used = %+v", used)
		}

		// Expiry: a request opened two hours ago with a one-hour TTL reads expired and cannot be decided.
		old := approvalReq("bot", "sha256:cc")
		old.CreatedAt = time.Now().Add(-2 * time.Hour)
		exp, _, err := s.OpenApproval(ctx, old)
		if err != nil || exp.Status != guard.ApprovalExpired {
			t.Fatalf("expired = %+v %v", exp, err)
		}
		if _, err := s.DecideApproval(ctx, exp.ID, guard.ApprovalDecision{Approve: true}); err != guard.ErrApprovalDecided {
			t.Fatalf("decide expired: %v", err)
		}
		// A grant approved two hours ago (its one-hour validity over) cannot be used.
		fresh, _, _ := s.OpenApproval(ctx, approvalReq("bot", "sha256:dd"))
		if _, err := s.DecideApproval(ctx, fresh.ID, guard.ApprovalDecision{Approve: true, At: time.Now().Add(-time.Minute)}); err != nil {
			t.Fatal(err)
		}
		if ok, _ := s.ConsumeApproval(ctx, fresh.ID, "late", time.Now().Add(2*time.Hour)); ok {
			t.Fatal("an expired grant was used")
		}
		k1 := must[[]byte](t)(s.ApprovalKey(ctx))
		if len(k1) < 32 {
			t.Fatalf("approval key of %d bytes", len(k1))
		}
	})
}

// TestApprovalConsumedOnceAcrossReplicas: two stores on one database (two server replicas), eight
// goroutines each trying to use one grant at the same moment: exactly one succeeds. Both stores read the
// same grant key.
func TestApprovalConsumedOnceAcrossReplicas(t *testing.T) {
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := ctxT(t)
		r1 := openReplica(t, ctx, url, true)
		r2 := openReplica(t, ctx, url, false)
		k1 := must[[]byte](t)(r1.ApprovalKey(ctx))
		k2 := must[[]byte](t)(r2.ApprovalKey(ctx))
		if string(k1) != string(k2) {
			t.Fatal("the replicas sign grants with different keys")
		}
		for round := range 5 {
			a, _, err := r1.OpenApproval(ctx, approvalReq("bot", "sha256:"+string(rune('a'+round))))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r2.DecideApproval(ctx, a.ID, guard.ApprovalDecision{Approve: true}); err != nil {
				t.Fatal(err)
			}
			var wins atomic.Int32
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range 8 {
				rep := r1
				if i%2 == 1 {
					rep = r2
				}
				wg.Go(func() {
					<-start
					ok, err := rep.ConsumeApproval(ctx, a.ID, "exec", time.Now())
					if err != nil {
						t.Error(err)
					}
					if ok {
						wins.Add(1)
					}
				})
			}
			close(start)
			wg.Wait()
			if n := wins.Load(); n != 1 {
				t.Fatalf("round %d: %d consumers used one grant", round, n)
			}
		}
	})
}

func openReplica(t *testing.T, ctx context.Context, url string, migrate bool) *store.Store {
	t.Helper()
	open := store.Open
	if migrate {
		open = store.OpenAndMigrate
	}
	s, err := open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
