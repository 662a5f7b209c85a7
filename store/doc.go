// Package store is the SQL implementation of guard.Store over SQLite (the embedded default, through
// mattn/go-sqlite3) and PostgreSQL (through lib/pq).
//
// One implementation serves both dialects: queries are written once with '?' placeholders and rebound by
// sqlx; JSON documents are JSONB in PostgreSQL and TEXT in SQLite; every timestamp is an integer number of
// microseconds since the Unix epoch, so that the statistics' time buckets are plain integer arithmetic on
// an indexed column in both.
//
// Open never changes the schema: it refuses a database whose migrations are pending with an error
// wrapping ErrMigrationsPending. Migrate (or Store.Migrate) applies the embedded goose migrations; on
// PostgreSQL it holds goose's session advisory lock so replicas starting together do not race.
//
// Events go to an append-only table and, in the same transaction, into per-minute aggregates per agent
// and control (event_rollups); Stats reads the aggregates for the whole minutes of a range and the events
// only for its partial edge minutes, so statistics cost grows with the length of the range, not with the
// number of events in it.
//
// Every change to a control or to an agent's links runs in one transaction that bumps the global policy
// epoch first (a one-row table), writes the control's version row with the full snapshot, and moves the
// revision of every agent whose effective controls changed. Bumping the epoch first also serialises the
// control plane's writers on PostgreSQL, so they cannot deadlock.
package store
