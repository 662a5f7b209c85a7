package store

import (
	"context"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	guard "github.com/guardrail-control/guard"
)

const (
	capturedCols = `agent_name, stage, step_type, step_name, step, step_bytes, decision, source, ts`
	capturedColN = 9
	// capturedChunk rows per INSERT: 500 * 9 parameters, far below both dialects' limits.
	capturedChunk = 500
)

// InsertCapturedSteps stores a batch of captured steps in one transaction, with multi-row INSERTs. Text
// that cannot be stored (NUL, invalid UTF-8) is replaced by U+FFFD: captured steps are records.
func (s *Store) InsertCapturedSteps(ctx context.Context, steps []guard.CapturedStep) error {
	if len(steps) == 0 {
		return nil
	}
	nowUS := now()
	return s.writeTx(ctx, func(tx *sqlx.Tx) error {
		for start := 0; start < len(steps); start += capturedChunk {
			chunk := steps[start:min(start+capturedChunk, len(steps))]
			args := make([]any, 0, len(chunk)*capturedColN)
			for i := range chunk {
				c := &chunk[i]
				ts := nowUS
				if !c.Time.IsZero() {
					ts = c.Time.UnixMicro()
				}
				body := clean(string(c.Step))
				src := c.Source
				if src == "" {
					src = "server"
				}
				args = append(args, clean(c.AgentName), clean(string(c.Stage)), clean(c.StepType), clean(c.StepName),
					body, int64(len(body)), clean(string(c.Decision)), clean(src), ts)
			}
			if _, err := tx.ExecContext(ctx, s.q(insertCapturedSQL(len(chunk))), args...); err != nil {
				return err
			}
		}
		return nil
	})
}

func insertCapturedSQL(rows int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO captured_steps (` + capturedCols + `) VALUES `)
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", capturedColN), ", ") + ")"
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}

type capturedRow struct {
	ID        int64  `db:"id"`
	AgentName string `db:"agent_name"`
	Stage     string `db:"stage"`
	StepType  string `db:"step_type"`
	StepName  string `db:"step_name"`
	Step      string `db:"step"`
	Decision  string `db:"decision"`
	Source    string `db:"source"`
	TS        int64  `db:"ts"`
}

// CapturedSteps returns the captured steps q selects, oldest first (by time, then id; the reverse with
// NewestFirst), stopping at Limit steps or MaxBytes of step JSON; more reports that further steps
// matched. A Limit of zero or less returns nothing. The (agent_name, ts) index serves both orders; the
// step type, name and stage filters are checked on the agent's rows, which the capture bounds keep few.
func (s *Store) CapturedSteps(ctx context.Context, q guard.CaptureQuery) ([]guard.CapturedStep, bool, error) {
	if q.Limit <= 0 {
		return nil, false, nil
	}
	var where []string
	var args []any
	if q.AgentName != "" {
		where = append(where, "agent_name = ?")
		args = append(args, q.AgentName)
	}
	if sc, scArgs := scopeCond("agent_name", q.Scope); sc != "" {
		where, args = append(where, sc), append(args, scArgs...)
	}
	for _, f := range []struct{ col, v string }{{"step_type", q.StepType}, {"step_name", q.StepName}, {"stage", string(q.Stage)}} {
		if f.v != "" {
			where = append(where, f.col+" = ?")
			args = append(args, f.v)
		}
	}
	if !q.Start.IsZero() {
		where = append(where, "ts >= ?")
		args = append(args, q.Start.UnixMicro())
	}
	if !q.End.IsZero() {
		where = append(where, "ts < ?")
		args = append(args, q.End.UnixMicro())
	}
	query := `SELECT id, agent_name, stage, step_type, step_name, step, decision, source, ts FROM captured_steps`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	if q.NewestFirst {
		query += " ORDER BY ts DESC, id DESC LIMIT ?"
	} else {
		query += " ORDER BY ts, id LIMIT ?"
	}
	args = append(args, q.Limit+1)
	rows, err := s.r.QueryxContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, false, mapErr(err)
	}
	defer rows.Close()
	var out []guard.CapturedStep
	var bytes int64
	for rows.Next() {
		var r capturedRow
		if err := rows.StructScan(&r); err != nil {
			return nil, false, mapErr(err)
		}
		bytes += int64(len(r.Step))
		if len(out) == q.Limit || (q.MaxBytes > 0 && bytes > q.MaxBytes && len(out) > 0) {
			return out, true, nil
		}
		out = append(out, guard.CapturedStep{ID: r.ID, AgentName: r.AgentName, Stage: guard.Stage(r.Stage),
			StepType: r.StepType, StepName: r.StepName, Step: []byte(r.Step), Decision: guard.Decision(r.Decision),
			Source: r.Source, Time: toTime(r.TS)})
	}
	return out, false, mapErr(rows.Err())
}

// PruneCapturedSteps deletes the captured steps older than before, then, when maxBytes is positive and
// the stored step bytes exceed it, the oldest steps until they do not (a running sum over ids, newest
// first, finds the cut in one statement). It returns how many steps it deleted.
func (s *Store) PruneCapturedSteps(ctx context.Context, before time.Time, maxBytes int64) (int64, error) {
	var n int64
	err := s.writeTx(ctx, func(tx *sqlx.Tx) error {
		if !before.IsZero() {
			res, err := tx.ExecContext(ctx, s.q(`DELETE FROM captured_steps WHERE ts < ?`), before.UnixMicro())
			if err != nil {
				return err
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
			}
			n += k
		}
		if maxBytes <= 0 {
			return nil
		}
		res, err := tx.ExecContext(ctx, s.q(`DELETE FROM captured_steps WHERE id <= (
			SELECT id FROM (SELECT id, SUM(step_bytes) OVER (ORDER BY id DESC) AS kept FROM captured_steps) w
			WHERE kept > ? ORDER BY id DESC LIMIT 1)`), maxBytes)
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		n += k
		return err
	})
	return n, err
}

// The store keeps captured steps for the server (issue 14).
var _ guard.CaptureStore = (*Store)(nil)
