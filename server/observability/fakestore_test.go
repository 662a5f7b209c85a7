package observability

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	guard "github.com/guardrail-control/guard"
)

// memStore is an in-memory guard.EventStore for the recorder and handler tests. Its hooks can make
// InsertEvents block or fail.
type memStore struct {
	mu      sync.Mutex
	events  []guard.Event
	batches []int       // sizes of the InsertEvents calls that succeeded
	prunes  []time.Time // before arguments of PruneEvents

	// block, when set, makes InsertEvents wait until it is closed (or the context ends).
	block chan struct{}
	// fail returns the error of the n-th InsertEvents call (1-based), nil for success.
	fail  func(call int) error
	calls int
}

func (s *memStore) InsertEvents(ctx context.Context, events []guard.Event) error {
	s.mu.Lock()
	s.calls++
	call, block, fail := s.calls, s.block, s.fail
	s.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fail != nil {
		if err := fail(call); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, events...)
	s.batches = append(s.batches, len(events))
	return nil
}

func (s *memStore) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *memStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

func (s *memStore) batchSizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.batches)
}

func (s *memStore) QueryEvents(_ context.Context, q guard.EventQuery) ([]guard.Event, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []guard.Event
	for _, e := range s.events {
		if q.AgentName != "" && e.AgentName != q.AgentName ||
			len(q.ControlIDs) > 0 && !slices.Contains(q.ControlIDs, e.ControlID) ||
			len(q.Actions) > 0 && !slices.Contains(q.Actions, e.Action) ||
			q.Matched != nil && e.Matched != *q.Matched ||
			q.Errored != nil && (e.ErrorMessage != "") != *q.Errored ||
			len(q.CheckStages) > 0 && !slices.Contains(q.CheckStages, e.CheckStage) ||
			len(q.StepTypes) > 0 && !slices.Contains(q.StepTypes, e.StepType) ||
			q.TraceID != "" && e.TraceID != q.TraceID ||
			q.StartTime != nil && e.Timestamp.Before(*q.StartTime) ||
			q.EndTime != nil && !e.Timestamp.Before(*q.EndTime) {
			continue
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b guard.Event) int { return b.Timestamp.Compare(a.Timestamp) })
	total := len(out)
	lo := min(q.Offset, total)
	hi := min(lo+q.Limit, total)
	return out[lo:hi], total, nil
}

func (s *memStore) Stats(_ context.Context, q guard.StatsQuery) (guard.Stats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st guard.Stats
	byControl := map[int64]*guard.ControlStats{}
	var order []int64
	sums := map[int64][3]float64{} // confidence sum, duration sum, duration count
	points := map[time.Time]*guard.StatsTimePoint{}
	byAgent := map[string]*guard.AgentStats{}
	var durations []float64
	for _, e := range s.events {
		if q.AgentName != "" && e.AgentName != q.AgentName || e.Timestamp.Before(q.Since) || !e.Timestamp.Before(q.Until) ||
			q.ControlID != nil && e.ControlID != *q.ControlID {
			continue
		}
		cs := byControl[e.ControlID]
		if cs == nil {
			cs = &guard.ControlStats{ControlID: e.ControlID}
			byControl[e.ControlID] = cs
			order = append(order, e.ControlID)
		}
		cs.ControlName = e.ControlName
		var ag *guard.AgentStats
		if q.AgentName == "" {
			if ag = byAgent[e.AgentName]; ag == nil {
				ag = &guard.AgentStats{AgentName: e.AgentName}
				byAgent[e.AgentName] = ag
			}
			ag.ExecutionCount++
		}
		if e.ExecutionDurationMS != nil {
			durations = append(durations, *e.ExecutionDurationMS)
		}
		var p *guard.StatsTimePoint
		if q.Bucket > 0 {
			ts := e.Timestamp.Truncate(q.Bucket)
			if p = points[ts]; p == nil {
				p = &guard.StatsTimePoint{Timestamp: ts}
				points[ts] = p
			}
			p.ExecutionCount++
		}
		st.Totals.ExecutionCount++
		cs.ExecutionCount++
		sm := sums[e.ControlID]
		sm[0] += e.Confidence
		if e.ExecutionDurationMS != nil {
			sm[1] += *e.ExecutionDurationMS
			sm[2]++
		}
		sums[e.ControlID] = sm
		switch {
		case e.ErrorMessage != "":
			st.Totals.ErrorCount++
			cs.ErrorCount++
			if p != nil {
				p.ErrorCount++
			}
			if ag != nil {
				ag.ErrorCount++
			}
		case e.Matched:
			st.Totals.MatchCount++
			cs.MatchCount++
			if ag != nil {
				ag.MatchCount++
				addAction(&ag.ActionCounts, e.Action)
			}
			addAction(&st.Totals.ActionCounts, e.Action)
			addAction(&cs.ActionCounts, e.Action)
			if p != nil {
				p.MatchCount++
				addAction(&p.ActionCounts, e.Action)
			}
		default:
			st.Totals.NonMatchCount++
			cs.NonMatchCount++
			if p != nil {
				p.NonMatchCount++
			}
			if ag != nil {
				ag.NonMatchCount++
			}
		}
	}
	if q.AgentName == "" {
		st.Agents = []guard.AgentStats{}
		for _, a := range byAgent {
			st.Agents = append(st.Agents, *a)
		}
		slices.SortFunc(st.Agents, func(a, b guard.AgentStats) int { return strings.Compare(a.AgentName, b.AgentName) })
	}
	if q.P95 && q.ControlID == nil && len(durations) > 0 { // nearest rank, over every duration (the fixtures are small)
		slices.Sort(durations)
		v := durations[(95*len(durations)+99)/100-1]
		st.Totals.P95DurationMS, st.Totals.P95SampleSize = &v, int64(len(durations))
	}
	slices.Sort(order)
	for _, id := range order {
		cs := byControl[id]
		sm := sums[id]
		cs.AvgConfidence = sm[0] / float64(cs.ExecutionCount)
		if sm[2] > 0 {
			cs.AvgDurationMS = sm[1] / sm[2]
		}
		st.Controls = append(st.Controls, *cs)
	}
	for _, p := range points {
		st.Totals.Timeseries = append(st.Totals.Timeseries, *p)
	}
	return st, nil
}

func addAction(c *guard.ActionCounts, d guard.Decision) {
	switch d {
	case guard.DecisionAllow:
		c.Allow++
	case guard.DecisionDeny:
		c.Deny++
	case guard.DecisionSteer:
		c.Steer++
	case guard.DecisionWarn:
		c.Warn++
	case guard.DecisionLog, guard.DecisionObserve:
		c.Log++
	}
}

func (s *memStore) PruneEvents(_ context.Context, before time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prunes = append(s.prunes, before)
	kept := s.events[:0]
	var n int64
	for _, e := range s.events {
		if e.Timestamp.Before(before) {
			n++
			continue
		}
		kept = append(kept, e)
	}
	s.events = kept
	return n, nil
}

func (s *memStore) pruneCalls() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.prunes)
}

var errWrite = errors.New("database is down")
