package store

import "context"

// MigrateUpTo applies the migrations up to version v only (tests of a migration on older data).
func (s *Store) MigrateUpTo(ctx context.Context, v int64) error {
	p, err := s.provider()
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, v)
	return err
}

// ExecForTest runs a statement (with ? placeholders) on the writer pool.
func (s *Store) ExecForTest(ctx context.Context, query string, args ...any) error {
	_, err := s.w.ExecContext(ctx, s.q(query), args...)
	return err
}

// Connect opens a store without checking or applying migrations.
func Connect(ctx context.Context, rawURL string) (*Store, error) { return connect(ctx, rawURL) }
