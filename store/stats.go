package store

import (
	"context"
	"database/sql"
	"time"

	guard "github.com/guardrail-control/guard"
)

// statsSQL aggregates one agent's events per control and per time bucket in a single pass over the
// covering index events_agent_ts. Only matched events count in the action counts; an event with an error
// message counts as an error, not as a non-match. Averages are carried as sums and counts so that Go can
// merge the buckets of a control.
const statsSQL = `SELECT control_id, ts / ? AS bucket, MAX(control_name) AS control_name,
	COUNT(*) AS executions,
	SUM(CASE WHEN matched THEN 1 ELSE 0 END) AS matches,
	SUM(CASE WHEN NOT matched AND error_message = '' THEN 1 ELSE 0 END) AS non_matches,
	SUM(CASE WHEN error_message <> '' THEN 1 ELSE 0 END) AS errors,
	SUM(CASE WHEN matched AND action = 'allow' THEN 1 ELSE 0 END) AS allows,
	SUM(CASE WHEN matched AND action = 'deny' THEN 1 ELSE 0 END) AS denies,
	SUM(CASE WHEN matched AND action = 'steer' THEN 1 ELSE 0 END) AS steers,
	SUM(CASE WHEN matched AND action = 'warn' THEN 1 ELSE 0 END) AS warns,
	SUM(CASE WHEN matched AND action IN ('log', 'observe') THEN 1 ELSE 0 END) AS logs,
	SUM(confidence) AS confidence_sum,
	SUM(duration_ms) AS duration_sum,
	COUNT(duration_ms) AS durations
	FROM events WHERE agent_name = ? AND ts >= ? AND ts < ?`

type statsRow struct {
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

func addActions(a *guard.ActionCounts, r *statsRow) {
	a.Allow += r.Allows
	a.Deny += r.Denies
	a.Steer += r.Steers
	a.Warn += r.Warns
	a.Log += r.Logs
}

// Stats aggregates one agent's events in [Since, Until) in the database: per control (ordered by control
// id), the totals, and with a Bucket the time series, every bucket of the range present (empty ones as
// zeros), bucket boundaries aligned on multiples of the width since the Unix epoch.
func (s *Store) Stats(ctx context.Context, q guard.StatsQuery) (guard.Stats, error) {
	from, to := q.Since.UnixMicro(), q.Until.UnixMicro()
	// Without a time series, one bucket as wide as the range (at most two groups per control).
	width := max(to-from, 1)
	if q.Bucket > 0 {
		width = max(q.Bucket.Microseconds(), 1)
		if n := (to - from) / width; n > maxBuckets {
			width = (to - from + maxBuckets - 1) / maxBuckets
		}
	}
	query, args := statsSQL, []any{width, clean(q.AgentName), from, to}
	if q.ControlID != nil {
		query += ` AND control_id = ?`
		args = append(args, *q.ControlID)
	}
	var rows []statsRow
	if err := s.r.SelectContext(ctx, &rows, s.q(query+` GROUP BY control_id, bucket ORDER BY control_id, bucket`), args...); err != nil {
		return guard.Stats{}, mapErr(err)
	}

	out := guard.Stats{Controls: []guard.ControlStats{}}
	t := &out.Totals
	var confidence, duration float64
	var durations int64
	flush := func() {
		c := &out.Controls[len(out.Controls)-1]
		if c.ExecutionCount > 0 {
			c.AvgConfidence = confidence / float64(c.ExecutionCount)
		}
		if durations > 0 {
			c.AvgDurationMS = duration / float64(durations)
		}
		confidence, duration, durations = 0, 0, 0
	}
	buckets := map[int64]*guard.StatsTimePoint{}
	for i := range rows {
		r := &rows[i]
		if len(out.Controls) == 0 || out.Controls[len(out.Controls)-1].ControlID != r.ControlID {
			if len(out.Controls) > 0 {
				flush()
			}
			out.Controls = append(out.Controls, guard.ControlStats{ControlID: r.ControlID})
		}
		c := &out.Controls[len(out.Controls)-1]
		c.ControlName = max(c.ControlName, r.ControlName)
		c.ExecutionCount += r.Executions
		c.MatchCount += r.Matches
		c.NonMatchCount += r.NonMatches
		c.ErrorCount += r.Errors
		addActions(&c.ActionCounts, r)
		confidence += r.Confidence
		duration += r.Duration.Float64
		durations += r.Durations

		t.ExecutionCount += r.Executions
		t.MatchCount += r.Matches
		t.NonMatchCount += r.NonMatches
		t.ErrorCount += r.Errors
		addActions(&t.ActionCounts, r)
		if q.Bucket > 0 {
			p := buckets[r.Bucket]
			if p == nil {
				p = &guard.StatsTimePoint{}
				buckets[r.Bucket] = p
			}
			p.ExecutionCount += r.Executions
			p.MatchCount += r.Matches
			p.ErrorCount += r.Errors
			addActions(&p.ActionCounts, r)
		}
	}
	if len(out.Controls) > 0 {
		flush()
	}
	if q.Bucket > 0 {
		first, last := floorDiv(from, width), floorDiv(to-1, width)
		t.Timeseries = make([]guard.StatsTimePoint, 0, max(last-first+1, 0))
		for b := first; b <= last; b++ {
			p := guard.StatsTimePoint{}
			if got := buckets[b]; got != nil {
				p = *got
			}
			p.Timestamp = time.UnixMicro(b * width).UTC()
			t.Timeseries = append(t.Timeseries, p)
		}
	}
	return out, nil
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
