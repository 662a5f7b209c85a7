package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/jmoiron/sqlx"

	guard "github.com/guardrail-control/guard"
)

type versionRow struct {
	ControlID int64  `db:"control_id"`
	Version   int    `db:"version"`
	Event     string `db:"event"`
	Name      string `db:"name"`
	Enabled   bool   `db:"enabled"`
	Data      []byte `db:"data"`
	CreatedAt int64  `db:"created_at"`
}

const versionCols = `control_id, version, event, name, enabled, data, created_at`

func (v *versionRow) version() (guard.ControlVersion, error) {
	d, err := decodeData(v.Data, v.Enabled)
	return guard.ControlVersion{ControlID: v.ControlID, Version: v.Version, Event: v.Event,
		CreatedAt: toTime(v.CreatedAt), Name: v.Name, Enabled: v.Enabled, Data: d}, err
}

// ListControlVersions lists a control's history, newest first. Deleted controls keep theirs.
func (s *Store) ListControlVersions(ctx context.Context, id int64, page guard.PageRequest) ([]guard.ControlVersion, guard.PageInfo, error) {
	list := "v" + strconv.FormatInt(id, 10)
	after, err := s.decodeCursor(ctx, list, page.Cursor)
	if err != nil {
		return nil, guard.PageInfo{}, err
	}
	limit := clampLimit(page.Limit)
	if _, err := s.loadControl(ctx, s.r, id, true); err != nil {
		return nil, guard.PageInfo{}, mapErr(err)
	}
	var total int
	if err := s.r.GetContext(ctx, &total, s.q(`SELECT COUNT(*) FROM control_versions WHERE control_id = ?`), id); err != nil {
		return nil, guard.PageInfo{}, mapErr(err)
	}
	query, args := `SELECT `+versionCols+` FROM control_versions WHERE control_id = ?`, []any{id}
	if after > 0 {
		query += ` AND version < ?`
		args = append(args, after)
	}
	query += ` ORDER BY version DESC LIMIT ?`
	args = append(args, limit+1)
	var rows []versionRow
	if err := s.r.SelectContext(ctx, &rows, s.q(query), args...); err != nil {
		return nil, guard.PageInfo{}, mapErr(err)
	}
	pr, err := s.pageInfo(ctx, list, limit, len(rows), total, func(i int) int64 { return int64(rows[i].Version) })
	if err != nil {
		return nil, guard.PageInfo{}, err
	}
	out := make([]guard.ControlVersion, 0, pr.Rows)
	for i := range rows[:pr.Rows] {
		v, err := rows[i].version()
		if err != nil {
			return nil, guard.PageInfo{}, err
		}
		out = append(out, v)
	}
	return out, pr.info(), nil
}

// GetControlVersion returns one version of a control (deleted or not): guard.ErrControlNotFound for an
// unknown control, guard.ErrVersionNotFound for an unknown version.
func (s *Store) GetControlVersion(ctx context.Context, id int64, version int) (guard.ControlVersion, error) {
	row, err := s.loadVersion(ctx, s.r, id, version)
	if err != nil {
		return guard.ControlVersion{}, mapErr(err)
	}
	return row.version()
}

func (s *Store) loadVersion(ctx context.Context, q sqlx.QueryerContext, id int64, version int) (versionRow, error) {
	var row versionRow
	err := sqlx.GetContext(ctx, q, &row, s.q(`SELECT `+versionCols+` FROM control_versions WHERE control_id = ? AND version = ?`), id, version)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := s.loadControl(ctx, q, id, true); err != nil {
			return row, err
		}
		return row, fmt.Errorf("store: control %d version %d: %w", id, version, guard.ErrVersionNotFound)
	}
	return row, err
}

// RestoreControlVersion gives the control the name, enabled flag and data of one of its versions and
// writes a new version (event "restored"). Restoring a deleted control brings it back (unlinked); a name
// that a live control took meanwhile is guard.ErrControlNameConflict.
func (s *Store) RestoreControlVersion(ctx context.Context, id int64, version int) (guard.ControlRecord, error) {
	var row controlRow
	err := s.policyTx(ctx, func(tx *sqlx.Tx, epoch int64) error {
		var err error
		if row, err = s.loadControl(ctx, tx, id, true); err != nil {
			return err
		}
		v, err := s.loadVersion(ctx, tx, id, version)
		if err != nil {
			return err
		}
		row.Name, row.Enabled, row.Data, row.DeletedAt = v.Name, v.Enabled, v.Data, sql.NullInt64{}
		if err := s.saveControl(ctx, tx, &row, guard.VersionRestored, now()); err != nil {
			return err
		}
		return s.touchAgents(ctx, tx, id, epoch)
	})
	if err != nil {
		return guard.ControlRecord{}, err
	}
	return row.record()
}
