package sqlguard

import (
	"regexp"
	"strings"
)

// rewriteForms rewrites, once, the forms of PostgreSQL, SQLite and SQL Server that Vitess' MySQL grammar
// has no place for, into the MySQL form with the same tables, columns and statements (outside quoted
// strings, quoted names and comments): a ::type cast is dropped, ILIKE becomes LIKE, DISTINCT ON (...)
// DISTINCT, FILTER (WHERE ...) after an aggregate is dropped, FETCH FIRST n ROWS ONLY becomes LIMIT n,
// RETURNING ... and ON CONFLICT ... at the end of an INSERT or UPDATE are dropped, INSERT OR REPLACE and
// INSERT OR IGNORE become REPLACE and INSERT IGNORE, INTERVAL '1 day' becomes INTERVAL 1 DAY, a
// positional parameter $1 becomes ?, a [bracketed] name a `quoted` one and TOP n is dropped. ok is false
// when none applies. Nothing here can add a statement or hide one: each form is replaced by a shorter
// one of the same statement.
func rewriteForms(q string) (string, bool) {
	var b strings.Builder
	changed := false
	last := 0
	emit := func(start, end int, with string) {
		b.WriteString(q[last:start])
		b.WriteString(with)
		last = end
		changed = true
	}
	lower := strings.ToLower(q)
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(q, i)
			continue
		case c == '#' || c == '-' && i+1 < len(q) && q[i+1] == '-':
			for i < len(q) && q[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				i = len(q)
				continue
			}
			i += end + 4
			continue
		case c == ':' && i+1 < len(q) && q[i+1] == ':':
			if m := castSuffix.FindStringIndex(q[i:]); m != nil && m[0] == 0 {
				emit(i, i+m[1], "")
				i += m[1]
				continue
			}
		case c == '$' && i+1 < len(q) && '0' <= q[i+1] && q[i+1] <= '9' && (i == 0 || !isCodeWordByte(q[i-1])):
			j := i + 1
			for j < len(q) && '0' <= q[j] && q[j] <= '9' {
				j++
			}
			emit(i, j, "?")
			i = j
			continue
		case c == '%' && i+1 < len(q) && (q[i+1] == 's' || q[i+1] == '('):
			// A Python DB-API placeholder, %s or %(name)s, is a parameter as ? is.
			if m := pyParam.FindStringIndex(q[i:]); m != nil && m[0] == 0 && (i+m[1] == len(q) || !isCodeWordByte(q[i+m[1]])) {
				emit(i, i+m[1], "?")
				i += m[1]
				continue
			}
		case c == '[' && (i == 0 || !isCodeWordByte(q[i-1])):
			if m := bracketName.FindStringSubmatchIndex(q[i:]); m != nil && m[0] == 0 {
				emit(i, i+m[1], "`"+q[i+m[2]:i+m[3]]+"`")
				i += m[1]
				continue
			}
		case isWordStart(c) && (i == 0 || !isCodeWordByte(q[i-1])):
			matched := false
			for _, f := range wordForms {
				if m := f.re.FindStringSubmatchIndex(lower[i:]); m != nil && m[0] == 0 {
					with := f.with
					if strings.Contains(with, "$1") {
						with = strings.ReplaceAll(with, "$1", q[i+m[2]:i+m[3]])
					}
					end := i + m[1]
					if f.toEnd {
						end = statementEnd(q, i)
					}
					emit(i, end, with)
					i, matched = end, true
					break
				}
			}
			if matched {
				continue
			}
			j := i + 1
			for j < len(q) && isCodeWordByte(q[j]) {
				j++
			}
			i = j
			continue
		}
		i++
	}
	if !changed {
		return q, false
	}
	b.WriteString(q[last:])
	return b.String(), true
}

// statementEnd is the offset of the ';' ending the statement that i is in (outside quotes), or len(q).
func statementEnd(q string, i int) int {
	for i < len(q) {
		switch q[i] {
		case '\'', '"', '`':
			i = skipQuoted(q, i)
			continue
		case ';':
			return i
		}
		i++
	}
	return len(q)
}

var (
	castSuffix  = regexp.MustCompile(`^::\s*[A-Za-z_][A-Za-z0-9_]*(?:\s+(?:precision|varying|without\s+time\s+zone|with\s+time\s+zone))?(?:\s*\(\s*\d+(?:\s*,\s*\d+)?\s*\))?(?:\[\])?`)
	bracketName = regexp.MustCompile(`^\[([A-Za-z_][A-Za-z0-9_ $#@]*)\]`)
	pyParam     = regexp.MustCompile(`^%(?:s|\([A-Za-z_][A-Za-z0-9_]*\)s)`)
)

// wordForms are the rewrites that start at a bare word (matched on the lowercased text at the word).
var wordForms = []struct {
	re    *regexp.Regexp
	with  string
	toEnd bool // replace up to the end of the statement
}{
	{regexp.MustCompile(`^ilike\b`), "like", false},
	{regexp.MustCompile(`^distinct\s+on\s*\([^()]*\)`), "distinct", false},
	{regexp.MustCompile(`^filter\s*\(\s*where\s+[^()]*(?:\([^()]*\)[^()]*)*\)`), "", false},
	{regexp.MustCompile(`^fetch\s+(?:first|next)\s+(\d+)\s+rows?\s+only\b`), "limit $1", false},
	{regexp.MustCompile(`^returning\b`), "", true},
	{regexp.MustCompile(`^on\s+conflict\b`), "", true},
	{regexp.MustCompile(`^insert\s+or\s+replace\b`), "replace", false},
	{regexp.MustCompile(`^insert\s+or\s+ignore\b`), "insert ignore", false},
	{regexp.MustCompile(`^interval\s+'\s*\d+\s+(?:second|minute|hour|day|week|month|year)s?\s*'`), "interval 1 day", false},
	{regexp.MustCompile(`^top\s+\(?\d+\)?\s`), "", false},
	// SQLite's AUTOINCREMENT and SQL Server's IDENTITY(seed, step) are MySQL's AUTO_INCREMENT; SQLite's
	// table options WITHOUT ROWID and STRICT after a CREATE TABLE's columns are dropped.
	{regexp.MustCompile(`^autoincrement\b`), "auto_increment", false},
	{regexp.MustCompile(`^identity\s*(?:\(\s*\d+\s*,\s*\d+\s*\))?`), "", false},
	{regexp.MustCompile(`^without\s+rowid\b`), "", false},
	{regexp.MustCompile(`^strict\s*;?\s*$`), "", false},
	// SQL Server's national character types and (MAX) lengths.
	{regexp.MustCompile(`^n?(varchar|varbinary)\s*\(\s*max\s*\)`), "$1(4000)", false},
	{regexp.MustCompile(`^nvarchar\b`), "varchar", false},
	{regexp.MustCompile(`^nchar\b`), "char", false},
	{regexp.MustCompile(`^ntext\b`), "text", false},
	// SQL Server: table hints, CONVERT(type, expr[, style]) (a call of the same arguments less the type),
	// CROSS or OUTER APPLY (a lateral join) and INSERT's OUTPUT INSERTED.x list.
	{regexp.MustCompile(`^with\s*\(\s*(?:nolock|readuncommitted|readcommitted|updlock|rowlock|holdlock|readpast|tablock|paglock|nowait)(?:\s*,\s*(?:nolock|readuncommitted|readcommitted|updlock|rowlock|holdlock|readpast|tablock|paglock|nowait))*\s*\)`), "", false},
	{regexp.MustCompile(`^convert\s*\(\s*(?:n?varchar|n?char|int|bigint|date|datetime2?|time|decimal|numeric|float|money|bit|uniqueidentifier)(?:\s*\(\s*(?:\d+|max)(?:\s*,\s*\d+)?\s*\))?\s*,`), "convert_tsql(", false},
	{regexp.MustCompile(`^(?:cross|outer)\s+apply\b`), "join lateral", false},
	{regexp.MustCompile(`^output\s+(?:inserted|deleted)\.[a-z_*][a-z0-9_]*(?:\s*,\s*(?:inserted|deleted)\.[a-z_*][a-z0-9_]*)*`), "", false},
}

// statementForms are whole statements of SQLite and SQL Server rewritten to the MySQL statement of the
// same kind: PRAGMA name [= value | (value)] sets or reads a setting (SET), DECLARE @v type [= literal]
// sets a variable (SET), EXEC[UTE] procedure with
// literal or @variable arguments calls a procedure (CALL; not a system procedure, sp_ or xp_). The whole
// piece must match.
var statementForms = []struct {
	re   *regexp.Regexp
	with func(m []string) string
}{
	{regexp.MustCompile(`(?i)^\s*pragma\s+([a-z_][a-z0-9_.]*)\s*(?:=\s*([a-z0-9_'"-]+)|\(\s*([a-z0-9_'"-]+)\s*\))?\s*;?\s*$`),
		func(m []string) string {
			v := m[2] + m[3]
			if v == "" {
				v = "default"
			}
			return "set " + m[1] + " = " + v
		}},
	{regexp.MustCompile(`(?i)^\s*exec(?:ute)?\s+([a-z_][a-z0-9_.]*)(?:\s+(?:@[a-z0-9_]+\s*=\s*)?(?:n?'[^']*'|-?\d+(?:\.\d+)?|@[a-z0-9_]+)(?:\s*,\s*(?:@[a-z0-9_]+\s*=\s*)?(?:n?'[^']*'|-?\d+(?:\.\d+)?|@[a-z0-9_]+))*)?\s*;?\s*$`),
		func(m []string) string {
			// System procedures (sp_executesql runs any SQL, xp_cmdshell a shell command) are never read
			// as an ordinary call: they stay unparsed, so blocked.
			name := strings.ToLower(m[1][strings.LastIndexByte(m[1], '.')+1:])
			if strings.HasPrefix(name, "sp_") || strings.HasPrefix(name, "xp_") {
				return ""
			}
			return "call " + m[1] + "()"
		}},
	{regexp.MustCompile(`(?i)^\s*declare\s+(@[a-z_][a-z0-9_]*)\s+[a-z_][a-z0-9_]*(?:\s*\(\s*(?:\d+|max)(?:\s*,\s*\d+)?\s*\))?(?:\s*=\s*(n?'[^']*'|-?\d+(?:\.\d+)?))?\s*;?\s*$`),
		func(m []string) string {
			v := m[2]
			if v == "" {
				v = "null"
			}
			return "set " + m[1] + " = " + strings.TrimPrefix(strings.TrimPrefix(v, "N"), "n")
		}},
}

// rewriteStatementForm rewrites a whole PRAGMA or EXEC statement (see statementForms); ok is false for
// any other text.
func rewriteStatementForm(q string) (string, bool) {
	for _, f := range statementForms {
		if m := f.re.FindStringSubmatch(q); m != nil {
			out := f.with(m)
			return out, out != ""
		}
	}
	return q, false
}
