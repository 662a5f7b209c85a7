package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/jmoiron/sqlx"
)

// q rebinds a query written with '?' placeholders for the store's dialect.
func (s *Store) q(query string) string { return s.w.Rebind(query) }

// contains returns the dialect's "haystack contains needle" test over a column and one '?' argument.
func (s *Store) contains(column string) string {
	if s.dialect == Postgres {
		return "strpos(" + column + ", ?) > 0"
	}
	return "instr(" + column + ", ?) > 0"
}

// writeTx runs fn in one transaction on the writer pool and commits when fn returns nil. On SQLite the
// writer is one connection with BEGIN IMMEDIATE, so writers queue in Go and never see "database is locked"
// from each other.
func (s *Store) writeTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	tx, err := s.w.BeginTxx(ctx, nil)
	if err != nil {
		return mapErr(err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return mapErr(err)
	}
	return mapErr(tx.Commit())
}

// policyTx is writeTx for changes to controls and links: it first bumps the global policy epoch and hands
// the new value to fn, which stamps it as the revision of every agent whose effective controls change.
// Taking the epoch row's lock first serialises policy writers on PostgreSQL (no deadlocks, and two
// renames to one name meet the unique index one after the other).
func (s *Store) policyTx(ctx context.Context, fn func(tx *sqlx.Tx, epoch int64) error) error {
	return s.writeTx(ctx, func(tx *sqlx.Tx) error {
		var epoch int64
		if err := tx.GetContext(ctx, &epoch, `UPDATE policy_epoch SET epoch = epoch + 1 WHERE id = 1 RETURNING epoch`); err != nil {
			return err
		}
		return fn(tx, epoch)
	})
}

// now is the store's clock, at the microsecond precision timestamps are stored with.
func now() int64 { return time.Now().UnixMicro() }

// toTime turns stored epoch microseconds into a UTC time.
func toTime(us int64) time.Time { return time.UnixMicro(us).UTC() }

// readTx runs fn in a read-only transaction on the read pool, so that its queries see one snapshot.
func (s *Store) readTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.dialect == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := s.r.BeginTxx(ctx, opts)
	if err != nil {
		return mapErr(err)
	}
	defer func() { _ = tx.Rollback() }()
	return mapErr(fn(tx))
}
