package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// eachBench runs fn as a sub-benchmark per dialect, each on a fresh migrated database.
func eachBench(b *testing.B, fn func(b *testing.B, s *store.Store)) {
	b.Run("sqlite", func(b *testing.B) { fn(b, storetest.SQLite(b)) })
	b.Run("postgres", func(b *testing.B) { fn(b, storetest.Postgres(b)) })
}

func BenchmarkCreateControl(b *testing.B) {
	eachBench(b, func(b *testing.B, s *store.Store) {
		ctx, d, i := ctxT(b), testData("secret"), 0
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.CreateControl(ctx, fmt.Sprintf("c%d", i), d); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

func BenchmarkListControlsPage100(b *testing.B) {
	eachBench(b, func(b *testing.B, s *store.Store) {
		ctx := ctxT(b)
		for i := range 300 {
			if _, err := s.CreateControl(ctx, fmt.Sprintf("c%d", i), testData("secret")); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			items, _, err := s.ListControls(ctx, guard.ControlFilter{}, guard.PageRequest{Limit: 100})
			if err != nil || len(items) != 100 {
				b.Fatal(len(items), err)
			}
		}
	})
}

func BenchmarkAgentControls100(b *testing.B) {
	eachBench(b, func(b *testing.B, s *store.Store) {
		ctx := ctxT(b)
		if _, _, err := s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "bench"}}); err != nil {
			b.Fatal(err)
		}
		for i := range 100 {
			rec, err := s.CreateControl(ctx, fmt.Sprintf("c%d", i), testData("secret"))
			if err != nil {
				b.Fatal(err)
			}
			if err := s.LinkControl(ctx, "bench", rec.ID); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			acs, _, err := s.AgentControls(ctx, "bench")
			if err != nil || len(acs) != 100 {
				b.Fatal(len(acs), err)
			}
		}
	})
}

func BenchmarkInsertEvents500(b *testing.B) {
	eachBench(b, benchInsertEvents500)
	// The same with synchronous=NORMAL: no fsync per commit (WAL still survives a process crash).
	b.Run("sqlite-sync-normal", func(b *testing.B) {
		benchInsertEvents500(b, storetest.SQLite(b, store.WithSQLiteSynchronous("NORMAL")))
	})
}

func benchInsertEvents500(b *testing.B, s *store.Store) {
	ctx := ctxT(b)
	batch := make([]guard.Event, 500)
	now := time.Now()
	for i := range batch {
		batch[i] = ev("bench", int64(i%20), now.Add(time.Duration(i)*time.Millisecond), i%2 == 0, guard.DecisionDeny)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.InsertEvents(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(500*b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkStats1M stores 1,000,000 events and measures the statistics of one agent, with a time series,
// on two distributions: "spread" (10 agents, 20 controls each, evenly over the last 7 days: about 14,000
// events of the agent in 24 hours, 100,000 in 7 days) and "one-agent" (all 1,000,000 events from one
// agent and 20 controls in the last 24 hours, the worst case). The setup takes a while (minutes on
// PostgreSQL); run it with a short -benchtime.
func BenchmarkStats1M(b *testing.B) {
	const total = 1_000_000
	type shape struct {
		name         string
		agents, days int
		windows      []time.Duration
	}
	for _, sh := range []shape{{"spread", 10, 7, []time.Duration{24 * time.Hour, 7 * 24 * time.Hour}}, {"one-agent", 1, 1, []time.Duration{time.Hour, 24 * time.Hour}}} {
		b.Run(sh.name, func(b *testing.B) {
			eachBench(b, func(b *testing.B, s *store.Store) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute) // seeding PostgreSQL is slow
				defer cancel()
				until := time.Now().Truncate(time.Minute)
				since := until.Add(-time.Duration(sh.days) * 24 * time.Hour)
				step := until.Sub(since) / total
				start := time.Now()
				batch := make([]guard.Event, 0, 20_000)
				for i := range total {
					e := ev(fmt.Sprintf("agent-%d", i%sh.agents), int64(1+(i/sh.agents)%20), since.Add(time.Duration(i)*step), i%3 == 0, guard.DecisionDeny)
					if i%5 == 0 {
						e.Action = guard.DecisionWarn
					}
					d := float64(i % 7)
					e.ExecutionDurationMS = &d
					batch = append(batch, e)
					if len(batch) == cap(batch) {
						if err := s.InsertEvents(ctx, batch); err != nil {
							b.Fatal(err)
						}
						batch = batch[:0]
					}
				}
				b.Logf("stored %d events in %v", total, time.Since(start).Round(time.Millisecond))
				for _, w := range sh.windows {
					b.Run(w.String(), func(b *testing.B) {
						// The server's bucket widths (1h: 1m, 24h: 30m, 7d: 3h); the range is shifted off the minute
						// so that its partial edge minutes are read from the events.
						bucket := map[time.Duration]time.Duration{time.Hour: time.Minute, 24 * time.Hour: 30 * time.Minute, 7 * 24 * time.Hour: 3 * time.Hour}[w]
						q := guard.StatsQuery{AgentName: "agent-0", Since: until.Add(-w + 17*time.Second), Until: until.Add(17 * time.Second), Bucket: bucket}
						b.ReportAllocs()
						for b.Loop() {
							st, err := s.Stats(ctx, q)
							if err != nil || st.Totals.ExecutionCount == 0 {
								b.Fatal(st.Totals, err)
							}
						}
					})
				}
			})
		})
	}
}
