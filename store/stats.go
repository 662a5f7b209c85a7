package store

import (
	"context"
	"database/sql"
	"math"
	"sort"
	"time"

	guard "github.com/guardrail-control/guard"
)

// maxDuration is guard.MaxEventDurationMS in SQL. Statistics leave out durations outside [0, maxDuration]
// and confidences outside [0, 1] (and the per-minute aggregates that hold such values, or infinities,
// from before the server refused them): NaN and infinities fail both comparisons on both databases, and
// the sums of values in range cannot overflow. Without this, two stored durations of 1.7e308 made every
// statistics request of their agent fail (an overflow on PostgreSQL, an infinite average on SQLite).
const maxDuration = "86400000"

// rawStatsSQL aggregates events per control and time bucket (the partial minutes at the edges of a range,
// or a whole range whose buckets are not whole minutes) over the index events_agent_ts.
// Only matched events count in the action counts; an event with an error message counts as an error, not
// as a non-match.
const rawStatsSQL = `SELECT agent_name, control_id, ts / ? AS bucket, MAX(control_name) AS control_name,
	COUNT(*) AS executions,
	SUM(CASE WHEN matched THEN 1 ELSE 0 END) AS matches,
	SUM(CASE WHEN NOT matched AND error_message = '' THEN 1 ELSE 0 END) AS non_matches,
	SUM(CASE WHEN error_message <> '' THEN 1 ELSE 0 END) AS errors,
	SUM(CASE WHEN matched AND action = 'allow' THEN 1 ELSE 0 END) AS allows,
	SUM(CASE WHEN matched AND action = 'deny' THEN 1 ELSE 0 END) AS denies,
	SUM(CASE WHEN matched AND action = 'steer' THEN 1 ELSE 0 END) AS steers,
	SUM(CASE WHEN matched AND action = 'warn' THEN 1 ELSE 0 END) AS warns,
	SUM(CASE WHEN matched AND action IN ('log', 'observe') THEN 1 ELSE 0 END) AS logs,
	SUM(CASE WHEN confidence >= 0 AND confidence <= 1 THEN confidence ELSE 0 END) AS confidence_sum,
	SUM(CASE WHEN duration_ms >= 0 AND duration_ms <= ` + maxDuration + ` THEN duration_ms END) AS duration_sum,
	COUNT(CASE WHEN duration_ms >= 0 AND duration_ms <= ` + maxDuration + ` THEN 1 END) AS durations
	FROM events WHERE ts >= ? AND ts < ?`

// rollupStatsSQL is the same over the per-minute aggregates of whole minutes.
const rollupStatsSQL = `SELECT agent_name, control_id, minute / ? AS bucket, MAX(control_name) AS control_name,
	SUM(executions) AS executions, SUM(matches) AS matches, SUM(non_matches) AS non_matches, SUM(errors) AS errors,
	SUM(allows) AS allows, SUM(denies) AS denies, SUM(steers) AS steers, SUM(warns) AS warns, SUM(logs) AS logs,
	SUM(CASE WHEN confidence_sum >= 0 AND confidence_sum <= executions THEN confidence_sum ELSE 0 END) AS confidence_sum,
	SUM(CASE WHEN duration_sum >= 0 AND duration_sum <= durations * ` + maxDuration + ` THEN duration_sum END) AS duration_sum,
	SUM(CASE WHEN duration_sum >= 0 AND duration_sum <= durations * ` + maxDuration + ` THEN durations ELSE 0 END) AS durations
	FROM event_rollups WHERE minute >= ? AND minute < ?`

type statsRow struct {
	AgentName   string          `db:"agent_name"`
	ControlID   int64           `db:"control_id"`
	Bucket      int64           `db:"bucket"`
	ControlName string          `db:"control_name"`
	Executions  int64           `db:"executions"`
	Matches     int64           `db:"matches"`
	NonMatches  int64           `db:"non_matches"`
	Errors      int64           `db:"errors"`
	Allows      int64           `db:"allows"`
	Denies      int64           `db:"denies"`
	Steers      int64           `db:"steers"`
	Warns       int64           `db:"warns"`
	Logs        int64           `db:"logs"`
	Confidence  float64         `db:"confidence_sum"`
	Duration    sql.NullFloat64 `db:"duration_sum"`
	Durations   int64           `db:"durations"`
}

// Stats aggregates one agent's events (every agent's when AgentName is empty, with a breakdown per agent)
// in [Since, Until) in the database: per control (ordered by control id), the totals, the p95 duration
// (with P95, without ControlID), and with a Bucket the time series, every bucket of the range present (empty ones as
// zeros), bucket boundaries aligned on multiples of the width since the Unix epoch.
//
// Whole minutes are read from the per-minute aggregates (event_rollups) when the buckets are whole
// minutes, and only the partial minutes at the edges from the events, so the cost grows with the length of
// the range, not with the number of events in it.
func (s *Store) Stats(ctx context.Context, q guard.StatsQuery) (guard.Stats, error) {
	from, to := q.Since.UnixMicro(), q.Until.UnixMicro()
	width := max(to-from, 1) // without a time series: one bucket as wide as the range
	if q.Bucket > 0 {
		width = max(q.Bucket.Microseconds(), 1)
		if n := (to - from) / width; n > maxBuckets {
			width = (to - from + maxBuckets - 1) / maxBuckets
		}
	}
	var rows []statsRow
	var err error
	raw := func(a, b int64) error {
		if a >= b {
			return nil
		}
		return s.statsRows(ctx, &rows, rawStatsSQL+` AND NOT shadow`, width, q, a, b)
	}
	m0, m1 := floorDiv(from+minuteUS-1, minuteUS), floorDiv(to, minuteUS) // the whole minutes of the range
	if from >= 0 && m0 < m1 && (q.Bucket == 0 || width%minuteUS == 0) {
		perBucket := max(width/minuteUS, 1)
		if q.Bucket == 0 {
			perBucket = m1 - m0
		}
		if err := s.statsRows(ctx, &rows, rollupStatsSQL, perBucket, q, m0, m1); err != nil {
			return guard.Stats{}, err
		}
		if err := raw(from, m0*minuteUS); err != nil {
			return guard.Stats{}, err
		}
		if err := raw(m1*minuteUS, to); err != nil {
			return guard.Stats{}, err
		}
	} else if err := raw(from, to); err != nil {
		return guard.Stats{}, err
	}
	out := mergeStats(rows)
	if q.AgentName == "" {
		out.Agents = mergeAgents(rows)
	}
	if q.Bucket > 0 {
		out.Totals.Timeseries = timeseries(rows, from, to, width)
	}
	if out.Shadow, err = s.shadowStats(ctx, q, from, to); err != nil {
		return guard.Stats{}, err
	}
	if q.P95 && q.ControlID == nil {
		if err := s.p95(ctx, q, &out.Totals); err != nil {
			return guard.Stats{}, err
		}
	}
	return out, nil
}

func (s *Store) statsRows(ctx context.Context, rows *[]statsRow, query string, width int64, q guard.StatsQuery, a, b int64) error {
	args := []any{width, a, b}
	switch {
	case q.AgentName != "":
		query += ` AND agent_name = ?`
		args = append(args, clean(q.AgentName))
	case query == rollupStatsSQL:
		// Every agent: the agents of the range come from the covering index event_rollups_minute, then
		// each agent's minutes from the primary key (agent_name, minute, ...), rather than every row of
		// the range looked up from the minute index.
		query += ` AND agent_name IN (SELECT DISTINCT agent_name FROM event_rollups WHERE minute >= ? AND minute < ?)`
		args = append(args, a, b)
	}
	if sc, scArgs := scopeCond(`agent_name`, q.Scope); sc != "" {
		query += ` AND ` + sc
		args = append(args, scArgs...)
	}
	if q.ControlID != nil {
		query += ` AND control_id = ?`
		args = append(args, *q.ControlID)
	}
	var got []statsRow
	if err := s.r.SelectContext(ctx, &got, s.q(query+` GROUP BY agent_name, control_id, bucket`), args...); err != nil {
		return mapErr(err)
	}
	*rows = append(*rows, got...)
	return nil
}

func addActions(a *guard.ActionCounts, r *statsRow) {
	a.Allow += r.Allows
	a.Deny += r.Denies
	a.Steer += r.Steers
	a.Warn += r.Warns
	a.Log += r.Logs
}

// mergeStats adds up rows (of any number of queries) per control and in total.
func mergeStats(rows []statsRow) guard.Stats {
	type acc struct {
		c                    guard.ControlStats
		confidence, duration float64
		durations            int64
	}
	byControl := map[int64]*acc{}
	out := guard.Stats{Controls: []guard.ControlStats{}}
	t := &out.Totals
	for i := range rows {
		r := &rows[i]
		a := byControl[r.ControlID]
		if a == nil {
			a = &acc{c: guard.ControlStats{ControlID: r.ControlID}}
			byControl[r.ControlID] = a
		}
		c := &a.c
		c.ControlName = max(c.ControlName, r.ControlName)
		c.ExecutionCount += r.Executions
		c.MatchCount += r.Matches
		c.NonMatchCount += r.NonMatches
		c.ErrorCount += r.Errors
		addActions(&c.ActionCounts, r)
		a.confidence += r.Confidence
		a.duration += r.Duration.Float64
		a.durations += r.Durations

		t.ExecutionCount += r.Executions
		t.MatchCount += r.Matches
		t.NonMatchCount += r.NonMatches
		t.ErrorCount += r.Errors
		addActions(&t.ActionCounts, r)
	}
	for _, a := range byControl {
		if a.c.ExecutionCount > 0 {
			a.c.AvgConfidence = finite(a.confidence / float64(a.c.ExecutionCount))
		}
		if a.durations > 0 {
			a.c.AvgDurationMS = finite(a.duration / float64(a.durations))
		}
		out.Controls = append(out.Controls, a.c)
	}
	sort.Slice(out.Controls, func(i, j int) bool { return out.Controls[i].ControlID < out.Controls[j].ControlID })
	return out
}

// finite returns f, or 0 when it is NaN or infinite: an average that cannot be encoded in JSON must not
// take the whole answer down (the SQL already leaves out the values that could cause one).
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// timeseries lays the rows out as one point per bucket of [from, to), empty buckets included.
func timeseries(rows []statsRow, from, to, width int64) []guard.StatsTimePoint {
	first, last := floorDiv(from, width), floorDiv(to-1, width)
	points := make([]guard.StatsTimePoint, max(last-first+1, 0))
	for i := range points {
		points[i].Timestamp = time.UnixMicro((first + int64(i)) * width).UTC()
	}
	for i := range rows {
		r := &rows[i]
		if r.Bucket < first || r.Bucket > last {
			continue
		}
		p := &points[r.Bucket-first]
		p.ExecutionCount += r.Executions
		p.MatchCount += r.Matches
		p.NonMatchCount += r.NonMatches
		p.ErrorCount += r.Errors
		addActions(&p.ActionCounts, r)
	}
	return points
}

// maxBuckets bounds the time series so that a tiny bucket over a long range cannot exhaust memory.
const maxBuckets = 10_000

// floorDiv divides rounding toward negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// shadowStats aggregates the shadow events of [from, to) per control, from the events themselves (over
// the partial index events_shadow: nothing to read when there are none). They are never in the
// per-minute aggregates, so the totals of real decisions do not count them.
func (s *Store) shadowStats(ctx context.Context, q guard.StatsQuery, from, to int64) ([]guard.ControlStats, error) {
	var rows []statsRow
	if from < to {
		if err := s.statsRows(ctx, &rows, rawStatsSQL+` AND shadow`, max(to-from, 1), q, from, to); err != nil {
			return nil, err
		}
	}
	out := mergeStats(rows).Controls
	for i := range out {
		out[i].Shadow = true
	}
	return out, nil
}
