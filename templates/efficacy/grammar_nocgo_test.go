//go:build !cgo

package efficacy_test

// postgresGrammar: without cgo, the sql evaluator's auto dialect reads MySQL's grammar and the lenient rewrites
// only, so destructive-sql refuses PostgreSQL-only forms as unparsable: its floors, recorded for the cgo build
// that ships, do not apply.
const postgresGrammar = false
