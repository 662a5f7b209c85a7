package store_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// bruteStats computes in Go what Stats must answer.
func bruteStats(events []guard.Event, q guard.StatsQuery) guard.Stats {
	// Shadow events are counted apart, per control and without a time series.
	var enforced, shadow []guard.Event
	for _, e := range events {
		if e.Shadow {
			e.Shadow = false
			shadow = append(shadow, e)
		} else {
			enforced = append(enforced, e)
		}
	}
	out := bruteEnforced(enforced, q)
	sq := q
	sq.Bucket = 0
	out.Shadow = bruteEnforced(shadow, sq).Controls
	for i := range out.Shadow {
		out.Shadow[i].Shadow = true
	}
	return out
}

// bruteEnforced is bruteStats over events that are all enforced.
func bruteEnforced(events []guard.Event, q guard.StatsQuery) guard.Stats {
	out := guard.Stats{Controls: []guard.ControlStats{}}
	byID := map[int64]int{}
	conf, dur, durN := map[int64]float64{}, map[int64]float64{}, map[int64]int64{}
	byAgent := map[string]int{}
	var durations []float64 // fewer than guard.MaxP95Sample in these tests: the p95 covers all of them
	width := q.Bucket
	var first time.Time
	if width > 0 {
		first = q.Since.Truncate(width) // aligned on multiples of the width since the epoch (UTC)
		for t := first; t.Before(q.Until); t = t.Add(width) {
			out.Totals.Timeseries = append(out.Totals.Timeseries, guard.StatsTimePoint{Timestamp: t.UTC()})
		}
	}
	add := func(a *guard.ActionCounts, e *guard.Event) {
		if !e.Matched {
			return
		}
		switch e.Action {
		case guard.DecisionAllow:
			a.Allow++
		case guard.DecisionDeny:
			a.Deny++
		case guard.DecisionSteer:
			a.Steer++
		case guard.DecisionWarn:
			a.Warn++
		case guard.DecisionLog:
			a.Log++
		}
	}
	for i := range events {
		e := &events[i]
		if (q.AgentName != "" && e.AgentName != q.AgentName) || e.Timestamp.Before(q.Since) || !e.Timestamp.Before(q.Until) || (q.ControlID != nil && *q.ControlID != e.ControlID) {
			continue
		}
		j, ok := byID[e.ControlID]
		if !ok {
			j = len(out.Controls)
			byID[e.ControlID] = j
			out.Controls = append(out.Controls, guard.ControlStats{ControlID: e.ControlID, ControlName: e.ControlName})
		}
		c := &out.Controls[j]
		failed := e.ErrorMessage != ""
		for _, n := range []*int64{&c.ExecutionCount, &out.Totals.ExecutionCount} {
			*n++
		}
		if e.Matched {
			c.MatchCount++
			out.Totals.MatchCount++
		} else if !failed {
			c.NonMatchCount++
			out.Totals.NonMatchCount++
		}
		if failed {
			c.ErrorCount++
			out.Totals.ErrorCount++
		}
		add(&c.ActionCounts, e)
		add(&out.Totals.ActionCounts, e)
		if q.AgentName == "" {
			k, ok := byAgent[e.AgentName]
			if !ok {
				k = len(out.Agents)
				byAgent[e.AgentName] = k
				out.Agents = append(out.Agents, guard.AgentStats{AgentName: e.AgentName})
			}
			a := &out.Agents[k]
			a.ExecutionCount++
			if e.Matched {
				a.MatchCount++
			} else if !failed {
				a.NonMatchCount++
			}
			if failed {
				a.ErrorCount++
			}
			add(&a.ActionCounts, e)
		}
		conf[e.ControlID] += e.Confidence
		if e.ExecutionDurationMS != nil {
			durations = append(durations, *e.ExecutionDurationMS)
			dur[e.ControlID] += *e.ExecutionDurationMS
			durN[e.ControlID]++
		}
		if width > 0 {
			p := &out.Totals.Timeseries[int(e.Timestamp.Sub(first)/width)]
			p.ExecutionCount++
			if e.Matched {
				p.MatchCount++
			} else if !failed {
				p.NonMatchCount++
			}
			if failed {
				p.ErrorCount++
			}
			add(&p.ActionCounts, e)
		}
	}
	for i := range out.Controls {
		c := &out.Controls[i]
		c.AvgConfidence = conf[c.ControlID] / float64(c.ExecutionCount)
		if durN[c.ControlID] > 0 {
			c.AvgDurationMS = dur[c.ControlID] / float64(durN[c.ControlID])
		}
	}
	sortControls(out.Controls)
	sort.Slice(out.Agents, func(i, j int) bool { return out.Agents[i].AgentName < out.Agents[j].AgentName })
	if q.AgentName == "" && out.Agents == nil {
		out.Agents = []guard.AgentStats{}
	}
	if q.P95 && q.ControlID == nil && len(durations) > 0 {
		sort.Float64s(durations)
		p := durations[int(math.Ceil(0.95*float64(len(durations))))-1]
		out.Totals.P95DurationMS, out.Totals.P95SampleSize = &p, int64(len(durations))
	}
	return out
}

func sortControls(cs []guard.ControlStats) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].ControlID < cs[j-1].ControlID; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// roundAverages makes float sums taken in different orders comparable.
func roundAverages(st *guard.Stats) {
	for _, l := range [][]guard.ControlStats{st.Controls, st.Shadow} {
		for i := range l {
			l[i].AvgConfidence = math.Round(l[i].AvgConfidence*1e9) / 1e9
			l[i].AvgDurationMS = math.Round(l[i].AvgDurationMS*1e9) / 1e9
		}
	}
}

// TestStatsMatchesBruteForce checks Stats (shadow events apart) (per-minute aggregates plus raw edges, or raw events) against a
// computation in Go over random events inserted in several batches, for aligned and unaligned ranges,
// buckets of whole minutes and of seconds, one control or all.
func TestStatsMatchesBruteForce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		rng := rand.New(rand.NewPCG(1, 2))
		base := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
		actions := []guard.Decision{guard.DecisionAllow, guard.DecisionDeny, guard.DecisionSteer, guard.DecisionWarn, guard.DecisionLog}
		var all []guard.Event
		for batch := range 6 {
			var events []guard.Event
			for range 400 {
				e := ev([]string{"a", "b"}[rng.IntN(2)], int64(1+rng.IntN(4)), base.Add(time.Duration(rng.Int64N(int64(3*time.Hour)))), rng.IntN(2) == 0, actions[rng.IntN(5)])
				e.Confidence = float64(rng.IntN(100)) / 100
				if rng.IntN(10) == 0 {
					e.ErrorMessage, e.Matched = "boom", false
				}
				if rng.IntN(3) > 0 {
					d := float64(rng.IntN(50))
					e.ExecutionDurationMS = &d
				}
				// Some evaluations of shadow controls: counted apart, never in the totals.
				e.Shadow = rng.IntN(8) == 0
				events = append(events, e)
			}
			if err := s.InsertEvents(ctx, events); err != nil {
				t.Fatalf("batch %d: %v", batch, err)
			}
			all = append(all, events...)
		}
		three := int64(3)
		queries := []guard.StatsQuery{
			{Since: base, Until: base.Add(3 * time.Hour), Bucket: 15 * time.Minute},
			{Since: base.Add(17 * time.Second), Until: base.Add(2*time.Hour + 42*time.Second), Bucket: time.Minute},
			{Since: base.Add(17 * time.Second), Until: base.Add(2*time.Hour + 42*time.Second)},
			{Since: base.Add(90 * time.Second), Until: base.Add(100 * time.Second)},
			{Since: base.Add(-time.Hour), Until: base.Add(40 * time.Minute), Bucket: 10 * time.Second},
			{Since: base.Add(31 * time.Second), Until: base.Add(3 * time.Hour), Bucket: 5 * time.Minute, ControlID: &three},
			{Since: base.Add(4 * time.Hour), Until: base.Add(5 * time.Hour), Bucket: time.Hour},
		}
		for i, q := range queries {
			for _, agent := range []string{"a", "b", ""} { // "": every agent
				q.AgentName = agent
				q.P95 = i%2 == 0 // with and without the p95
				got, err := s.Stats(ctx, q)
				if err != nil {
					t.Fatalf("query %d: %v", i, err)
				}
				want := bruteStats(all, q)
				roundAverages(&got)
				roundAverages(&want)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("query %d agent %s:\n got %+v\nwant %+v", i, agent, got, want)
				}
			}
		}
	})
}

// TestStatsP95ReadsTheNewestSample: the p95 duration is taken over the newest guard.MaxP95Sample
// durations of the range (so older ones do not count) and only for the agent asked about.
func TestStatsP95ReadsTheNewestSample(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		base := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
		var events []guard.Event
		for i := range guard.MaxP95Sample + 50 {
			e := ev("a", 1, base.Add(time.Duration(i)*time.Millisecond), false, guard.DecisionDeny)
			d := float64(1 + i%100) // the newest sample: 1..100 ms, p95 = 95
			if i < 50 {
				d = 5000 // older than the sample: must not count
			}
			e.ExecutionDurationMS = &d
			events = append(events, e)
		}
		other := ev("b", 2, base.Add(10*time.Millisecond+500*time.Microsecond), false, guard.DecisionDeny)
		slow := 9000.0
		other.ExecutionDurationMS = &slow
		events = append(events, other)
		if err := s.InsertEvents(ctx, events); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			agent  string
			p95    float64
			sample int64
		}{
			{"a", 95, guard.MaxP95Sample},
			{"b", 9000, 1},
			{"", 95, guard.MaxP95Sample}, // b's event is older than a's newest 10,000
		}
		for _, c := range cases {
			st, err := s.Stats(ctx, guard.StatsQuery{AgentName: c.agent, Since: base, Until: base.Add(time.Hour), P95: true})
			if err != nil {
				t.Fatal(err)
			}
			if st.Totals.P95DurationMS == nil || *st.Totals.P95DurationMS != c.p95 || st.Totals.P95SampleSize != c.sample {
				t.Errorf("agent %q: p95 %v over %d, want %v over %d", c.agent, st.Totals.P95DurationMS, st.Totals.P95SampleSize, c.p95, c.sample)
			}
		}
		st, err := s.Stats(ctx, guard.StatsQuery{Since: base.Add(2 * time.Hour), Until: base.Add(3 * time.Hour), P95: true})
		if err != nil {
			t.Fatal(err)
		}
		if st.Totals.P95DurationMS != nil || st.Totals.P95SampleSize != 0 {
			t.Errorf("an empty range has a p95: %v", st.Totals)
		}
		// Without P95 nothing is read for it.
		st, err = s.Stats(ctx, guard.StatsQuery{AgentName: "a", Since: base, Until: base.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if st.Totals.P95DurationMS != nil || st.Totals.P95SampleSize != 0 {
			t.Errorf("a p95 that was not asked for: %v", st.Totals)
		}
	})
}
