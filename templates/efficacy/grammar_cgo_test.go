//go:build cgo

package efficacy_test

// postgresGrammar: with cgo, the sql evaluator's auto dialect has PostgreSQL's grammar (libpg_query).
const postgresGrammar = true
