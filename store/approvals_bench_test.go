package store_test

import (
	"fmt"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// BenchmarkConsumeApproval is the one database round trip that uses a grant (a conditional UPDATE).
func BenchmarkConsumeApproval(b *testing.B) {
	for _, d := range []struct {
		name string
		open func(testing.TB, ...store.Option) *store.Store
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		b.Run(d.name, func(b *testing.B) {
			s := d.open(b)
			ctx := b.Context()
			ids := make([]string, b.N)
			for i := range ids {
				a, _, err := s.OpenApproval(ctx, approvalReq("bot", fmt.Sprintf("sha256:%d", i)))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.DecideApproval(ctx, a.ID, guard.ApprovalDecision{Approve: true}); err != nil {
					b.Fatal(err)
				}
				ids[i] = a.ID
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if ok, err := s.ConsumeApproval(ctx, ids[i], "exec", time.Now()); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
