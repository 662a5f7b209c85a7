package sqlguard

import (
	"regexp"
	"strconv"
	"strings"

	"vitess.io/vitess/go/vt/sqlparser"
)

// The MySQL dialect parses with Vitess' grammar, which lacks some SQL that MySQL 8 and the other common
// dialects accept, so ordinary queries came out as "does not parse" (fail-closed, so blocked). A failed
// parse is retried once the query is rewritten, never more liberally than a real database would be:
//
//   - INTERSECT and EXCEPT (MySQL 8.0.31 and later, PostgreSQL, SQLite, SQL Server) become UNION: the set
//     operation does not change what the rules look at (the operation, the tables, the statements);
//   - a keyword used as a table, column or alias name (a table named show, a column named key), as SQLite
//     and PostgreSQL allow for non-reserved words, is quoted with backticks when the parser stops on it in a
//     name position (after SELECT, FROM, JOIN, AS, BY, WHERE, AND, OR, ON, SET, a comma, a dot or "("). Statement and clause keywords are never quoted,
//     so a second statement or a clause an attacker smuggles in cannot be turned into a name;
//   - the forms of PostgreSQL, SQLite and SQL Server in lenient_forms.go (::casts, ILIKE, RETURNING,
//     ON CONFLICT, DISTINCT ON, FETCH FIRST, $1 parameters, [bracketed] names, TOP n), rewritten once;
//   - SQL Server's table hints WITH (NOLOCK), CONVERT(type, ...), CROSS/OUTER APPLY and OUTPUT INSERTED.x,
//     Python's %s placeholders, and the whole statements PRAGMA (SQLite, a SET) and EXEC (SQL Server, a
//     CALL) in lenient_forms.go;
//   - the dialect forms of lenient_dialect.go (a derived table without an alias, CAST to INTEGER or TEXT,
//     IS [NOT] DISTINCT FROM, NULLS FIRST/LAST, FULL [OUTER] JOIN), each rewritten to the MySQL form that
//     keeps the tables, columns and statements the rules look at.
//
// Each retry rewrites only where the parser stopped, so text the parser rejects elsewhere is untouched,
// and text that still does not parse stays a parse failure.

// maxLenientRetries bounds the retries (one rewrite per retry).
const maxLenientRetries = 8

// parseLenient retries a query that failed to parse (see above); it returns the parser's error when the
// rewritten query does not parse either.
func (e *Evaluator) parseLenient(piece string, first error) (sqlparser.Statement, error) {
	if q, ok := rewriteStatementForm(piece); ok {
		if st, perr := e.parseWhole(q); perr == nil {
			return st, nil
		}
	}
	q, changed := rewriteSetOps(piece)
	if q2, ok := rewriteForms(q); ok {
		q, changed = q2, true
	}
	err := first
	if changed {
		st, perr := e.parseWhole(q)
		if perr == nil {
			return st, nil
		}
		err = perr
	}
	for i := 0; i < maxLenientRetries; i++ {
		next, ok := rewriteDialect(q, err, i)
		if !ok {
			next, ok = quoteNameKeyword(q, err)
		}
		if !ok {
			return nil, err
		}
		q = next
		st, perr := e.parseWhole(q)
		if perr == nil {
			return st, nil
		}
		err = perr
	}
	return nil, err
}

// rewriteSetOps replaces INTERSECT and EXCEPT outside quotes and comments with UNION.
func rewriteSetOps(q string) (string, bool) {
	var b strings.Builder
	changed := false
	last := 0
	walkCode(q, func(start, end int) {
		w := q[start:end]
		if strings.EqualFold(w, "intersect") || strings.EqualFold(w, "except") {
			b.WriteString(q[last:start])
			b.WriteString("union")
			last = end
			changed = true
		}
	})
	if !changed {
		return q, false
	}
	b.WriteString(q[last:])
	return b.String(), true
}

// walkCode calls word for each bare word (letters, digits, _ and $, starting with a letter or _) of q
// outside quoted strings, quoted identifiers and comments.
func walkCode(q string, word func(start, end int)) {
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(q, i)
		case c == '#' || c == '-' && i+1 < len(q) && q[i+1] == '-':
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				return
			}
			i += end + 4
		case isWordStart(c):
			j := i + 1
			for j < len(q) && isCodeWordByte(q[j]) {
				j++
			}
			word(i, j)
			i = j
		default:
			i++
		}
	}
}

// skipQuoted returns the offset after the quoted string starting at i (a doubled quote or a backslash
// escapes the quote inside it); the end of q when it is not closed.
func skipQuoted(q string, i int) int {
	quote := q[i]
	for j := i + 1; j < len(q); j++ {
		switch q[j] {
		case '\\':
			j++
		case quote:
			if j+1 < len(q) && q[j+1] == quote {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(q)
}

func isWordStart(c byte) bool    { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isCodeWordByte(c byte) bool { return isWordStart(c) || '0' <= c && c <= '9' || c == '$' }

// syntaxErrAt reads Vitess' "syntax error at position N near 'word'".
var syntaxErrAt = regexp.MustCompile(`at position (\d+) near '([A-Za-z_]+)'`)

// neverNames are the keywords that are never quoted into names: those that start a statement or a
// clause, join or combine queries. Quoting one could hide a smuggled statement or clause.
var neverNames = map[string]bool{
	"select": true, "insert": true, "update": true, "delete": true, "replace": true, "drop": true, "alter": true,
	"create": true, "truncate": true, "rename": true, "grant": true, "revoke": true, "call": true, "load": true,
	"lock": true, "unlock": true, "set": true, "use": true, "union": true, "where": true, "having": true,
	"limit": true, "order": true, "group": true, "from": true, "join": true, "on": true, "using": true,
	"into": true, "values": true, "and": true, "or": true, "not": true, "xor": true, "as": true, "with": true,
	"begin": true, "commit": true, "rollback": true, "prepare": true, "execute": true, "handler": true,
	"do": true, "explain": true, "describe": true, "analyze": true, "optimize": true, "kill": true,
	"shutdown": true, "outfile": true, "dumpfile": true, "sleep": true, "benchmark": true, "if": true,
	"case": true, "when": true, "then": true, "else": true, "end": true, "null": true, "true": true, "false": true,
}

// nameBefore are the words after which a name stands (a column, a table or an alias).
var nameBefore = map[string]bool{"select": true, "from": true, "join": true, "as": true, "by": true, "where": true,
	"and": true, "or": true, "on": true, "set": true, "distinct": true, "update": true, "into": true, "table": true}

// quoteNameKeyword quotes the keyword the parser stopped on when it stands where a name goes; ok is false
// when the error is elsewhere.
func quoteNameKeyword(q string, err error) (string, bool) {
	m := syntaxErrAt.FindStringSubmatch(err.Error())
	if m == nil {
		return "", false
	}
	pos, perr := strconv.Atoi(m[1])
	kw := m[2]
	if perr != nil || neverNames[strings.ToLower(kw)] {
		return "", false
	}
	// The keyword is the last bare word with its spelling that ends at or before the error position.
	start, end, prevEnd, prevWord := -1, -1, -1, ""
	var lastEnd int
	var lastWord string
	walkCode(q, func(s, e int) {
		if e <= pos+1 && strings.EqualFold(q[s:e], kw) {
			start, end, prevEnd, prevWord = s, e, lastEnd, lastWord
		}
		lastEnd, lastWord = e, q[s:e]
	})
	if start < 0 {
		return "", false
	}
	// What comes before it, past spaces: a comma, a dot or "(" (a column list, an argument), or a word
	// of nameBefore (FROM, JOIN, AS...).
	between := strings.TrimSpace(q[prevEnd:start])
	switch {
	case between == "," || between == "." || between == "(":
	case between == "" && nameBefore[strings.ToLower(prevWord)]:
	case strings.HasSuffix(between, ",") && strings.Count(between, "(") == 0:
	default:
		return "", false
	}
	return q[:start] + "`" + q[start:end] + "`" + q[end:], true
}
