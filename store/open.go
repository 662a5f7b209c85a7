package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the PostgreSQL driver; SQLite's is in sqlite_cgo.go (cgo builds only)

	guard "github.com/guardrail-control/guard"
)

// Dialect names the SQL dialect of a Store.
type Dialect string

// The two dialects a Store speaks.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Store is the SQL implementation of guard.Store. It is safe for concurrent use.
type Store struct {
	dialect Dialect
	// w runs every write. On SQLite it is a pool of exactly one connection, so the process's writers queue
	// in Go instead of failing with "database is locked"; on PostgreSQL it is the one pool (r == w).
	w *sqlx.DB
	// r runs reads: on SQLite a separate pool of query-only connections that WAL lets read while w writes.
	r *sqlx.DB
	// path is the SQLite database file, for the lock that serialises migrations across processes.
	path string
	// insertFull is the INSERT of a full chunk of events, prepared once on w: preparing a 500-row,
	// 9,500-parameter statement costs about a sixth of writing the batch.
	insertFull   *sql.Stmt
	insertFullMu sync.Mutex
	// cursorSecret keys the MAC of pagination cursors: the database's, read on first use (cursor.go).
	cursorSecret []byte
	cursorMu     sync.Mutex
	// approvalSecret keys the MAC of approval grants (approvals.go), read on first use under cursorMu.
	approvalSecret []byte
}

var _ guard.Store = (*Store)(nil)

// Open connects to the database named by rawURL and checks that its schema is up to date. The dialect
// comes from the URL: postgres:// or postgresql:// is PostgreSQL; sqlite:///abs/path.db,
// sqlite://relative.db, a file: URI or a bare path is a SQLite file (created if missing).
//
// Open does not migrate: when migrations are pending it returns an error wrapping ErrMigrationsPending that
// names the command to run. A database that cannot be reached gives an error wrapping guard.ErrUnavailable.
func Open(ctx context.Context, rawURL string, opts ...Option) (*Store, error) {
	s, err := connect(ctx, rawURL, opts...)
	if err != nil {
		return nil, err
	}
	n, err := s.PendingMigrations(ctx)
	if err != nil {
		s.Close()
		return nil, err
	}
	if n > 0 {
		s.Close()
		return nil, fmt.Errorf("%w: %d migration(s) to apply; run \"guard migrate\" (or guard serve --migrate)", ErrMigrationsPending, n)
	}
	return s, nil
}

// OpenAndMigrate connects like Open, applies the pending migrations and returns the ready store.
func OpenAndMigrate(ctx context.Context, rawURL string, opts ...Option) (*Store, error) {
	s, err := connect(ctx, rawURL, opts...)
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Migrate applies the pending migrations to the database named by rawURL.
func Migrate(ctx context.Context, rawURL string, opts ...Option) error {
	s, err := connect(ctx, rawURL, opts...)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Migrate(ctx)
}

// Dialect reports which SQL dialect the store speaks.
func (s *Store) Dialect() Dialect { return s.dialect }

// Ping reports whether the database answers; guard.ErrUnavailable when it does not.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return unavailable(err)
	}
	if s.r != s.w {
		if err := s.r.PingContext(ctx); err != nil {
			return unavailable(err)
		}
	}
	return nil
}

// Close closes the store's connections.
func (s *Store) Close() error {
	var err error
	if s.insertFull != nil {
		err = s.insertFull.Close()
	}
	err = errors.Join(err, s.w.Close())
	if s.r != s.w {
		err = errors.Join(err, s.r.Close())
	}
	return err
}

// connect opens the pools for rawURL and checks that the database answers.
func connect(ctx context.Context, rawURL string, opts ...Option) (*Store, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	lower := strings.ToLower(rawURL)
	var s *Store
	var err error
	switch {
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		s, err = connectPostgres(rawURL, cfg)
	case rawURL == "":
		return nil, errors.New("store: empty database URL")
	case strings.Contains(rawURL, "://") && !strings.HasPrefix(lower, "sqlite://"):
		return nil, fmt.Errorf("store: unsupported database URL scheme %q (want postgres://, sqlite:// or a file path)", rawURL[:strings.Index(rawURL, "://")])
	default:
		s, err = connectSQLite(rawURL, cfg)
	}
	if err != nil {
		return nil, err
	}
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	return s, nil
}

func connectPostgres(rawURL string, cfg config) (*Store, error) {
	db, err := sqlx.Open("postgres", rawURL)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	db.SetMaxOpenConns(cfg.pgMaxConns)
	db.SetMaxIdleConns(cfg.pgMaxConns)
	db.SetConnMaxLifetime(cfg.connLifetime)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return &Store{dialect: Postgres, w: db, r: db}, nil
}

// sqliteDSNs turns a SQLite URL or path into the DSNs of the writer and of the readers.
func sqliteDSNs(rawURL string, cfg config) (writer, reader, path string, err error) {
	target := rawURL
	if strings.HasPrefix(strings.ToLower(target), "sqlite://") {
		target = target[len("sqlite://"):] // sqlite:///abs -> /abs, sqlite://rel -> rel
	}
	if target == "" || strings.Contains(target, ":memory:") || strings.Contains(target, "mode=memory") {
		return "", "", "", errors.New("store: SQLite needs a database file (an in-memory database cannot be shared by the writer and the readers)")
	}
	switch strings.ToUpper(cfg.synchronous) {
	case "FULL", "NORMAL":
	default:
		return "", "", "", fmt.Errorf("store: SQLite synchronous must be FULL or NORMAL, not %q", cfg.synchronous)
	}
	sep := "?"
	if strings.HasPrefix(target, "file:") {
		if strings.Contains(target, "#") {
			return "", "", "", errors.New("store: a SQLite file: URI may not have a fragment")
		}
		path = strings.TrimPrefix(target, "file:")
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
			sep = "&"
		}
		path = strings.TrimPrefix(path, "//") // file:///abs -> /abs (an empty authority)
		if p, err := url.PathUnescape(path); err == nil {
			path = p
		}
	} else {
		path = target
		if strings.ContainsAny(target, "?#") {
			return "", "", "", errors.New("store: a SQLite path may not contain '?' or '#'; use a file: URI")
		}
		target = (&url.URL{Path: target}).EscapedPath()
		if strings.HasPrefix(target, "/") {
			target = "file://" + target
		} else {
			target = "file:" + target
		}
	}
	common := fmt.Sprintf("_journal_mode=WAL&_busy_timeout=%d&_foreign_keys=1&_synchronous=%s",
		cfg.busyTimeout.Milliseconds(), strings.ToUpper(cfg.synchronous))
	writer = target + sep + common + "&_txlock=immediate"
	reader = target + sep + common + "&_query_only=1"
	return writer, reader, path, nil
}

// ErrSQLiteUnavailable is returned when a SQLite database is opened by a build without cgo.
var ErrSQLiteUnavailable = errors.New("store: SQLite needs a cgo build of guard (this binary was built with CGO_ENABLED=0); " +
	"rebuild with CGO_ENABLED=1 and a C compiler, or use a postgres:// database URL")

func connectSQLite(rawURL string, cfg config) (*Store, error) {
	if !SQLiteAvailable {
		return nil, ErrSQLiteUnavailable
	}
	wdsn, rdsn, path, err := sqliteDSNs(rawURL, cfg)
	if err != nil {
		return nil, err
	}
	w, err := sqlx.Open(sqliteDriver, wdsn)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	r, err := sqlx.Open(sqliteDriver, rdsn)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	r.SetMaxOpenConns(cfg.readConns)
	r.SetMaxIdleConns(cfg.readConns)
	r.SetConnMaxLifetime(0)
	return &Store{dialect: SQLite, w: w, r: r, path: path}, nil
}
