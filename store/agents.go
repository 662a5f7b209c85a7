package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	guard "github.com/guardrail-control/guard"
)

type agentRow struct {
	ID          int64  `db:"id"`
	Name        string `db:"name"`
	Description string `db:"description"`
	Version     string `db:"version"`
	Metadata    []byte `db:"metadata"`
	Revision    int64  `db:"revision"`
	CreatedAt   int64  `db:"created_at"`
	UpdatedAt   int64  `db:"updated_at"`
}

const agentCols = `id, name, description, version, metadata, revision, created_at, updated_at`

func (a *agentRow) agent() (guard.Agent, error) {
	md, err := scanMap(a.Metadata)
	if md == nil {
		md = map[string]any{}
	}
	return guard.Agent{Name: a.Name, Description: a.Description, Version: a.Version, Metadata: md,
		CreatedAt: toTime(a.CreatedAt), UpdatedAt: toTime(a.UpdatedAt)}, err
}

type stepRow struct {
	Type         string `db:"type"`
	Name         string `db:"name"`
	Position     int    `db:"position"`
	Description  string `db:"description"`
	InputSchema  []byte `db:"input_schema"`
	OutputSchema []byte `db:"output_schema"`
	Metadata     []byte `db:"metadata"`
	Labels       []byte `db:"labels"`
}

func (r *stepRow) step() (guard.StepSchema, error) {
	st := guard.StepSchema{Type: r.Type, Name: r.Name, Description: r.Description}
	var err1, err2, err3, err4 error
	st.InputSchema, err1 = scanMap(r.InputSchema)
	st.OutputSchema, err2 = scanMap(r.OutputSchema)
	st.Metadata, err3 = scanMap(r.Metadata)
	st.Labels, err4 = scanLabels(r.Labels)
	return st, errors.Join(err1, err2, err3, err4)
}

// loadAgent reads an agent by normalised name. With lock (inside a write transaction) the row stays
// locked until the transaction ends, so that concurrent changes to one agent on PostgreSQL queue instead
// of colliding; SQLite's single writer needs no row locks.
func (s *Store) loadAgent(ctx context.Context, q sqlx.QueryerContext, name string, lock bool) (agentRow, error) {
	query := `SELECT ` + agentCols + ` FROM agents WHERE name = ?`
	if lock && s.dialect == Postgres {
		query += ` FOR UPDATE`
	}
	var row agentRow
	err := sqlx.GetContext(ctx, q, &row, s.q(query), name)
	if errors.Is(err, sql.ErrNoRows) {
		return row, fmt.Errorf("store: %w", guard.ErrAgentNotFound)
	}
	return row, err
}

func (s *Store) loadSteps(ctx context.Context, q sqlx.QueryerContext, agentID int64) ([]stepRow, error) {
	var rows []stepRow
	err := sqlx.SelectContext(ctx, q, &rows, s.q(`SELECT type, name, position, description, input_schema, output_schema, metadata, labels
		FROM agent_steps WHERE agent_id = ? ORDER BY position`), agentID)
	return rows, err
}

// agentWithSteps converts an agent's row and its step rows.
func agentWithSteps(row agentRow, steps []stepRow) (guard.Agent, []guard.StepSchema, error) {
	a, err := row.agent()
	if err != nil {
		return guard.Agent{}, nil, err
	}
	st, err := stepsOf(steps)
	return a, st, err
}

func stepsOf(rows []stepRow) ([]guard.StepSchema, error) {
	out := make([]guard.StepSchema, 0, len(rows))
	for i := range rows {
		st, err := rows[i].step()
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// stepBatch is how many steps one INSERT writes: 9 parameters a row keeps a statement far below the
// parameter limits of both dialects (SQLite 32,766, PostgreSQL 65,535), and one round trip per batch
// instead of per step is what makes a large registration fast on PostgreSQL.
const stepBatch = 500

// insertSteps inserts steps in order at positions from pos on, in batches of stepBatch rows.
func (s *Store) insertSteps(ctx context.Context, tx *sqlx.Tx, agentID int64, pos int, steps []guard.StepSchema) error {
	for len(steps) > 0 {
		n := min(len(steps), stepBatch)
		var q strings.Builder
		q.WriteString(`INSERT INTO agent_steps (agent_id, type, name, position, description, input_schema, output_schema, metadata, labels) VALUES `)
		args := make([]any, 0, 9*n)
		for i, st := range steps[:n] {
			in, err1 := mapArg(st.InputSchema)
			out, err2 := mapArg(st.OutputSchema)
			md, err3 := mapArg(st.Metadata)
			lb, err4 := labelsArg(st.Labels)
			if err := errors.Join(err1, err2, err3, err4); err != nil {
				return err
			}
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?)")
			args = append(args, agentID, st.Type, st.Name, pos+i, st.Description, in, out, md, lb)
		}
		if _, err := tx.ExecContext(ctx, s.q(q.String()), args...); err != nil {
			return err
		}
		steps, pos = steps[n:], pos+n
	}
	return nil
}

// GetAgent returns an agent and its steps in registration order.
func (s *Store) GetAgent(ctx context.Context, name string) (guard.Agent, []guard.StepSchema, error) {
	key, err := agentKey(name)
	if err != nil {
		return guard.Agent{}, nil, err
	}
	var (
		row   agentRow
		steps []stepRow
	)
	err = s.readTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		if row, err = s.loadAgent(ctx, tx, key, false); err != nil {
			return err
		}
		steps, err = s.loadSteps(ctx, tx, row.ID)
		return err
	})
	if err != nil {
		return guard.Agent{}, nil, err
	}
	return agentWithSteps(row, steps)
}

// ListAgents lists agents newest first; the filter is a case-insensitive substring of the name.
func (s *Store) ListAgents(ctx context.Context, f guard.AgentFilter, page guard.PageRequest) ([]guard.AgentSummary, guard.PageInfo, error) {
	after, err := s.decodeCursor(ctx, "agents", page.Cursor)
	if err != nil {
		return nil, guard.PageInfo{}, err
	}
	limit := clampLimit(page.Limit)
	cond, args := `1 = 1`, []any{}
	if f.Name != "" {
		// Folded as names are (ASCII only): a Kelvin sign must not find "k-agent". A text outside the
		// alphabet is in no name, like a lookup of a name that cannot exist.
		text, err := guard.NormalizeAgentNameFilter(f.Name)
		if err != nil {
			return nil, guard.PageInfo{Limit: limit}, nil
		}
		cond, args = s.contains(`a.name`), append(args, clean(text))
	}
	if sc, scArgs := scopeCond(`a.name`, f.Scope); sc != "" {
		cond, args = cond+` AND `+sc, append(args, scArgs...)
	}
	var total int
	if err := s.r.GetContext(ctx, &total, s.q(`SELECT COUNT(*) FROM agents a WHERE `+cond), args...); err != nil {
		return nil, guard.PageInfo{}, mapErr(err)
	}
	if after > 0 {
		cond += ` AND a.id < ?`
		args = append(args, after)
	}
	args = append(args, limit+1)
	var rows []struct {
		ID           int64  `db:"id"`
		Name         string `db:"name"`
		Description  string `db:"description"`
		Version      string `db:"version"`
		StepCount    int    `db:"step_count"`
		ControlCount int    `db:"control_count"`
		CreatedAt    int64  `db:"created_at"`
		UpdatedAt    int64  `db:"updated_at"`
	}
	err = s.r.SelectContext(ctx, &rows, s.q(`SELECT a.id, a.name, a.description, a.version, a.created_at, a.updated_at,
		(SELECT COUNT(*) FROM agent_steps st WHERE st.agent_id = a.id) AS step_count,
		(SELECT COUNT(*) FROM agent_controls l WHERE l.agent_id = a.id) AS control_count
		FROM agents a WHERE `+cond+` ORDER BY a.id DESC LIMIT ?`), args...)
	if err != nil {
		return nil, guard.PageInfo{}, mapErr(err)
	}
	pr, err := s.pageInfo(ctx, "agents", limit, len(rows), total, func(i int) int64 { return rows[i].ID })
	if err != nil {
		return nil, guard.PageInfo{}, err
	}
	out := make([]guard.AgentSummary, 0, pr.Rows)
	for _, r := range rows[:pr.Rows] {
		out = append(out, guard.AgentSummary{Name: r.Name, Description: r.Description, Version: r.Version,
			StepCount: r.StepCount, ControlCount: r.ControlCount, CreatedAt: toTime(r.CreatedAt), UpdatedAt: toTime(r.UpdatedAt)})
	}
	return out, pr.info(), nil
}

// PatchAgent changes an agent's description, version or metadata and removes steps; steps it does not
// have are ignored.
func (s *Store) PatchAgent(ctx context.Context, name string, patch guard.AgentPatch) (guard.Agent, []guard.StepSchema, error) {
	key, err := agentKey(name)
	if err != nil {
		return guard.Agent{}, nil, err
	}
	var md any
	if patch.Metadata != nil {
		enc, p := guard.CheckFreeJSON("agent_metadata", patch.Metadata)
		if p != nil {
			return guard.Agent{}, nil, &guard.ValidationError{Problems: []guard.Problem{*p}}
		}
		if !storableJSON(string(enc)) {
			return guard.Agent{}, nil, problem("agent_metadata", guard.CodeInvalid, "must be a JSON object without NUL characters")
		}
		md = string(enc)
	}
	var probs []guard.Problem
	if patch.Description != nil && !storable(*patch.Description) {
		probs = append(probs, unstorable("agent_description"))
	}
	if patch.Version != nil && !storable(*patch.Version) {
		probs = append(probs, unstorable("agent_version"))
	}
	for i := range patch.RemoveSteps {
		patch.RemoveSteps[i] = guard.StepRef{Type: clean(patch.RemoveSteps[i].Type), Name: clean(patch.RemoveSteps[i].Name)}
	}
	if len(probs) > 0 {
		return guard.Agent{}, nil, &guard.ValidationError{Problems: probs}
	}
	var (
		row   agentRow
		steps []stepRow
	)
	err = s.writeTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		if row, err = s.loadAgent(ctx, tx, key, true); err != nil {
			return err
		}
		if patch.Description != nil {
			row.Description = *patch.Description
		}
		if patch.Version != nil {
			row.Version = *patch.Version
		}
		if md != nil {
			row.Metadata = []byte(md.(string))
		}
		row.UpdatedAt = now()
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE agents SET description = ?, version = ?, metadata = ?, updated_at = ? WHERE id = ?`),
			row.Description, row.Version, string(row.Metadata), row.UpdatedAt, row.ID); err != nil {
			return err
		}
		labelled := false // a removed step declared labels: the agent's revision moves (step_labels.go)
		for _, ref := range patch.RemoveSteps {
			var lb []byte
			err := tx.GetContext(ctx, &lb, s.q(`DELETE FROM agent_steps WHERE agent_id = ? AND type = ? AND name = ? RETURNING labels`), row.ID, ref.Type, ref.Name)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return err
			case lb != nil:
				labelled = true
			}
		}
		if labelled {
			if err := s.bumpRevision(ctx, tx, row.ID); err != nil {
				return err
			}
		}
		steps, err = s.loadSteps(ctx, tx, row.ID)
		return err
	})
	if err != nil {
		return guard.Agent{}, nil, err
	}
	return agentWithSteps(row, steps)
}
