package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/guardrail-control/guard/apikey"
)

var _ apikey.Store = (*Store)(nil)

type apiKeyRow struct {
	Name       string        `db:"name"`
	Digest     string        `db:"digest"`
	Role       string        `db:"role"`
	Agents     string        `db:"agents"`
	CreatedAt  int64         `db:"created_at"`
	CreatedBy  string        `db:"created_by"`
	RotatedAt  sql.NullInt64 `db:"rotated_at"`
	ExpiresAt  sql.NullInt64 `db:"expires_at"`
	RevokedAt  sql.NullInt64 `db:"revoked_at"`
	RevokedBy  string        `db:"revoked_by"`
	LastUsedAt sql.NullInt64 `db:"last_used_at"`
}

const apiKeyColumns = `name, digest, role, agents, created_at, created_by, rotated_at, expires_at, revoked_at, revoked_by, last_used_at`

func optMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func (r apiKeyRow) record() apikey.Record {
	rec := apikey.Record{Name: r.Name, Digest: r.Digest, Role: apikey.Role(r.Role), CreatedAt: toTime(r.CreatedAt),
		CreatedBy: r.CreatedBy, RotatedAt: optTime(r.RotatedAt), ExpiresAt: optTime(r.ExpiresAt),
		RevokedAt: optTime(r.RevokedAt), RevokedBy: r.RevokedBy, LastUsedAt: optTime(r.LastUsedAt), Agents: []string{}}
	_ = json.Unmarshal([]byte(r.Agents), &rec.Agents) // written by CreateAPIKey: always a JSON list
	return rec
}

// CreateAPIKey stores a new key (apikey.ErrExists when its name or digest is taken).
func (s *Store) CreateAPIKey(ctx context.Context, rec apikey.Record) error {
	agents := rec.Agents
	if agents == nil {
		agents = []string{}
	}
	ab, err := json.Marshal(agents)
	if err != nil {
		return err
	}
	created := rec.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	err = s.writeTx(ctx, func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO api_keys (name, digest, role, agents, created_at, created_by, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`), rec.Name, rec.Digest, string(rec.Role), string(ab), created.UnixMicro(),
			clean(rec.CreatedBy), optMicros(rec.ExpiresAt))
		return err
	})
	if isUniqueViolation(err) {
		return apikey.ErrExists
	}
	return err
}

// ListAPIKeys returns every key by name, revoked ones included.
func (s *Store) ListAPIKeys(ctx context.Context) ([]apikey.Record, error) {
	var rows []apiKeyRow
	if err := s.r.SelectContext(ctx, &rows, `SELECT `+apiKeyColumns+` FROM api_keys ORDER BY name`); err != nil {
		return nil, mapErr(err)
	}
	out := make([]apikey.Record, len(rows))
	for i, r := range rows {
		out[i] = r.record()
	}
	return out, nil
}

// changeAPIKey runs one update of an active key and returns the record after it.
func (s *Store) changeAPIKey(ctx context.Context, name, update string, args ...any) (apikey.Record, error) {
	var row apiKeyRow
	err := s.writeTx(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &row, s.q(`SELECT `+apiKeyColumns+` FROM api_keys WHERE name = ?`), name); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return apikey.ErrNotFound
			}
			return err
		}
		if row.RevokedAt.Valid {
			return apikey.ErrRevoked
		}
		res, err := tx.ExecContext(ctx, s.q(`UPDATE api_keys SET `+update+` WHERE name = ? AND revoked_at IS NULL`), append(args, name)...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return apikey.ErrRevoked
		}
		return tx.GetContext(ctx, &row, s.q(`SELECT `+apiKeyColumns+` FROM api_keys WHERE name = ?`), name)
	})
	if isUniqueViolation(err) {
		return apikey.Record{}, apikey.ErrExists
	}
	if err != nil {
		return apikey.Record{}, err
	}
	return row.record(), nil
}

// RotateAPIKey gives an active key a new digest: the old secret is refused from the commit on.
func (s *Store) RotateAPIKey(ctx context.Context, name, digest string, at time.Time) (apikey.Record, error) {
	return s.changeAPIKey(ctx, name, `digest = ?, rotated_at = ?`, digest, at.UnixMicro())
}

// RevokeAPIKey revokes an active key.
func (s *Store) RevokeAPIKey(ctx context.Context, name, by string, at time.Time) (apikey.Record, error) {
	return s.changeAPIKey(ctx, name, `revoked_at = ?, revoked_by = ?`, at.UnixMicro(), clean(by))
}

// TouchAPIKeys records the last use of keys, never moving a time backwards.
func (s *Store) TouchAPIKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	return s.writeTx(ctx, func(tx *sqlx.Tx) error {
		for name, t := range used {
			if _, err := tx.ExecContext(ctx, s.q(`UPDATE api_keys SET last_used_at = ? WHERE name = ?
				AND (last_used_at IS NULL OR last_used_at < ?)`), t.UnixMicro(), name, t.UnixMicro()); err != nil {
				return err
			}
		}
		return nil
	})
}
