//go:build !cgo

package store

// SQLiteAvailable says whether this build carries the SQLite driver. mattn/go-sqlite3 is C code, so this
// build (CGO_ENABLED=0) has only PostgreSQL; opening a SQLite URL fails with ErrSQLiteUnavailable.
const SQLiteAvailable = false

// sqliteDriver is never opened in a build without cgo (connectSQLite refuses first).
const sqliteDriver = "sqlite3"

func sqliteConnFailure(error) bool     { return false }
func sqliteUniqueViolation(error) bool { return false }
