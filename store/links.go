package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	guard "github.com/guardrail-control/guard"
)

// LinkControl links a live control to an agent; linking twice changes nothing. The agent's revision
// moves when the link is new.
func (s *Store) LinkControl(ctx context.Context, agentName string, controlID int64) error {
	key, err := agentKey(agentName)
	if err != nil {
		return err
	}
	return s.policyTx(ctx, func(tx *sqlx.Tx, epoch int64) error {
		agent, err := s.loadAgent(ctx, tx, key, false)
		if err != nil {
			return err
		}
		if _, err := s.loadControl(ctx, tx, controlID, false); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO agent_controls (agent_id, control_id, created_at) VALUES (?, ?, ?)
			ON CONFLICT (agent_id, control_id) DO NOTHING`), agent.ID, controlID, now())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		_, err = tx.ExecContext(ctx, s.q(`UPDATE agents SET revision = ? WHERE id = ?`), epoch, agent.ID)
		return err
	})
}

// UnlinkControl removes a link and reports whether there was one; the agent's revision moves if so.
func (s *Store) UnlinkControl(ctx context.Context, agentName string, controlID int64) (bool, error) {
	key, err := agentKey(agentName)
	if err != nil {
		return false, err
	}
	removed := false
	err = s.policyTx(ctx, func(tx *sqlx.Tx, epoch int64) error {
		agent, err := s.loadAgent(ctx, tx, key, false)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.q(`DELETE FROM agent_controls WHERE agent_id = ? AND control_id = ?`), agent.ID, controlID)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n == 0 {
			return err
		}
		removed = true
		_, err = tx.ExecContext(ctx, s.q(`UPDATE agents SET revision = ? WHERE id = ?`), epoch, agent.ID)
		return err
	})
	return removed, err
}

// AgentControls returns the live controls linked to the agent that have data (enabled or not), in
// control-id order, with the agent's revision, read in one statement so the two agree.
func (s *Store) AgentControls(ctx context.Context, agentName string) ([]guard.AgentControl, guard.Revision, error) {
	key, err := agentKey(agentName)
	if err != nil {
		return nil, 0, err
	}
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT a.revision, c.id, c.name, c.enabled, c.data, c.version FROM agents a
		LEFT JOIN agent_controls l ON l.agent_id = a.id
		LEFT JOIN controls c ON c.id = l.control_id AND c.deleted_at IS NULL AND c.data IS NOT NULL
		WHERE a.name = ? ORDER BY c.id`), key)
	if err != nil {
		return nil, 0, mapErr(err)
	}
	defer rows.Close()
	var (
		rev   int64
		found bool
		out   = []guard.AgentControl{}
	)
	for rows.Next() {
		var (
			id      sql.NullInt64
			name    sql.NullString
			enabled sql.NullBool
			data    []byte
			version sql.NullInt64
		)
		if err := rows.Scan(&rev, &id, &name, &enabled, &data, &version); err != nil {
			return nil, 0, mapErr(err)
		}
		found = true
		if !id.Valid {
			continue
		}
		d, err := decodeData(data, enabled.Bool)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, guard.AgentControl{ID: id.Int64, ControlID: id.Int64, Name: name.String, Enabled: enabled.Bool, Control: *d,
			Version: int(version.Int64)})
	}
	if err := rows.Err(); err != nil {
		return nil, 0, mapErr(err)
	}
	if !found {
		return nil, 0, fmt.Errorf("store: %w", guard.ErrAgentNotFound)
	}
	return out, guard.Revision(rev), nil
}

// AgentRevision returns the agent's revision: the policy epoch of the last change to its effective
// controls (or of its creation).
func (s *Store) AgentRevision(ctx context.Context, agentName string) (guard.Revision, error) {
	key, err := agentKey(agentName)
	if err != nil {
		return 0, err
	}
	var rev int64
	err = s.r.GetContext(ctx, &rev, s.q(`SELECT revision FROM agents WHERE name = ?`), key)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("store: %w", guard.ErrAgentNotFound)
	}
	return guard.Revision(rev), mapErr(err)
}

// PolicyEpoch returns the global policy epoch, which every change to a control or a link moves forward.
func (s *Store) PolicyEpoch(ctx context.Context) (int64, error) {
	var epoch int64
	err := s.r.GetContext(ctx, &epoch, `SELECT epoch FROM policy_epoch WHERE id = 1`)
	return epoch, mapErr(err)
}
