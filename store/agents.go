package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
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
}

func (r *stepRow) step() (guard.StepSchema, error) {
	st := guard.StepSchema{Type: r.Type, Name: r.Name, Description: r.Description}
	var err1, err2, err3 error
	st.InputSchema, err1 = scanMap(r.InputSchema)
	st.OutputSchema, err2 = scanMap(r.OutputSchema)
	st.Metadata, err3 = scanMap(r.Metadata)
	return st, errors.Join(err1, err2, err3)
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
	err := sqlx.SelectContext(ctx, q, &rows, s.q(`SELECT type, name, position, description, input_schema, output_schema, metadata
		FROM agent_steps WHERE agent_id = ? ORDER BY position`), agentID)
	return rows, err
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

func (s *Store) insertStep(ctx context.Context, tx *sqlx.Tx, agentID int64, pos int, st guard.StepSchema) error {
	in, err1 := mapArg(st.InputSchema)
	out, err2 := mapArg(st.OutputSchema)
	md, err3 := mapArg(st.Metadata)
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO agent_steps (agent_id, type, name, position, description, input_schema, output_schema, metadata)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`), agentID, st.Type, st.Name, pos, st.Description, in, out, md)
	return err
}

// checkInit validates an InitAgent input and returns the normalised agent name.
func checkInit(in *guard.AgentInit) (string, error) {
	var probs []guard.Problem
	name, err := guard.NormalizeAgentName(in.Agent.Name)
	if err != nil {
		probs = append(probs, guard.Problem{Field: "agent.agent_name", Code: guard.CodeInvalid, Message: "agent name " + err.Error()})
	}
	switch in.ConflictMode {
	case "", guard.ConflictStrict, guard.ConflictOverwrite:
	default:
		probs = append(probs, guard.Problem{Field: "conflict_mode", Code: guard.CodeInvalid, Message: "must be strict or overwrite"})
	}
	if md, err := mapArg(in.Agent.Metadata); err != nil {
		probs = append(probs, guard.Problem{Field: "agent.agent_metadata", Code: guard.CodeInvalid, Message: "is not JSON-encodable"})
	} else if md != nil && !storableJSON(md.(string)) {
		probs = append(probs, unstorable("agent.agent_metadata"))
	}
	if !storable(in.Agent.Description) {
		probs = append(probs, unstorable("agent.agent_description"))
	}
	if !storable(in.Agent.Version) {
		probs = append(probs, unstorable("agent.agent_version"))
	}
	seen := make(map[guard.StepRef]bool, len(in.Steps))
	for i, st := range in.Steps {
		field := "steps." + strconv.Itoa(i)
		if st.Type == "" || len(st.Type) > guard.MaxNameLength {
			probs = append(probs, guard.Problem{Field: field + ".type", Code: guard.CodeInvalid, Message: "must be 1 to 255 characters long"})
		}
		if st.Name == "" || len(st.Name) > guard.MaxNameLength {
			probs = append(probs, guard.Problem{Field: field + ".name", Code: guard.CodeInvalid, Message: "must be 1 to 255 characters long"})
		}
		if !storable(st.Type) || !storable(st.Name) || !storable(st.Description) {
			probs = append(probs, unstorable(field))
		}
		for _, m := range []map[string]any{st.InputSchema, st.OutputSchema, st.Metadata} {
			if enc, err := mapArg(m); err != nil || (enc != nil && !storableJSON(enc.(string))) {
				probs = append(probs, guard.Problem{Field: field, Code: guard.CodeInvalid, Message: "schemas and metadata must be JSON objects without NUL characters"})
				break
			}
		}
		ref := guard.StepRef{Type: st.Type, Name: st.Name}
		if seen[ref] {
			probs = append(probs, guard.Problem{Field: field, Code: guard.CodeConflict, Message: "repeats the (type, name) of an earlier step"})
		}
		seen[ref] = true
	}
	if len(probs) > 0 {
		return "", &guard.ValidationError{Problems: probs}
	}
	return name, nil
}

// InitAgent registers an agent with its steps. A new agent is created. For an existing one, overwrite
// replaces description, version, metadata and the whole step list; strict (the default) keeps the agent
// and its stored steps, adds the new steps, and fails with guard.ErrSchemaIncompatible when a step with a
// stored (type, name) arrives with a different input or output schema (compared as JSON values).
func (s *Store) InitAgent(ctx context.Context, in guard.AgentInit) (bool, guard.Agent, error) {
	name, err := checkInit(&in)
	if err != nil {
		return false, guard.Agent{}, err
	}
	md, err := jsonArg(in.Agent.Metadata)
	if in.Agent.Metadata == nil {
		md = "{}"
	}
	if err != nil {
		return false, guard.Agent{}, err
	}
	var created bool
	var row agentRow
	// Two first registrations of one agent can race on PostgreSQL: the loser's INSERT violates the unique
	// name, and its second attempt finds the agent and proceeds as for an existing one.
	for attempt := 0; ; attempt++ {
		err = s.initAgentTx(ctx, &in, name, md, &created, &row)
		if attempt == 0 && isUniqueViolation(err) {
			continue
		}
		break
	}
	if err != nil {
		return false, guard.Agent{}, err
	}
	a, err := row.agent()
	return created, a, err
}

func (s *Store) initAgentTx(ctx context.Context, in *guard.AgentInit, name, md string, created *bool, out *agentRow) error {
	*created = false
	var row agentRow
	err := s.writeTx(ctx, func(tx *sqlx.Tx) error {
		at := now()
		var err error
		row, err = s.loadAgent(ctx, tx, name, true)
		switch {
		case errors.Is(err, guard.ErrAgentNotFound):
			*created = true
			var epoch int64
			if err := tx.GetContext(ctx, &epoch, `SELECT epoch FROM policy_epoch WHERE id = 1`); err != nil {
				return err
			}
			if err := tx.GetContext(ctx, &row.ID, s.q(`INSERT INTO agents (name, description, version, metadata, revision, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`), name, in.Agent.Description, in.Agent.Version, md, epoch, at, at); err != nil {
				return err
			}
			for i, st := range in.Steps {
				if err := s.insertStep(ctx, tx, row.ID, i, st); err != nil {
					return err
				}
			}
		case err != nil:
			return err
		case in.ConflictMode == guard.ConflictOverwrite:
			if _, err := tx.ExecContext(ctx, s.q(`UPDATE agents SET description = ?, version = ?, metadata = ?, updated_at = ? WHERE id = ?`),
				in.Agent.Description, in.Agent.Version, md, at, row.ID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM agent_steps WHERE agent_id = ?`), row.ID); err != nil {
				return err
			}
			for i, st := range in.Steps {
				if err := s.insertStep(ctx, tx, row.ID, i, st); err != nil {
					return err
				}
			}
		default:
			if err := s.mergeSteps(ctx, tx, row.ID, in.Steps, at); err != nil {
				return err
			}
		}
		row, err = s.loadAgent(ctx, tx, name, false)
		return err
	})
	*out = row
	return err
}

// mergeSteps is InitAgent's strict mode for an existing agent.
func (s *Store) mergeSteps(ctx context.Context, tx *sqlx.Tx, agentID int64, steps []guard.StepSchema, at int64) error {
	stored, err := s.loadSteps(ctx, tx, agentID)
	if err != nil {
		return err
	}
	byRef := make(map[guard.StepRef]*stepRow, len(stored))
	next := 0
	for i := range stored {
		byRef[guard.StepRef{Type: stored[i].Type, Name: stored[i].Name}] = &stored[i]
		next = max(next, stored[i].Position+1)
	}
	added := false
	for i, st := range steps {
		old, ok := byRef[guard.StepRef{Type: st.Type, Name: st.Name}]
		if !ok {
			if err := s.insertStep(ctx, tx, agentID, next, st); err != nil {
				return err
			}
			next++
			added = true
			continue
		}
		for _, c := range []struct {
			what   string
			stored []byte
			given  map[string]any
		}{{"input_schema", old.InputSchema, st.InputSchema}, {"output_schema", old.OutputSchema, st.OutputSchema}} {
			same, err := sameJSON(c.stored, c.given)
			if err != nil {
				return err
			}
			if !same {
				return fmt.Errorf("store: steps.%d: %s differs from the registered step's: %w", i, c.what, guard.ErrSchemaIncompatible)
			}
		}
	}
	if added {
		_, err = tx.ExecContext(ctx, s.q(`UPDATE agents SET updated_at = ? WHERE id = ?`), at, agentID)
	}
	return err
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
	a, err := row.agent()
	if err != nil {
		return guard.Agent{}, nil, err
	}
	st, err := stepsOf(steps)
	return a, st, err
}

// ListAgents lists agents newest first; the filter is a case-insensitive substring of the name.
func (s *Store) ListAgents(ctx context.Context, f guard.AgentFilter, page guard.PageRequest) ([]guard.AgentSummary, guard.PageInfo, error) {
	after, err := decodeCursor("agents", page.Cursor)
	if err != nil {
		return nil, guard.PageInfo{}, err
	}
	limit := clampLimit(page.Limit)
	cond, args := `1 = 1`, []any{}
	if f.Name != "" {
		cond, args = s.contains(`a.name`), append(args, clean(strings.ToLower(f.Name)))
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
	pr := pageInfo("agents", limit, len(rows), total, func(i int) int64 { return rows[i].ID })
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
		if md, err = jsonArg(patch.Metadata); err != nil || !storableJSON(md.(string)) {
			return guard.Agent{}, nil, problem("agent_metadata", guard.CodeInvalid, "must be a JSON object without NUL characters")
		}
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
		for _, ref := range patch.RemoveSteps {
			if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM agent_steps WHERE agent_id = ? AND type = ? AND name = ?`), row.ID, ref.Type, ref.Name); err != nil {
				return err
			}
		}
		steps, err = s.loadSteps(ctx, tx, row.ID)
		return err
	})
	if err != nil {
		return guard.Agent{}, nil, err
	}
	a, err := row.agent()
	if err != nil {
		return guard.Agent{}, nil, err
	}
	st, err := stepsOf(steps)
	return a, st, err
}
