package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestSQLitePragmas checks that every connection of both pools gets the settings the store relies on.
func TestSQLitePragmas(t *testing.T) {
	if !SQLiteAvailable {
		t.Skip("SQLite tests skipped: built with CGO_ENABLED=0 and SQLite (mattn/go-sqlite3) needs cgo")
	}
	ctx := context.Background()
	s, err := connect(ctx, "sqlite://"+filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tests := []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"synchronous", "2"},
		{"foreign_keys", "1"},
		{"busy_timeout", "10000"},
	}
	for _, pool := range []struct {
		name string
		q    func(string) (string, error)
	}{
		{"writer", func(p string) (v string, err error) { return v, s.w.GetContext(ctx, &v, "PRAGMA "+p) }},
		{"reader", func(p string) (v string, err error) { return v, s.r.GetContext(ctx, &v, "PRAGMA "+p) }},
	} {
		for _, tc := range tests {
			got, err := pool.q(tc.pragma)
			if err != nil || got != tc.want {
				t.Errorf("%s: PRAGMA %s = %q (%v), want %q", pool.name, tc.pragma, got, err, tc.want)
			}
		}
	}
	var qo string
	if err := s.r.GetContext(ctx, &qo, "PRAGMA query_only"); err != nil || qo != "1" {
		t.Errorf("reader query_only = %q (%v)", qo, err)
	}
	if _, err := s.r.ExecContext(ctx, "CREATE TABLE x (a INTEGER)"); err == nil {
		t.Error("the read pool accepted a write")
	}
}

func TestSQLiteDSNs(t *testing.T) {
	cfg := defaultConfig()
	tests := []struct{ in, writerPrefix, path string }{
		{"sqlite:///var/lib/guard.db", "file:///var/lib/guard.db?_journal_mode=WAL", "/var/lib/guard.db"},
		{"sqlite://guard.db", "file:guard.db?_journal_mode=WAL", "guard.db"},
		{"/tmp/a b.db", "file:///tmp/a%20b.db?", "/tmp/a b.db"},
		{"file:x.db?cache=private", "file:x.db?cache=private&_journal_mode=WAL", "x.db"},
		{"file:///abs/x.db", "file:///abs/x.db?_journal_mode", "/abs/x.db"},
	}
	for _, tc := range tests {
		w, r, path, err := sqliteDSNs(tc.in, cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if len(w) < len(tc.writerPrefix) || w[:len(tc.writerPrefix)] != tc.writerPrefix || path != tc.path {
			t.Errorf("%s: writer %q path %q, want prefix %q path %q", tc.in, w, path, tc.writerPrefix, tc.path)
		}
		if r == w {
			t.Errorf("%s: reader and writer share a DSN", tc.in)
		}
	}
	if _, _, _, err := sqliteDSNs("x.db", config{synchronous: "OFF"}); err == nil {
		t.Error("synchronous=OFF accepted")
	}
}
