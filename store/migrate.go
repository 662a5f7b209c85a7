package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// ErrMigrationsPending is wrapped by Open's error when the database schema is behind this binary.
var ErrMigrationsPending = errors.New("database schema is behind: migrations are pending")

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// provider returns a goose provider for the store's dialect, reading the embedded migrations and using no
// goose globals. On PostgreSQL it takes goose's session advisory lock around migrations, retried every
// second for up to five minutes, so replicas that start together apply each migration once.
func (s *Store) provider() (*goose.Provider, error) {
	dir, dialect := "migrations/sqlite", goose.DialectSQLite3
	opts := []goose.ProviderOption{goose.WithLogger(goose.NopLogger()), goose.WithDisableGlobalRegistry(true)}
	if s.dialect == Postgres {
		dir, dialect = "migrations/postgres", goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300), lock.WithUnlockTimeout(1, 60))
		if err != nil {
			return nil, fmt.Errorf("store: migrations lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	p, err := goose.NewProvider(dialect, s.w.DB, sub, opts...)
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	return p, nil
}

// Migrate applies the pending migrations. It is safe to call from several processes at once.
func (s *Store) Migrate(ctx context.Context) error {
	p, err := s.provider()
	if err != nil {
		return err
	}
	if s.dialect == SQLite && s.path != "" {
		unlock, err := lockFile(ctx, s.path+"-migrate.lock")
		if err != nil {
			return err
		}
		defer unlock()
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("store: migrate: %w", mapErr(err))
	}
	return nil
}

// PendingMigrations returns how many migrations have not been applied to the database yet.
func (s *Store) PendingMigrations(ctx context.Context) (int, error) {
	p, err := s.provider()
	if err != nil {
		return 0, err
	}
	status, err := p.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: migration status: %w", mapErr(err))
	}
	n := 0
	for _, st := range status {
		if st.State == goose.StatePending {
			n++
		}
	}
	return n, nil
}
