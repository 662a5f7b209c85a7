package store_test

import (
	"sync"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestApprovalOpenedOnceAcrossReplicas: two stores on one database (two server replicas), eight goroutines
// refusing the same step at the same moment: one request is opened, every opener gets it back, and the list
// holds one pending request of that step. Without the partial unique index of migration 00013 and the
// insert-or-return of OpenApproval, PostgreSQL let several openers each insert one.
func TestApprovalOpenedOnceAcrossReplicas(t *testing.T) {
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := ctxT(t)
		r1 := openReplica(t, ctx, url, true)
		r2 := openReplica(t, ctx, url, false)
		for round := range 5 {
			hash := "sha256:open-" + string(rune('a'+round))
			var mu sync.Mutex
			ids := map[string]int{}
			created := 0
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range 8 {
				rep := r1
				if i%2 == 1 {
					rep = r2
				}
				wg.Go(func() {
					<-start
					a, isNew, err := rep.OpenApproval(ctx, approvalReq("bot", hash))
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					ids[a.ID]++
					if isNew {
						created++
					}
					mu.Unlock()
				})
			}
			close(start)
			wg.Wait()
			if len(ids) != 1 || created != 1 {
				t.Fatalf("round %d: %d requests for one step (%v), %d reported as new", round, len(ids), ids, created)
			}
			list := must[[]guard.ApprovalRecord](t)(r1.ListApprovals(ctx, guard.ApprovalQuery{PayloadHash: hash}))
			if len(list) != 1 || list[0].Status != guard.ApprovalPending {
				t.Fatalf("round %d: stored %+v", round, list)
			}
		}
	})
}

// TestApprovalExpiredRequestMakesWay: a step whose pending request expired gets a new request; the old one
// is stored as expired (it left the one-pending-request-per-step index) and listed as such.
func TestApprovalExpiredRequestMakesWay(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		old := approvalReq("bot", "sha256:way")
		old.CreatedAt = time.Now().Add(-2 * time.Hour)
		first, created, err := s.OpenApproval(ctx, old)
		if err != nil || !created || first.Status != guard.ApprovalExpired {
			t.Fatalf("first = %+v %v %v", first, created, err)
		}
		second, created, err := s.OpenApproval(ctx, approvalReq("bot", "sha256:way"))
		if err != nil || !created || second.ID == first.ID || second.Status != guard.ApprovalPending {
			t.Fatalf("second = %+v %v %v", second, created, err)
		}
		for status, want := range map[string]string{guard.ApprovalExpired: first.ID, guard.ApprovalPending: second.ID} {
			l := must[[]guard.ApprovalRecord](t)(s.ListApprovals(ctx, guard.ApprovalQuery{PayloadHash: "sha256:way", Status: status}))
			if len(l) != 1 || l[0].ID != want || l[0].Status != status {
				t.Fatalf("%s: %+v", status, l)
			}
		}
		if _, err := s.DecideApproval(ctx, first.ID, guard.ApprovalDecision{Approve: true}); err != guard.ErrApprovalDecided {
			t.Fatalf("deciding the expired request: %v", err)
		}
		d := must[guard.ApprovalRecord](t)(s.DecideApproval(ctx, second.ID, guard.ApprovalDecision{Approve: false, DecidedBy: "mcp-gw", Via: guard.DecidedViaMCPElicitation}))
		if d.DecidedBy != "mcp-gw" || d.DecidedVia != guard.DecidedViaMCPElicitation {
			t.Fatalf("decision = %+v", d)
		}
	})
}
