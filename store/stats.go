package store

import (
	"context"
	"database/sql"
	"time"

	guard "github.com/guardrail-control/guard"
)

// statsCols are the aggregates of a group of events. Only matched events count in the action counts;
// an event with an error message counts as an error, not as a non-match.
const statsCols = `COUNT(*) AS executions,
	SUM(CASE WHEN matched THEN 1 ELSE 0 END) AS matches,
	SUM(CASE WHEN NOT matched AND error_message = '' THEN 1 ELSE 0 END) AS non_matches,
	SUM(CASE WHEN error_message <> '' THEN 1 ELSE 0 END) AS errors,
	SUM(CASE WHEN matched AND action = 'allow' THEN 1 ELSE 0 END) AS allows,
	SUM(CASE WHEN matched AND action = 'deny' THEN 1 ELSE 0 END) AS denies,
	SUM(CASE WHEN matched AND action = 'steer' THEN 1 ELSE 0 END) AS steers,
	SUM(CASE WHEN matched AND action = 'warn' THEN 1 ELSE 0 END) AS warns,
	SUM(CASE WHEN matched AND action IN ('log', 'observe') THEN 1 ELSE 0 END) AS logs`

type statsRow struct {
	Executions int64 `db:"executions"`
	Matches    int64 `db:"matches"`
	NonMatches int64 `db:"non_matches"`
	Errors     int64 `db:"errors"`
	Allows     int64 `db:"allows"`
	Denies     int64 `db:"denies"`
	Steers     int64 `db:"steers"`
	Warns      int64 `db:"warns"`
	Logs       int64 `db:"logs"`
}

func (r *statsRow) actions() guard.ActionCounts {
	return guard.ActionCounts{Allow: r.Allows, Deny: r.Denies, Steer: r.Steers, Warn: r.Warns, Log: r.Logs}
}

// Stats aggregates one agent's events in [Since, Until) in the database: per control (ordered by control
// id), the totals, and with a Bucket the time series, every bucket of the range present (empty ones as
// zeros), bucket boundaries aligned on multiples of the width since the Unix epoch.
func (s *Store) Stats(ctx context.Context, q guard.StatsQuery) (guard.Stats, error) {
	cond := `agent_name = ? AND ts >= ? AND ts < ?`
	args := []any{q.AgentName, q.Since.UnixMicro(), q.Until.UnixMicro()}
	if q.ControlID != nil {
		cond += ` AND control_id = ?`
		args = append(args, *q.ControlID)
	}
	var rows []struct {
		ControlID   int64  `db:"control_id"`
		ControlName string `db:"control_name"`
		statsRow
		AvgConfidence sql.NullFloat64 `db:"avg_confidence"`
		AvgDuration   sql.NullFloat64 `db:"avg_duration"`
	}
	err := s.r.SelectContext(ctx, &rows, s.q(`SELECT control_id, MAX(control_name) AS control_name, `+statsCols+`,
		AVG(confidence) AS avg_confidence, AVG(duration_ms) AS avg_duration
		FROM events WHERE `+cond+` GROUP BY control_id ORDER BY control_id`), args...)
	if err != nil {
		return guard.Stats{}, mapErr(err)
	}
	out := guard.Stats{Controls: make([]guard.ControlStats, 0, len(rows))}
	t := &out.Totals
	for _, r := range rows {
		out.Controls = append(out.Controls, guard.ControlStats{ControlID: r.ControlID, ControlName: r.ControlName,
			ExecutionCount: r.Executions, MatchCount: r.Matches, NonMatchCount: r.NonMatches, ErrorCount: r.Errors,
			ActionCounts: r.actions(), AvgConfidence: r.AvgConfidence.Float64, AvgDurationMS: r.AvgDuration.Float64})
		t.ExecutionCount += r.Executions
		t.MatchCount += r.Matches
		t.NonMatchCount += r.NonMatches
		t.ErrorCount += r.Errors
		t.ActionCounts.Allow += r.Allows
		t.ActionCounts.Deny += r.Denies
		t.ActionCounts.Steer += r.Steers
		t.ActionCounts.Warn += r.Warns
		t.ActionCounts.Log += r.Logs
	}
	if q.Bucket > 0 {
		if t.Timeseries, err = s.timeseries(ctx, q, cond, args); err != nil {
			return guard.Stats{}, err
		}
	}
	return out, nil
}

// maxBuckets bounds the time series so that a tiny bucket over a long range cannot exhaust memory.
const maxBuckets = 10_000

func (s *Store) timeseries(ctx context.Context, q guard.StatsQuery, cond string, args []any) ([]guard.StatsTimePoint, error) {
	width := q.Bucket.Microseconds()
	if width <= 0 {
		width = 1
	}
	first, last := floorDiv(q.Since.UnixMicro(), width), floorDiv(q.Until.UnixMicro()-1, width)
	if last-first+1 > maxBuckets {
		width = (q.Until.UnixMicro() - q.Since.UnixMicro() + maxBuckets - 1) / maxBuckets
		first, last = floorDiv(q.Since.UnixMicro(), width), floorDiv(q.Until.UnixMicro()-1, width)
	}
	var rows []struct {
		Bucket int64 `db:"bucket"`
		statsRow
	}
	err := s.r.SelectContext(ctx, &rows, s.q(`SELECT ts / ? AS bucket, `+statsCols+`
		FROM events WHERE `+cond+` GROUP BY bucket ORDER BY bucket`), append([]any{width}, args...)...)
	if err != nil {
		return nil, mapErr(err)
	}
	points := make([]guard.StatsTimePoint, 0, max(last-first+1, 0))
	i := 0
	for b := first; b <= last; b++ {
		p := guard.StatsTimePoint{Timestamp: time.UnixMicro(b * width).UTC(), ActionCounts: guard.ActionCounts{}}
		for i < len(rows) && rows[i].Bucket < b {
			i++
		}
		if i < len(rows) && rows[i].Bucket == b {
			r := rows[i]
			p.ExecutionCount, p.MatchCount, p.ErrorCount, p.ActionCounts = r.Executions, r.Matches, r.Errors, r.actions()
		}
		points = append(points, p)
	}
	return points, nil
}

// floorDiv divides rounding toward negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}
