// Package storetest gives tests a migrated store on a fresh database: a temporary SQLite file, or a
// PostgreSQL database created for the test beside the one GUARD_TEST_POSTGRES_URL names and dropped when
// the test ends.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/lib/pq" // the PostgreSQL driver

	"github.com/guardrail-control/guard/store"
)

// PostgresEnv names the variable holding the URL of a PostgreSQL database the tests may use; its server
// must let that user create databases.
const PostgresEnv = "GUARD_TEST_POSTGRES_URL"

// SQLiteURL returns the URL of a new, empty SQLite file in the test's temporary directory. It skips the
// test in a build without cgo, which has no SQLite driver (store.SQLiteAvailable).
func SQLiteURL(t testing.TB) string {
	t.Helper()
	SkipWithoutSQLite(t)
	return "sqlite://" + filepath.Join(t.TempDir(), "guard.db")
}

// SkipWithoutSQLite skips the test when this build has no SQLite driver (CGO_ENABLED=0).
func SkipWithoutSQLite(t testing.TB) {
	t.Helper()
	if !store.SQLiteAvailable {
		t.Skip("SQLite tests skipped: this test binary was built with CGO_ENABLED=0 and SQLite (mattn/go-sqlite3) needs cgo")
	}
}

// SQLite returns a migrated store on a new SQLite file, closed when the test ends. It skips the test in a
// build without cgo.
func SQLite(t testing.TB, opts ...store.Option) *store.Store {
	t.Helper()
	return open(t, SQLiteURL(t), opts...)
}

// Postgres returns a migrated store on a new PostgreSQL database, dropped when the test ends. It skips
// the test when GUARD_TEST_POSTGRES_URL is not set.
func Postgres(t testing.TB, opts ...store.Option) *store.Store {
	t.Helper()
	return open(t, PostgresURL(t), opts...)
}

// PostgresURL creates a new, empty PostgreSQL database on the server of GUARD_TEST_POSTGRES_URL and
// returns its URL; the database is dropped (WITH (FORCE)) when the test ends. It skips the test when the
// variable is not set and fails it when the server cannot be reached.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skipf("PostgreSQL tests skipped: set %s (e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable) to run them", PostgresEnv)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("storetest: %s is not a URL", PostgresEnv)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "guard_t_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		admin.Close()
		t.Fatalf("storetest: create database on the server of %s: %v", PostgresEnv, err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("storetest: drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// Each runs fn as a subtest per dialect ("sqlite", "postgres"), each with a fresh migrated store; the
// PostgreSQL subtest skips when GUARD_TEST_POSTGRES_URL is not set.
func Each(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t)) })
}

// EachURL is Each for tests that open stores themselves: fn gets the URL of a fresh, unmigrated database.
func EachURL(t *testing.T, fn func(t *testing.T, url string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLiteURL(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, PostgresURL(t)) })
}

func open(t testing.TB, rawURL string, opts ...store.Option) *store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := store.OpenAndMigrate(ctx, rawURL, opts...)
	if err != nil {
		t.Fatalf("storetest: open and migrate: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
