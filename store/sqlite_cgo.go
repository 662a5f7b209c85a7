//go:build cgo

package store

import (
	"errors"

	"github.com/mattn/go-sqlite3" // the SQLite driver (C code: needs cgo)
)

// SQLiteAvailable says whether this build carries the SQLite driver. mattn/go-sqlite3 is C code, so a
// build with CGO_ENABLED=0 has only PostgreSQL; opening a SQLite URL then fails with ErrSQLiteUnavailable.
const SQLiteAvailable = true

// sqliteDriver is the database/sql driver name of SQLite.
const sqliteDriver = "sqlite3"

// sqliteConnFailure reports whether err is a SQLite error that means the database file cannot be used.
func sqliteConnFailure(err error) bool {
	var liteErr sqlite3.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code {
		case sqlite3.ErrCantOpen, sqlite3.ErrIoErr, sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrNotADB, sqlite3.ErrFull:
			return true
		}
	}
	return false
}

// sqliteUniqueViolation reports whether err is a SQLite unique or primary-key constraint violation.
func sqliteUniqueViolation(err error) bool {
	var liteErr sqlite3.Error
	if errors.As(err, &liteErr) {
		return liteErr.ExtendedCode == sqlite3.ErrConstraintUnique || liteErr.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
	}
	return false
}
