package store_test

import (
	"database/sql"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestStatsSurviveOutOfRangeNumbers stores, through the store itself, events whose numbers the server
// now refuses (durations of 1.7e308, confidences outside [0, 1], NaN and infinities), then makes the rows
// worse behind the store's back as data written by an older server could be (infinite sums in the
// per-minute aggregates, infinite durations and NaN confidences in the events), and checks that Stats
// still answers, with finite averages over the values in range only, and QueryEvents rows that encode.
func TestStatsSurviveOutOfRangeNumbers(t *testing.T) {
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := ctxT(t)
		s, err := store.OpenAndMigrate(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		base := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
		f := func(v float64) *float64 { return &v }
		var events []guard.Event
		// Minute 0 and minute 2 hold bad values; minute 1 only good ones. Every minute holds events
		// at :10 and :50, so that both whole minutes (aggregates) and partial ones (events) are read.
		for minute := range 3 {
			for _, sec := range []int{10, 50} {
				at := base.Add(time.Duration(minute)*time.Minute + time.Duration(sec)*time.Second)
				good := ev("agent", 1, at, true, guard.DecisionDeny)
				good.Confidence, good.ExecutionDurationMS = 0.5, f(10)
				events = append(events, good)
				if minute != 1 {
					for _, bad := range []struct {
						conf float64
						dur  *float64
					}{{1, f(1.7e308)}, {1, f(1.7e308)}, {7, f(-5)}, {math.NaN(), f(math.Inf(1))}, {math.Inf(-1), f(math.NaN())}} {
						e := ev("agent", 1, at, false, guard.DecisionDeny)
						e.Confidence, e.ExecutionDurationMS = bad.conf, bad.dur
						events = append(events, e)
					}
				}
			}
		}
		if err := s.InsertEvents(ctx, events); err != nil {
			t.Fatalf("insert: %v", err)
		}
		check := func(t *testing.T, stage string) {
			t.Helper()
			for _, q := range []guard.StatsQuery{
				{Since: base, Until: base.Add(3 * time.Minute)},                                              // aggregates only
				{Since: base.Add(30 * time.Second), Until: base.Add(150 * time.Second)},                      // edges from events
				{Since: base.Add(30 * time.Second), Until: base.Add(150 * time.Second), Bucket: time.Second}, // events only
				{Since: base, Until: base.Add(3 * time.Minute), Bucket: time.Minute},
			} {
				q.AgentName = "agent"
				st, err := s.Stats(ctx, q)
				if err != nil {
					t.Fatalf("%s: stats %v-%v: %v", stage, q.Since, q.Until, err)
				}
				if _, err := json.Marshal(st); err != nil {
					t.Fatalf("%s: stats cannot be encoded: %v", stage, err)
				}
				if len(st.Controls) != 1 {
					t.Fatalf("%s: controls = %+v", stage, st.Controls)
				}
				c := st.Controls[0]
				if c.AvgDurationMS != 10 {
					t.Errorf("%s: avg_duration_ms = %v over %v, want 10 (bad durations left out)", stage, c.AvgDurationMS, q)
				}
				if c.AvgConfidence < 0 || c.AvgConfidence > 1 {
					t.Errorf("%s: avg_confidence = %v", stage, c.AvgConfidence)
				}
			}
			got, _, err := s.QueryEvents(ctx, guard.EventQuery{AgentName: "agent", Limit: 1000})
			if err != nil {
				t.Fatalf("%s: query: %v", stage, err)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Fatalf("%s: events cannot be encoded: %v", stage, err)
			}
		}
		check(t, "inserted through the store")

		// Rows as an older server could have left them.
		driver, dsn, inf, nan := "postgres", url, "'Infinity'", "'NaN'"
		if strings.HasPrefix(url, "sqlite://") {
			driver, dsn, inf, nan = "sqlite3", strings.TrimPrefix(url, "sqlite://"), "9e999", "NULL"
		}
		db, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, stmt := range []string{
			`UPDATE event_rollups SET duration_sum = ` + inf + `, confidence_sum = ` + inf + ` WHERE minute <> ` + minuteOf(base.Add(time.Minute)),
			`UPDATE events SET duration_ms = ` + inf + ` WHERE NOT matched`,
			`UPDATE events SET confidence = ` + inf + ` WHERE NOT matched AND ts % 2 = 0`,
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		if driver == "postgres" {
			if _, err := db.ExecContext(ctx, `UPDATE events SET confidence = `+nan+` WHERE NOT matched AND ts % 2 = 1`); err != nil {
				t.Fatal(err)
			}
		}
		check(t, "infinities stored behind the store's back")
	})
}

func minuteOf(t time.Time) string { return strconv.FormatInt(t.UnixMicro()/60_000_000, 10) }
