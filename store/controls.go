package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/jmoiron/sqlx"

	guard "github.com/guardrail-control/guard"
)

// controlRow is a row of the controls table.
type controlRow struct {
	ID        int64         `db:"id"`
	Name      string        `db:"name"`
	Enabled   bool          `db:"enabled"`
	Data      []byte        `db:"data"`
	Version   int           `db:"version"`
	CreatedAt int64         `db:"created_at"`
	UpdatedAt int64         `db:"updated_at"`
	DeletedAt sql.NullInt64 `db:"deleted_at"`
}

const controlCols = `id, name, enabled, data, version, created_at, updated_at, deleted_at`

func (r *controlRow) record() (guard.ControlRecord, error) {
	rec := guard.ControlRecord{ID: r.ID, Name: r.Name, Enabled: r.Enabled, Version: r.Version,
		CreatedAt: toTime(r.CreatedAt), UpdatedAt: toTime(r.UpdatedAt)}
	d, err := decodeData(r.Data, r.Enabled)
	rec.Data = d
	return rec, err
}

// decodeData decodes a stored data column; the row's enabled column is authoritative.
func decodeData(b []byte, enabled bool) (*guard.ControlData, error) {
	if b == nil {
		return nil, nil
	}
	var d guard.ControlData
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("store: decode stored control data: %w", err)
	}
	d.Enabled = enabled
	return &d, nil
}

// loadControl reads a control by id; deleted controls are not found unless withDeleted.
func (s *Store) loadControl(ctx context.Context, q sqlx.QueryerContext, id int64, withDeleted bool) (controlRow, error) {
	query := `SELECT ` + controlCols + ` FROM controls WHERE id = ?`
	if !withDeleted {
		query += ` AND deleted_at IS NULL`
	}
	var row controlRow
	err := sqlx.GetContext(ctx, q, &row, s.q(query), id)
	if errors.Is(err, sql.ErrNoRows) {
		return row, fmt.Errorf("store: control %d: %w", id, guard.ErrControlNotFound)
	}
	return row, err
}

// stored is the encoded form of a control row's data with its filter keys.
type stored struct {
	data                        any // JSON text or nil
	tags, stepTypes, stagesKeys any
}

// encode mirrors the enabled column into the row's data and computes the columns derived from it.
func (r *controlRow) encode() (stored, error) {
	data, err := decodeData(r.Data, r.Enabled)
	if err != nil || data == nil {
		return stored{tags: "", stepTypes: "", stagesKeys: ""}, err
	}
	enc, err := jsonArg(data)
	if err != nil {
		return stored{}, err
	}
	r.Data = []byte(enc)
	return stored{data: enc, tags: listKey(data.Tags), stepTypes: scopeKey(data.Scope.StepTypes), stagesKeys: scopeKey(data.Scope.Stages)}, nil
}

// saveControl writes row as the control's next version: it bumps the version, stamps updated_at, mirrors
// the enabled column into the data, refreshes the filter keys and inserts the version row with the full
// snapshot, all in tx.
func (s *Store) saveControl(ctx context.Context, tx *sqlx.Tx, row *controlRow, event string, at int64) error {
	enc, err := row.encode()
	if err != nil {
		return err
	}
	row.Version++
	row.UpdatedAt = at
	_, err = tx.ExecContext(ctx, s.q(`UPDATE controls SET name = ?, enabled = ?, data = ?, version = ?, updated_at = ?,
		deleted_at = ?, tags_key = ?, step_types_key = ?, stages_key = ? WHERE id = ?`),
		row.Name, row.Enabled, enc.data, row.Version, row.UpdatedAt, row.DeletedAt, enc.tags, enc.stepTypes, enc.stagesKeys, row.ID)
	if err != nil {
		if isUniqueViolation(err) {
			return nameConflict()
		}
		return err
	}
	return s.insertVersion(ctx, tx, row, enc.data, event, at)
}

func (s *Store) insertVersion(ctx context.Context, tx *sqlx.Tx, row *controlRow, data any, event string, at int64) error {
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO control_versions (control_id, version, event, name, enabled, data, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`), row.ID, row.Version, event, row.Name, row.Enabled, data, at)
	return err
}

// touchAgents stamps epoch as the revision of every agent linked to the control.
func (s *Store) touchAgents(ctx context.Context, tx *sqlx.Tx, controlID, epoch int64) error {
	_, err := tx.ExecContext(ctx, s.q(`UPDATE agents SET revision = ?
		WHERE id IN (SELECT agent_id FROM agent_controls WHERE control_id = ?)`), epoch, controlID)
	return err
}

// CreateControl creates a control named name. With data it is enabled as data.Enabled says; without, it
// exists disabled and without data. The first version (event "created") is written with it.
func (s *Store) CreateControl(ctx context.Context, name string, data *guard.ControlData) (guard.ControlRecord, error) {
	if err := checkControlName(name); err != nil {
		return guard.ControlRecord{}, err
	}
	row := controlRow{Name: name}
	if data != nil {
		d, err := normalizeData(data)
		if err != nil {
			return guard.ControlRecord{}, err
		}
		enc, err := jsonArg(d)
		if err != nil {
			return guard.ControlRecord{}, err
		}
		row.Enabled, row.Data = d.Enabled, []byte(enc)
	}
	enc, err := row.encode()
	if err != nil {
		return guard.ControlRecord{}, err
	}
	err = s.policyTx(ctx, func(tx *sqlx.Tx, _ int64) error {
		at := now()
		row.Version, row.CreatedAt, row.UpdatedAt = 1, at, at
		err := tx.GetContext(ctx, &row.ID, s.q(`INSERT INTO controls (name, enabled, data, version, created_at, updated_at,
			tags_key, step_types_key, stages_key) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?) RETURNING id`),
			row.Name, row.Enabled, enc.data, at, at, enc.tags, enc.stepTypes, enc.stagesKeys)
		if err != nil {
			if isUniqueViolation(err) {
				return nameConflict()
			}
			return err
		}
		return s.insertVersion(ctx, tx, &row, enc.data, guard.VersionCreated, at)
	})
	if err != nil {
		return guard.ControlRecord{}, err
	}
	return row.record()
}

// GetControl returns a live control; a deleted or unknown one is guard.ErrControlNotFound.
func (s *Store) GetControl(ctx context.Context, id int64) (guard.ControlRecord, error) {
	row, err := s.loadControl(ctx, s.r, id, false)
	if err != nil {
		return guard.ControlRecord{}, mapErr(err)
	}
	return row.record()
}

// UpdateControl renames and/or enables or disables a control. Each actual change writes a version
// ("renamed", then "enabled"/"disabled"); a patch that changes nothing writes none. A control without
// data cannot be enabled (*guard.ValidationError on field "enabled").
func (s *Store) UpdateControl(ctx context.Context, id int64, patch guard.ControlPatch) (guard.ControlRecord, error) {
	return s.updateControl(ctx, id, patch, 0)
}

// UpdateControlIf is UpdateControl when the control is at version ifVersion (> 0); otherwise it changes
// nothing and returns a *guard.VersionMismatchError. The check and the write share one transaction.
func (s *Store) UpdateControlIf(ctx context.Context, id int64, patch guard.ControlPatch, ifVersion int) (guard.ControlRecord, error) {
	if ifVersion <= 0 {
		return guard.ControlRecord{}, problem("version", guard.CodeInvalid, "must be a positive version number")
	}
	return s.updateControl(ctx, id, patch, ifVersion)
}

// checkVersion refuses a conditional write whose expected version is not the row's (0: unconditional).
func checkVersion(row *controlRow, ifVersion int) error {
	if ifVersion != 0 && row.Version != ifVersion {
		return &guard.VersionMismatchError{ControlID: row.ID, Expected: ifVersion, Current: row.Version}
	}
	return nil
}

func (s *Store) updateControl(ctx context.Context, id int64, patch guard.ControlPatch, ifVersion int) (guard.ControlRecord, error) {
	if patch.Name != nil {
		if err := checkControlName(*patch.Name); err != nil {
			return guard.ControlRecord{}, err
		}
	}
	var row controlRow
	err := s.policyTx(ctx, func(tx *sqlx.Tx, epoch int64) error {
		var err error
		if row, err = s.loadControl(ctx, tx, id, false); err != nil {
			return err
		}
		if err := checkVersion(&row, ifVersion); err != nil {
			return err
		}
		at, changed := now(), false
		if patch.Name != nil && *patch.Name != row.Name {
			row.Name = *patch.Name
			if err := s.saveControl(ctx, tx, &row, guard.VersionRenamed, at); err != nil {
				return err
			}
			changed = true
		}
		if patch.Enabled != nil && *patch.Enabled != row.Enabled {
			if *patch.Enabled && row.Data == nil {
				return problem("enabled", guard.CodeInvalid, "a control without data cannot be enabled; put its data first")
			}
			row.Enabled = *patch.Enabled
			event := guard.VersionDisabled
			if row.Enabled {
				event = guard.VersionEnabled
			}
			if err := s.saveControl(ctx, tx, &row, event, at); err != nil {
				return err
			}
			changed = true
		}
		if patch.Mode != nil {
			ok, err := s.patchMode(ctx, tx, &row, *patch.Mode, at)
			if err != nil {
				return err
			}
			changed = changed || ok
		}
		if !changed {
			return nil
		}
		return s.touchAgents(ctx, tx, id, epoch)
	})
	if err != nil {
		return guard.ControlRecord{}, err
	}
	return row.record()
}

// PutControlData replaces a control's data (its enabled flag becomes data.Enabled) and returns the new
// version number (event "updated").
func (s *Store) PutControlData(ctx context.Context, id int64, data guard.ControlData) (int, error) {
	return s.putControlData(ctx, id, data, 0)
}

// PutControlDataIf is PutControlData when the control is at version ifVersion (> 0); otherwise it changes
// nothing and returns a *guard.VersionMismatchError. The check and the write share one transaction.
func (s *Store) PutControlDataIf(ctx context.Context, id int64, data guard.ControlData, ifVersion int) (int, error) {
	if ifVersion <= 0 {
		return 0, problem("version", guard.CodeInvalid, "must be a positive version number")
	}
	return s.putControlData(ctx, id, data, ifVersion)
}

func (s *Store) putControlData(ctx context.Context, id int64, data guard.ControlData, ifVersion int) (int, error) {
	data, err := normalizeData(&data)
	if err != nil {
		return 0, err
	}
	enc, err := jsonArg(data)
	if err != nil {
		return 0, err
	}
	var row controlRow
	err = s.policyTx(ctx, func(tx *sqlx.Tx, epoch int64) error {
		var err error
		if row, err = s.loadControl(ctx, tx, id, false); err != nil {
			return err
		}
		if err := checkVersion(&row, ifVersion); err != nil {
			return err
		}
		row.Data, row.Enabled = []byte(enc), data.Enabled
		if err := s.saveControl(ctx, tx, &row, guard.VersionUpdated, now()); err != nil {
			return err
		}
		return s.touchAgents(ctx, tx, id, epoch)
	})
	return row.Version, err
}

// DeleteControl soft-deletes a control: its name is freed and its versions stay readable. A control
// linked to agents gives *guard.ControlInUseError (agents sorted by name) unless force is set, in which
// case it is unlinked from them; the names of those agents are returned (never nil).
func (s *Store) DeleteControl(ctx context.Context, id int64, force bool) ([]string, error) {
	return s.deleteControl(ctx, id, force, 0)
}

// DeleteControlIf is DeleteControl when the control is at version ifVersion (> 0); otherwise it changes
// nothing and returns a *guard.VersionMismatchError. The check and the delete share one transaction.
func (s *Store) DeleteControlIf(ctx context.Context, id int64, force bool, ifVersion int) ([]string, error) {
	if ifVersion <= 0 {
		return nil, problem("version", guard.CodeInvalid, "must be a positive version number")
	}
	return s.deleteControl(ctx, id, force, ifVersion)
}

func (s *Store) deleteControl(ctx context.Context, id int64, force bool, ifVersion int) ([]string, error) {
	agents := []string{}
	err := s.policyTx(ctx, func(tx *sqlx.Tx, epoch int64) error {
		row, err := s.loadControl(ctx, tx, id, false)
		if err != nil {
			return err
		}
		if err := checkVersion(&row, ifVersion); err != nil {
			return err
		}
		agents = agents[:0]
		if err := tx.SelectContext(ctx, &agents, s.q(`SELECT a.name FROM agent_controls l JOIN agents a ON a.id = l.agent_id
			WHERE l.control_id = ? ORDER BY a.name`), id); err != nil {
			return err
		}
		sort.Strings(agents) // the database's collation may differ from byte order
		if len(agents) > 0 {
			if !force {
				return &guard.ControlInUseError{ControlID: id, Agents: append([]string(nil), agents...)}
			}
			if err := s.touchAgents(ctx, tx, id, epoch); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM agent_controls WHERE control_id = ?`), id); err != nil {
				return err
			}
		}
		at := now()
		row.DeletedAt = sql.NullInt64{Int64: at, Valid: true}
		return s.saveControl(ctx, tx, &row, guard.VersionDeleted, at)
	})
	if err != nil {
		return nil, err
	}
	return agents, nil
}

// patchMode sets data.mode (a new version, event "updated") when it differs from the control's mode, an
// empty mode being enforce, and reports whether it did.
func (s *Store) patchMode(ctx context.Context, tx *sqlx.Tx, row *controlRow, mode guard.Mode, at int64) (bool, error) {
	if mode != guard.ModeEnforce && mode != guard.ModeShadow {
		return false, problem("mode", guard.CodeEnum, "must be one of enforce, shadow")
	}
	d, err := decodeData(row.Data, row.Enabled)
	if err != nil {
		return false, err
	}
	if d == nil {
		return false, problem("mode", guard.CodeInvalid, "a control without data has no mode; put its data first")
	}
	cur := d.Mode
	if cur == "" {
		cur = guard.ModeEnforce
	}
	if cur == mode {
		return false, nil
	}
	d.Mode = mode
	enc, err := jsonArg(d)
	if err != nil {
		return false, err
	}
	row.Data = []byte(enc)
	return true, s.saveControl(ctx, tx, row, guard.VersionUpdated, at)
}
