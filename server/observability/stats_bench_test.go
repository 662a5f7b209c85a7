package observability

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	guard "github.com/guardrail-control/guard"
)

// BenchmarkStatsAPI1M measures GET /observability/stats and /stats/controls/{id} through the handler in
// the worst case of issue 6 point 7: 1,000,000 stored events, all of ONE agent and all inside the last
// 24 hours (20 controls), so the 24h statistics aggregate every one of them. The setup takes a minute
// or more; run with -bench StatsAPI1M -benchtime 5x.
func BenchmarkStatsAPI1M(b *testing.B) {
	const total, controls = 1_000_000, 20
	for _, s := range loadStores {
		b.Run(s.name, func(b *testing.B) {
			st := s.open(b)
			now := time.Now().UTC()
			since := now.Add(-24 * time.Hour)
			step := 24 * time.Hour / total
			start := time.Now()
			batch := make([]guard.Event, 0, 20_000)
			ctx := context.Background()
			for i := range total {
				e := mkEvent(i)
				e.ControlExecutionID = uuid.NewString()
				e.AgentName = "bench"
				e.ControlID = int64(1 + i%controls)
				e.ControlName = fmt.Sprintf("control-%d", e.ControlID)
				e.Timestamp = since.Add(time.Duration(i) * step)
				if i%5 == 0 {
					e.Action = guard.DecisionWarn
				}
				batch = append(batch, e)
				if len(batch) == cap(batch) {
					if err := st.InsertEvents(ctx, batch); err != nil {
						b.Fatal(err)
					}
					batch = batch[:0]
				}
			}
			b.Logf("%s: stored %d events in %v", s.name, total, time.Since(start).Round(time.Millisecond))
			api := &API{Store: st, Enabled: true, Now: func() time.Time { return now }}
			mux := http.NewServeMux()
			api.Routes(mux, "/api/v1")
			for _, tc := range []struct{ name, path string }{
				{"24h", statsPath + "?agent_name=bench&time_range=24h"},
				{"24h+timeseries", statsPath + "?agent_name=bench&time_range=24h&include_timeseries=true"},
				{"1h+timeseries", statsPath + "?agent_name=bench&time_range=1h&include_timeseries=true"},
				{"control-24h", statsPath + "/controls/7?agent_name=bench&time_range=24h"},
				// Every agent (the dashboard's overview and control page): counts and p95.
				{"fleet-24h+timeseries", statsPath + "?time_range=24h&include_timeseries=true"},
				{"fleet-24h+timeseries+p95", statsPath + "?time_range=24h&include_timeseries=true&include_p95=true"},
				{"24h+p95", statsPath + "?agent_name=bench&time_range=24h&include_p95=true"},
				{"fleet-1h+timeseries", statsPath + "?time_range=1h&include_timeseries=true"},
				{"fleet-control-24h+timeseries", statsPath + "/controls/7?time_range=24h&include_timeseries=true"},
			} {
				b.Run(tc.name, func(b *testing.B) {
					for b.Loop() {
						rec := httptest.NewRecorder()
						mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
						if rec.Code != http.StatusOK {
							b.Fatalf("%s = %d %s", tc.path, rec.Code, rec.Body)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
				})
			}
		})
	}
}
