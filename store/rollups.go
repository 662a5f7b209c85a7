package store

import (
	"context"
	"sort"
	"strings"

	"github.com/jmoiron/sqlx"

	guard "github.com/guardrail-control/guard"
)

// minuteUS is the width of one event_rollups row, in microseconds.
const minuteUS = int64(60_000_000)

type rollupKey struct {
	agent   string
	minute  int64
	control int64
}

// rollup is one event_rollups row being built from a batch; the fields follow the table's columns.
type rollup struct {
	name                                           string
	nameTS                                         int64
	executions, matches, nonMatches, errors        int64
	allows, denies, steers, warns, logs, durations int64
	confidence, duration                           float64
}

func (r *rollup) add(e *guard.Event, ts int64) {
	if r.name == "" || ts >= r.nameTS {
		r.name, r.nameTS = clean(e.ControlName), ts
	}
	r.executions++
	failed := e.ErrorMessage != ""
	switch {
	case e.Matched:
		r.matches++
		switch clean(string(e.Action)) {
		case "allow":
			r.allows++
		case "deny":
			r.denies++
		case "steer":
			r.steers++
		case "warn":
			r.warns++
		case "log", "observe":
			r.logs++
		}
	case !failed:
		r.nonMatches++
	}
	if failed {
		r.errors++
	}
	// The same values as rawStatsSQL counts: out-of-range numbers are left out of the sums.
	if c := e.Confidence; c >= 0 && c <= 1 {
		r.confidence += c
	}
	if d := e.ExecutionDurationMS; d != nil && *d >= 0 && *d <= guard.MaxEventDurationMS {
		r.duration += *d
		r.durations++
	}
}

const rollupCols = 16

// upsertRollups adds a batch of events to the per-minute aggregates, in the batch's transaction. Rows are
// written in key order, so that concurrent batches on PostgreSQL lock them in the same order.
func (s *Store) upsertRollups(ctx context.Context, tx *sqlx.Tx, events []guard.Event, ts []int64) error {
	acc := make(map[rollupKey]*rollup)
	for i := range events {
		e := &events[i]
		if e.Shadow {
			continue // shadow evaluations are counted apart (Stats reads them from the events)
		}
		k := rollupKey{agent: clean(e.AgentName), minute: floorDiv(ts[i], minuteUS), control: e.ControlID}
		r := acc[k]
		if r == nil {
			r = &rollup{}
			acc[k] = r
		}
		r.add(e, ts[i])
	}
	keys := make([]rollupKey, 0, len(acc))
	for k := range acc {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.agent != b.agent {
			return a.agent < b.agent
		}
		if a.minute != b.minute {
			return a.minute < b.minute
		}
		return a.control < b.control
	})
	for start := 0; start < len(keys); start += eventChunk {
		chunk := keys[start:min(start+eventChunk, len(keys))]
		args := make([]any, 0, len(chunk)*rollupCols)
		for _, k := range chunk {
			r := acc[k]
			args = append(args, k.agent, k.minute, k.control, r.name, r.executions, r.matches, r.nonMatches, r.errors,
				r.allows, r.denies, r.steers, r.warns, r.logs, r.confidence, r.duration, r.durations)
		}
		if _, err := tx.ExecContext(ctx, s.upsertRollupsSQL(len(chunk)), args...); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) upsertRollupsSQL(rows int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO event_rollups (agent_name, minute, control_id, control_name, executions, matches, non_matches,
		errors, allows, denies, steers, warns, logs, confidence_sum, duration_sum, durations) VALUES `)
	row := `(` + strings.Repeat(`?, `, rollupCols-1) + `?)`
	for i := range rows {
		if i > 0 {
			b.WriteString(`, `)
		}
		b.WriteString(row)
	}
	b.WriteString(` ON CONFLICT (agent_name, minute, control_id) DO UPDATE SET control_name = excluded.control_name`)
	for _, c := range []string{"executions", "matches", "non_matches", "errors", "allows", "denies", "steers", "warns", "logs",
		"confidence_sum", "duration_sum", "durations"} {
		b.WriteString(`, ` + c + ` = event_rollups.` + c + ` + excluded.` + c)
	}
	return s.q(b.String())
}
