//go:build !unix

package store

import "context"

// lockFile does nothing where advisory file locks are not available: concurrent migrations of one SQLite
// file from several processes are then not serialised.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
