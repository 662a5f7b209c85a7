package store_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

func TestOpenRefusesPendingMigrations(t *testing.T) {
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := ctxT(t)
		_, err := store.Open(ctx, url)
		wantErr(t, err, store.ErrMigrationsPending)
		if !strings.Contains(err.Error(), `guard migrate`) {
			t.Fatalf("error does not name the fix: %v", err)
		}
		// Two migrators at once (two replicas starting together) both succeed.
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { errs[i] = store.Migrate(ctx, url) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		s, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if n, err := s.PendingMigrations(ctx); n != 0 || err != nil {
			t.Fatalf("pending = %d, %v", n, err)
		}
		if err := s.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func TestOpenSQLiteURLForms(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	ctx := ctxT(t)
	abs := filepath.Join(dir, "abs.db")
	tests := []struct{ url, file string }{
		{"sqlite://" + abs, abs},
		{"sqlite://rel.db", filepath.Join(dir, "rel.db")},
		{"file:" + filepath.Join(dir, "uri.db") + "?cache=private", filepath.Join(dir, "uri.db")},
		{filepath.Join(dir, "with space.db"), filepath.Join(dir, "with space.db")},
		{"bare.db", filepath.Join(dir, "bare.db")},
	}
	storetest.SkipWithoutSQLite(t)
	for _, tc := range tests {
		s, err := store.OpenAndMigrate(ctx, tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		if s.Dialect() != store.SQLite {
			t.Errorf("%s: dialect %s", tc.url, s.Dialect())
		}
		if _, err := s.CreateControl(ctx, "c", nil); err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		s.Close()
		if _, err := os.Stat(tc.file); err != nil {
			t.Errorf("%s: database file not where expected: %v", tc.url, err)
		}
	}
	for _, bad := range []string{"", "mysql://localhost/x", ":memory:", "sqlite://", "odd?.db"} {
		if _, err := store.Open(ctx, bad); err == nil || errors.Is(err, guard.ErrUnavailable) {
			t.Errorf("Open(%q) = %v, want a configuration error", bad, err)
		}
	}
}

func TestOpenUnavailable(t *testing.T) {
	ctx := ctxT(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	urls := []string{"postgres://postgres@" + addr + "/x?sslmode=disable&connect_timeout=2"}
	if store.SQLiteAvailable {
		urls = append(urls, "sqlite://"+filepath.Join(t.TempDir(), "missing-dir", "guard.db"))
	}
	for _, url := range urls {
		_, err := store.Open(ctx, url)
		wantErr(t, err, guard.ErrUnavailable)
	}
}

// TestPostgresRecovers kills the store's server connections: the next calls fail with ErrUnavailable at
// worst and the store works again without being reopened.
func TestPostgresRecovers(t *testing.T) {
	url := storetest.PostgresURL(t)
	ctx := ctxT(t)
	s, err := store.OpenAndMigrate(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	newAgent(t, s, "a")
	admin, err := sql.Open("postgres", os.Getenv(storetest.PostgresEnv))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	dbName := url[strings.LastIndex(url, "/")+1:]
	for round := range 3 {
		if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, dbName); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err := s.CreateControl(ctx, "c"+string(rune('a'+round)), nil)
			if err == nil {
				break
			}
			if !errors.Is(err, guard.ErrUnavailable) {
				t.Fatalf("round %d: error %v does not wrap ErrUnavailable", round, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: store did not recover: %v", round, err)
			}
		}
		if _, _, err := s.AgentControls(ctx, "a"); err != nil && !errors.Is(err, guard.ErrUnavailable) {
			t.Fatalf("round %d: read error %v", round, err)
		}
		if _, _, err := s.AgentControls(ctx, "a"); err != nil {
			t.Fatalf("round %d: read after recovery: %v", round, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Ping(cctx); err == nil {
		t.Fatal("ping with a cancelled context succeeded")
	}
}

// TestOpenSQLiteWithoutCgo: a build without cgo refuses every SQLite form with ErrSQLiteUnavailable, whose
// message says what to do, and still tells a PostgreSQL URL it cannot reach from a configuration error.
func TestOpenSQLiteWithoutCgo(t *testing.T) {
	if store.SQLiteAvailable {
		t.Skip("this build has SQLite (cgo); the CGO_ENABLED=0 run of CI covers this test")
	}
	ctx := ctxT(t)
	dir := t.TempDir()
	for _, url := range []string{"sqlite://" + filepath.Join(dir, "a.db"), "file:" + filepath.Join(dir, "b.db"), "guard.db"} {
		for name, open := range map[string]func() error{
			"Open":           func() error { _, err := store.Open(ctx, url); return err },
			"OpenAndMigrate": func() error { _, err := store.OpenAndMigrate(ctx, url); return err },
			"Migrate":        func() error { return store.Migrate(ctx, url) },
		} {
			err := open()
			if !errors.Is(err, store.ErrSQLiteUnavailable) || !strings.Contains(err.Error(), "cgo") || !strings.Contains(err.Error(), "postgres://") {
				t.Errorf("%s(%q) = %v, want ErrSQLiteUnavailable", name, url, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.db")); !os.IsNotExist(err) {
		t.Errorf("a cgo-less build created a SQLite file: %v", err)
	}
}
