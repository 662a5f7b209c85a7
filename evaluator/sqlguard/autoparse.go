package sqlguard

import (
	"errors"
	"strings"

	"vitess.io/vitess/go/vt/sqlparser"
)

// Dialect auto reads the SQL that applications send when the database is not known. The query is
// judged on the first grammar that parses it:
//
//  1. MySQL's (Vitess), strict: what the mysql dialect accepts without rewriting;
//  2. PostgreSQL's own (libpg_query), in a build with cgo;
//  3. MySQL's with the lenient rewrites of lenient.go (SQLite, SQL Server and PostgreSQL forms).
//
// Only when none parses is it a parse failure (on_parse_error applies, fail-closed by default). The rules
// are the same whichever grammar parsed: each reduces its tree to the same facts.
//
// Two grammars that both accept a text may still split it into statements differently, and a verdict on
// one reading would let the other run unseen: MySQL ends a comment at "#" and escapes a quote with a
// backslash, PostgreSQL nests /* */ comments and quotes with $$. So when PostgreSQL's grammar judges
// (MySQL's refused the whole text), each piece MySQL's splitter finds that MySQL's grammar parses is
// judged too; and when MySQL's judges a text holding "\", "#" or "$" (where PostgreSQL reads differently),
// PostgreSQL's reading is judged too when it parses. The statement count is the larger of the two.
//
// Without cgo there is no PostgreSQL grammar: auto is MySQL's grammar, then the lenient rewrites.
func (e *Evaluator) parseAuto(query string) ([]string, []*facts, int, error) {
	if ops, fs, err := e.mysqlFacts(query, false); err == nil {
		count := len(ops)
		if postgresAvailable && strings.ContainsAny(query, `\#$`) {
			if pops, pfs, perr := parsePostgres(query); perr == nil {
				count = max(count, len(pops))
				ops, fs = append(ops, pops...), append(fs, pfs...)
			}
		}
		return ops, fs, count, nil
	}
	if postgresAvailable {
		if ops, fs, err := parsePostgres(query); err == nil {
			mops, mfs, pieces := e.mysqlPieces(query)
			return append(ops, mops...), append(fs, mfs...), max(len(ops), pieces), nil
		}
	}
	ops, fs, err := e.mysqlFacts(query, true)
	return ops, fs, len(ops), err
}

// mysqlPieces is MySQL's reading of a text its grammar refused as a whole: the facts of each statement
// it parses on its own (with the lenient retry when the text splits into several pieces, as the mysql
// dialect reads them: "SELECT 1::int /* /* */ ; DROP TABLE [t]; /* */" hides a DROP from PostgreSQL that
// only the retry reads), and how many non-empty pieces its splitter finds. A text its tokenizer cannot
// split (an unclosed quote) gives nothing: MySQL would refuse it too.
func (e *Evaluator) mysqlPieces(query string) (ops []string, fs []*facts, pieces int) {
	defer func() {
		if r := recover(); r != nil {
			ops, fs, pieces = nil, nil, 0
		}
	}()
	split := []string{query}
	if strings.IndexByte(query, ';') >= 0 {
		var err error
		if split, err = e.parser.SplitStatementToPieces(query); err != nil {
			return nil, nil, 0
		}
	}
	for _, piece := range split {
		if strings.TrimSpace(piece) == "" {
			continue
		}
		if kw := dclKeyword(piece); kw != "" {
			ops, fs, pieces = append(ops, kw), append(fs, nil), pieces+1
			continue
		}
		st, err := e.parseWhole(piece)
		if err != nil && len(split) > 1 && !errors.Is(err, sqlparser.ErrEmpty) {
			st, err = e.parseLenient(piece, err)
		}
		if errors.Is(err, sqlparser.ErrEmpty) {
			continue
		}
		if _, comment := st.(*sqlparser.CommentOnly); comment {
			continue
		}
		pieces++
		if err == nil {
			ops, fs = append(ops, pieceOperation(st, piece)), append(fs, analyze(st))
		}
	}
	return ops, fs, pieces
}
