package store

import "time"

// Option configures Open.
type Option func(*config)

type config struct {
	busyTimeout  time.Duration
	synchronous  string
	readConns    int
	pgMaxConns   int
	connLifetime time.Duration
}

func defaultConfig() config {
	return config{
		busyTimeout:  10 * time.Second,
		synchronous:  "FULL",
		readConns:    4,
		pgMaxConns:   10,
		connLifetime: 30 * time.Minute,
	}
}

// WithBusyTimeout sets how long a SQLite connection waits for a lock held by another process before it
// fails (default 10s). Writers of one Store never wait on each other: they share one connection.
func WithBusyTimeout(d time.Duration) Option { return func(c *config) { c.busyTimeout = d } }

// WithSQLiteSynchronous sets SQLite's synchronous pragma: "FULL" (the default: a commit is on disk when
// it returns, even across a power loss) or "NORMAL" (faster; in WAL mode a commit survives a crash of the
// process but the last ones may be lost on power loss).
func WithSQLiteSynchronous(mode string) Option { return func(c *config) { c.synchronous = mode } }

// WithReadConns sets the size of the SQLite read pool (default 4).
func WithReadConns(n int) Option { return func(c *config) { c.readConns = n } }

// WithMaxConns sets the size of the PostgreSQL pool (default 10).
func WithMaxConns(n int) Option { return func(c *config) { c.pgMaxConns = n } }
