//go:build !cgo

package sqlguard

// postgresAvailable: a build without cgo has no PostgreSQL parser (libpg_query is C), so a config that
// asks for dialect "postgres" is refused with a message that says why.
const postgresAvailable = false

// parsePostgres is never called in a build without cgo: New refuses the dialect.
func parsePostgres(string) ([]string, []*facts, error) { return nil, nil, ErrParse }
