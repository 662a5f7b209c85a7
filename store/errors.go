package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/lib/pq"

	guard "github.com/guardrail-control/guard"
)

// mapErr turns the failures that mean "the database is not there" into errors wrapping
// guard.ErrUnavailable (the server answers 503) and leaves every other error alone.
func mapErr(err error) error {
	if err == nil || errors.Is(err, guard.ErrUnavailable) {
		return err
	}
	if isConnFailure(err) {
		return unavailable(err)
	}
	return err
}

func unavailable(err error) error {
	if errors.Is(err, guard.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", guard.ErrUnavailable, err)
}

// isConnFailure reports whether err says the database could not be reached or dropped the connection.
func isConnFailure(err error) bool {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		code := string(pqErr.Code)
		switch {
		case len(code) == 5 && code[:2] == "08": // connection exception
			return true
		case code == "57P01", code == "57P02", code == "57P03": // admin/crash shutdown, cannot connect now
			return true
		case code == "53300": // too many connections
			return true
		}
		return false
	}
	return sqliteConnFailure(err)
}

// isUniqueViolation reports whether err is a unique-constraint violation on either dialect.
func isUniqueViolation(err error) bool {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return pqErr.Code == "23505"
	}
	return sqliteUniqueViolation(err)
}

// nameConflict is the error for a control name that a live control already uses. It does not repeat the
// name: callers put client values in messages only where they choose to.
func nameConflict() error {
	return fmt.Errorf("store: %w", guard.ErrControlNameConflict)
}
