package store_test

import (
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestApprovalOfSeveralControls (issue 32, migration 00015): a request covering several approval
// controls keeps them in order with their versions, messages and approvers; one pending request per step
// and set of controls (the same set reuses it, another set opens its own); control_id finds a request by
// any control it covers.
func TestApprovalOfSeveralControls(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		set := func(versions ...int) []guard.ApprovalControl {
			out := []guard.ApprovalControl{{ControlID: 7, ControlVersion: 2, ControlName: "refund-over-limit", Message: "needs a person", Approvers: []string{"finance"}}}
			for i, v := range versions {
				out = append(out, guard.ApprovalControl{ControlID: int64(9 + i), ControlVersion: v, ControlName: "second", Message: "orders A-", Approvers: []string{"accounts"}})
			}
			return out
		}
		req := func(ctls []guard.ApprovalControl) guard.ApprovalRecord {
			r := approvalReq("bot", "sha256:cc")
			r.Controls = ctls
			return r
		}
		two, created, err := s.OpenApproval(ctx, req(set(1)))
		if err != nil || !created || len(two.Controls) != 2 || two.Controls[1].ControlID != 9 || two.Controls[1].ControlVersion != 1 ||
			two.Controls[1].Message != "orders A-" || two.Controls[1].Approvers[0] != "accounts" || two.Controls[0].ControlID != 7 || two.Controls[0].ControlVersion != 2 {
			t.Fatalf("open = %+v %v %v", two, created, err)
		}
		if again, created, err := s.OpenApproval(ctx, req(set(1))); err != nil || created || again.ID != two.ID {
			t.Fatalf("the same set opened another request: %+v %v %v", again, created, err)
		}
		one, created, err := s.OpenApproval(ctx, req(nil))
		if err != nil || !created || one.ID == two.ID || len(one.Controls) != 1 || one.Controls[0].ControlID != 7 {
			t.Fatalf("one control: %+v %v %v", one, created, err)
		}
		changed, created, err := s.OpenApproval(ctx, req(set(2)))
		if err != nil || !created || changed.ID == two.ID {
			t.Fatalf("another version of the second control reused the request: %+v %v %v", changed, created, err)
		}
		three, created, err := s.OpenApproval(ctx, req(set(1, 1)))
		if err != nil || !created || len(three.Controls) != 3 {
			t.Fatalf("three controls: %+v %v %v", three, created, err)
		}
		for _, tc := range []struct {
			control int64
			want    int
		}{{7, 4}, {9, 3}, {10, 1}, {1, 0}} {
			l, err := s.ListApprovals(ctx, guard.ApprovalQuery{ControlID: tc.control})
			if err != nil || len(l) != tc.want {
				t.Fatalf("control %d: %d requests (%v), want %d", tc.control, len(l), err, tc.want)
			}
		}
	})
}
