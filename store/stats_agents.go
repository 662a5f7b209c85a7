package store

import (
	"context"
	"math"
	"slices"
	"sort"
	"strconv"

	guard "github.com/guardrail-control/guard"
)

// mergeAgents adds up rows per agent, ordered by agent name (statistics across every agent).
func mergeAgents(rows []statsRow) []guard.AgentStats {
	byAgent := map[string]*guard.AgentStats{}
	for i := range rows {
		r := &rows[i]
		a := byAgent[r.AgentName]
		if a == nil {
			a = &guard.AgentStats{AgentName: r.AgentName}
			byAgent[r.AgentName] = a
		}
		a.ExecutionCount += r.Executions
		a.MatchCount += r.Matches
		a.NonMatchCount += r.NonMatches
		a.ErrorCount += r.Errors
		addActions(&a.ActionCounts, r)
	}
	out := make([]guard.AgentStats, 0, len(byAgent))
	for _, a := range byAgent {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AgentName < out[j].AgentName })
	return out
}

// p95SQL reads the durations of the newest events of a range, over the index events_ts (every agent) or
// events_agent_ts (one agent): a bounded read whatever the number of events in the range. A histogram in
// the per-minute aggregates would cover every event of long ranges, but only to the precision of its
// buckets, and would widen every row the hot write path upserts; the newest guard.MaxP95Sample events are
// exact, cheap, and what an operator watching the fleet asks about.
const p95SQL = `SELECT duration_ms FROM events WHERE ts >= ? AND ts < ? AND NOT shadow` // real decisions only, as the totals

// p95 sets the totals' p95 duration (nearest rank) over the newest guard.MaxP95Sample durations of the
// range, leaving out values outside [0, guard.MaxEventDurationMS] as every statistic does.
func (s *Store) p95(ctx context.Context, q guard.StatsQuery, t *guard.StatsTotals) error {
	query, args := p95SQL, []any{q.Since.UnixMicro(), q.Until.UnixMicro()}
	if q.AgentName != "" {
		query += ` AND agent_name = ?`
		args = append(args, clean(q.AgentName))
	}
	if sc, scArgs := scopeCond(`agent_name`, q.Scope); sc != "" {
		query += ` AND ` + sc
		args = append(args, scArgs...)
	}
	query += ` AND duration_ms >= 0 AND duration_ms <= ` + maxDuration + ` ORDER BY ts DESC LIMIT ` + strconv.Itoa(guard.MaxP95Sample)
	var ds []float64
	if err := s.r.SelectContext(ctx, &ds, s.q(query), args...); err != nil {
		return mapErr(err)
	}
	if len(ds) == 0 {
		return nil
	}
	slices.Sort(ds)
	v := finite(ds[int(math.Ceil(0.95*float64(len(ds))))-1])
	t.P95DurationMS, t.P95SampleSize = &v, int64(len(ds))
	return nil
}
