package sqlguard

import (
	"fmt"
	"slices"
	"strings"
)

// The token scan (on_parse_error "scan") judges text that no grammar reads. The grammars cover the
// common forms of MySQL, PostgreSQL, SQLite and SQL Server, but every dialect has analytics and DDL forms
// they lack (sampling clauses, FETCH ... WITH TIES, struct and array constructors, engine options), and
// refusing all of them blocks ordinary work. The scan never clears what it cannot see, so it stays
// fail-closed where it matters:
//
//   - the text is read three ways, as MySQL (backslash escapes, # comments, /*! */ read as code), PostgreSQL (nested /* */
//     comments, $tag$ strings, E'' strings) and SQL Server/SQLite ([bracketed] names) read it; a quote,
//     comment or parenthesis left open in any reading is a violation (unparsable);
//   - statements are the pieces between semicolons, outside strings and comments; each must start as a
//     statement does (SELECT, WITH, INSERT, CREATE, ...), else it is a fragment of something (an
//     injected tail such as "1 OR 1=1") and a violation;
//   - DROP, TRUNCATE, ALTER, RENAME, GRANT, REVOKE, DENY and COPY are that operation wherever they stand
//     as a bare word outside strings and comments (SQL Server runs "SELECT 1 DROP TABLE t" as two
//     statements without a semicolon), CREATE OR REPLACE is CREATE_OR_REPLACE, and the body of a
//     $tag$ string is read as code (it is a function or DO block that runs);
//   - DELETE and UPDATE (not after ON, FOR, KEY or DO, where they are a foreign-key action, a row lock or
//     an upsert, nor after THEN in a statement that starts with MERGE, whose ON restricts the rows) need a WHERE at their own parenthesis depth before the next statement keyword;
//   - routines that run operating-system commands or reconfigure the server (xp_cmdshell, sp_configure,
//     OPENROWSET, ...) are a violation, and text of comments and semicolons alone is unparsable;
//   - dynamic SQL (EXEC, EXECUTE, PREPARE, sp_executesql, EXECUTE IMMEDIATE, a DO block) is a violation:
//     what it runs may be built from pieces or a variable the scan cannot read.
//
// The operations found go through blocked_operations as the grammars' do. Rules that need the tree
// (allowed_operations, tables, schemas, columns, values, limits, depth, joins, unions) cannot be judged
// on tokens: with any of them configured, unparsable text is a match as with on_parse_error "match".

// scanReading is one dialect's way of reading quotes and comments.
type scanReading struct {
	name                      string
	backslash, hashComment    bool
	nestedComments, dollarStr bool
	brackets                  bool
}

var scanReadings = []scanReading{
	{name: "mysql", backslash: true, hashComment: true},
	{name: "postgres", nestedComments: true, dollarStr: true},
	{name: "sqlserver", brackets: true},
}

// scanToken is a word (lower-cased), a punctuation byte, or a string's contents (str true).
type scanToken struct {
	text  string
	str   bool
	depth int
}

// scanResult is what the scan found.
type scanResult struct {
	ops        []string
	replaces   []bool
	count      int
	violations []violation
}

// scanQuery reads query every way and merges what each reading finds: any violation of any reading
// stands, the statement count is the largest.
func scanQuery(query string) scanResult {
	var out scanResult
	var seenOps []string
	for _, r := range scanReadings {
		toks, err := r.tokenize(query)
		if err != "" {
			out.violations = append(out.violations, violation{"unparsable", err + " (" + r.name + " reading)"})
			continue
		}
		res := judgeTokens(toks)
		for i, op := range res.ops {
			if !slices.Contains(seenOps, fmt.Sprint(op, res.replaces[i])) {
				seenOps = append(seenOps, fmt.Sprint(op, res.replaces[i]))
				out.ops, out.replaces = append(out.ops, op), append(out.replaces, res.replaces[i])
			}
		}
		out.count = max(out.count, res.count)
		if res.count == 0 {
			res.violations = append(res.violations, violation{"unparsable", "the text holds no statement"})
		}
		for _, v := range res.violations {
			if !slices.Contains(out.violations, v) {
				out.violations = append(out.violations, v)
			}
		}
	}
	return out
}

// tokenize splits q into tokens; err says what was left open.
func (r scanReading) tokenize(q string) (toks []scanToken, err string) {
	depth := 0
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(q) && q[i+1] == '-', c == '#' && r.hashComment:
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case r.hashComment && (strings.HasPrefix(q[i:], "/*!") || strings.HasPrefix(q[i:], "/*M!")):
			// MySQL and MariaDB run the text of an executable comment: read it as code (its closing */
			// is two punctuation tokens).
			i += strings.IndexByte(q[i:], '!') + 1
			for i < len(q) && '0' <= q[i] && q[i] <= '9' {
				i++
			}
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end, ok := r.commentEnd(q, i)
			if !ok {
				return nil, "an unclosed comment"
			}
			i = end
		case c == '\'' || c == '"' || c == '`' || c == '[' && r.brackets:
			escape := r.backslash && c != '`' && c != '['
			if c == '\'' && !escape && len(toks) > 0 && (toks[len(toks)-1].text == "e") && i > 0 && (q[i-1] == 'e' || q[i-1] == 'E') {
				escape = r.dollarStr // PostgreSQL's E'...' reads backslash escapes
			}
			closeQ := c
			if c == '[' {
				closeQ = ']'
			}
			end, ok := quotedEnd(q, i, closeQ, escape)
			if !ok {
				return nil, "an unclosed quote"
			}
			if c == '\'' {
				toks = append(toks, scanToken{text: q[i+1 : end-1], str: true, depth: depth})
			} else {
				toks = append(toks, scanToken{text: "name", depth: depth}) // a quoted name
			}
			i = end
		case c == '$' && r.dollarStr && dollarTagEnd(q, i) > 0:
			tagEnd := dollarTagEnd(q, i)
			tag := q[i:tagEnd]
			body := strings.Index(q[tagEnd:], tag)
			if body < 0 {
				return nil, "an unclosed $-quoted string"
			}
			// The body of a $$ string is usually code (a function, a DO block): read as code.
			inner, ierr := r.tokenize(q[tagEnd : tagEnd+body])
			if ierr == "" {
				for _, t := range inner {
					t.depth += depth + 1
					if t.text != ";" {
						toks = append(toks, t)
					}
				}
			}
			toks = append(toks, scanToken{text: q[tagEnd : tagEnd+body], str: true, depth: depth})
			i = tagEnd + body + len(tag)
		case isWordStart(c) || c >= 0x80:
			j := i + 1
			for j < len(q) && (isCodeWordByte(q[j]) || q[j] >= 0x80) {
				j++
			}
			toks = append(toks, scanToken{text: strings.ToLower(q[i:j]), depth: depth})
			i = j
		case c == '(':
			toks = append(toks, scanToken{text: "(", depth: depth})
			depth++
			i++
		case c == ')':
			depth--
			if depth < 0 {
				return nil, "a ) that closes nothing"
			}
			toks = append(toks, scanToken{text: ")", depth: depth})
			i++
		default:
			toks = append(toks, scanToken{text: q[i : i+1], depth: depth})
			i++
		}
	}
	if depth != 0 {
		return nil, "a ( left open"
	}
	return toks, ""
}

// commentEnd returns the offset after the /* comment at i (nested when the reading nests them).
func (r scanReading) commentEnd(q string, i int) (int, bool) {
	level := 0
	for j := i; j+1 < len(q); j++ {
		switch {
		case q[j] == '/' && q[j+1] == '*' && (level == 0 || r.nestedComments):
			level++
			j++
		case q[j] == '*' && q[j+1] == '/':
			level--
			j++
			if level == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}

// quotedEnd returns the offset after the quoted text opened at i and closed by closeQ (doubled to
// escape it; a backslash escapes too when escape).
func quotedEnd(q string, i int, closeQ byte, escape bool) (int, bool) {
	for j := i + 1; j < len(q); j++ {
		switch {
		case escape && q[j] == '\\':
			j++
		case q[j] == closeQ:
			if j+1 < len(q) && q[j+1] == closeQ {
				j++
				continue
			}
			return j + 1, true
		}
	}
	return 0, false
}

// dollarTagEnd returns the offset after a $tag$ opener at i, or 0 when there is none ($1 is a parameter).
func dollarTagEnd(q string, i int) int {
	j := i + 1
	for j < len(q) && (isWordStart(q[j]) || j > i+1 && '0' <= q[j] && q[j] <= '9') {
		j++
	}
	if j < len(q) && q[j] == '$' {
		return j + 1
	}
	return 0
}

// statementStarts are the words a statement begins with, and the operation each is.
var statementStarts = map[string]string{
	"select": "SELECT", "with": "SELECT", "values": "SELECT", "table": "SELECT", "from": "SELECT",
	"insert": "INSERT", "upsert": "INSERT", "merge": "UPDATE", "replace": "REPLACE", "update": "UPDATE", "delete": "DELETE",
	"create": "CREATE", "alter": "ALTER", "drop": "DROP", "truncate": "TRUNCATE", "rename": "RENAME",
	"grant": "GRANT", "revoke": "REVOKE", "deny": "REVOKE", "set": "SET", "use": "USE", "show": "SHOW",
	"describe": "EXPLAIN", "desc": "EXPLAIN", "explain": "EXPLAIN", "call": "CALL", "exec": "CALL",
	"execute": "EXECUTE", "prepare": "PREPARE", "load": "LOAD", "copy": "COPY", "unload": "COPY",
	"begin": "TRANSACTION", "start": "TRANSACTION", "commit": "TRANSACTION", "rollback": "TRANSACTION",
	"savepoint": "TRANSACTION", "release": "TRANSACTION", "end": "TRANSACTION", "lock": "LOCK", "unlock": "LOCK",
	"analyze": "ANALYZE", "analyse": "ANALYZE", "vacuum": "OTHER", "optimize": "OTHER", "declare": "OTHER",
	"pragma": "SET", "attach": "OTHER", "detach": "OTHER", "reindex": "OTHER", "comment": "OTHER",
	"refresh": "OTHER", "cluster": "OTHER", "checkpoint": "OTHER", "do": "CALL", "print": "OTHER",
	"if": "OTHER", "go": "OTHER", "listen": "OTHER", "notify": "OTHER", "discard": "OTHER", "reset": "SET",
	"cache": "OTHER", "uncache": "OTHER", "msck": "OTHER", "summarize": "SELECT", "pivot": "SELECT", "unpivot": "SELECT",
}

// anywhereOps are the destructive words that are their operation wherever they stand as a bare word.
var anywhereOps = map[string]string{
	"drop": "DROP", "truncate": "TRUNCATE", "alter": "ALTER", "rename": "RENAME", "grant": "GRANT",
	"revoke": "REVOKE", "deny": "REVOKE", "copy": "COPY",
}

// rowOpStops end the search for a DELETE's or UPDATE's WHERE: the next statement at the same depth.
var rowOpStops = map[string]bool{"select": true, "insert": true, "update": true, "delete": true, "merge": true,
	"create": true, "drop": true, "alter": true, "truncate": true, "values": true}

// systemRoutines run operating-system commands or reconfigure the server; the grammars' readings know
// them as calls, the scan, which cannot tell what a call does, blocks them.
var systemRoutines = map[string]bool{"xp_cmdshell": true, "sp_oacreate": true, "sp_configure": true,
	"sp_addsrvrolemember": true, "sp_addlogin": true, "xp_regwrite": true, "openrowset": true, "opendatasource": true}

// dynamicWords run SQL text built at run time (DO, which runs a block, counts at a statement's start).
var dynamicWords = map[string]bool{"exec": true, "execute": true, "prepare": true, "sp_executesql": true, "immediate": true}

// judgeTokens finds the operations and violations of one reading's tokens.
func judgeTokens(toks []scanToken) scanResult {
	var res scanResult
	start := 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) && toks[i].text != ";" {
			continue
		}
		if i > start {
			judgeStatement(toks[start:i], &res)
		}
		start = i + 1
	}
	return res
}

// judgeStatement judges the tokens of one statement (between semicolons).
func judgeStatement(st []scanToken, res *scanResult) {
	res.count++
	first := 0
	for first < len(st) && st[first].text == "(" {
		first++
	}
	op, known := "", false
	if first < len(st) && !st[first].str {
		op, known = statementStarts[st[first].text]
	}
	if !known {
		res.violations = append(res.violations, violation{"unparsable", "the text does not start as an SQL statement does"})
		return
	}
	add := func(op string, replaces bool) {
		res.ops = append(res.ops, op)
		res.replaces = append(res.replaces, replaces)
	}
	add(op, false)
	firstOp := len(res.ops) - 1
	dynamic := false
	budget := 8*len(st) + 64
	for i, t := range st {
		if t.str {
			continue
		}
		if systemRoutines[t.text] { // master.dbo.xp_cmdshell as well
			res.violations = append(res.violations, violation{"system_routine", t.text})
		}
		if i > 0 && st[i-1].text == "." || i+1 < len(st) && st[i+1].text == "." {
			continue // a qualified name's part (t.update, drop.x)
		}
		prev := ""
		if i > 0 && !st[i-1].str {
			prev = st[i-1].text
		}
		if dynamicWords[t.text] || t.text == "do" && i == first {
			dynamic = true
		}
		if o, ok := anywhereOps[t.text]; ok && i != first {
			add(o, false)
		}
		switch t.text {
		case "create":
			if i+2 < len(st) && st[i+1].text == "or" && st[i+2].text == "replace" {
				if i == first {
					res.replaces[firstOp] = true
				} else {
					add("CREATE", true)
				}
			}
		case "delete", "update":
			switch prev {
			case "on", "for", "key", "do", "no", "of":
				continue // ON DELETE CASCADE, FOR UPDATE, ON DUPLICATE KEY UPDATE, DO UPDATE
			case "then":
				if st[first].text == "merge" {
					continue // MERGE ... ON cond WHEN MATCHED THEN UPDATE: ON restricts the rows, as PostgreSQL's reading has it
				}
			}
			if i != first {
				add(strings.ToUpper(t.text), false)
			}
			if !hasWhere(st, i, &budget) {
				res.violations = append(res.violations, violation{"missing_where", strings.ToUpper(t.text)})
			}
		}
	}
	if dynamic {
		// The text a dynamic call runs may be built from pieces ('DR' + 'OP TABLE t') or a variable: the
		// scan cannot see it, so it is not cleared.
		res.violations = append(res.violations, violation{"dynamic_sql", "the scan cannot read what EXEC, EXECUTE, PREPARE or DO runs"})
	}
}

// hasWhere reports whether the DELETE or UPDATE at st[i] has a WHERE at its depth before the next
// statement keyword at that depth or the end of its parentheses. budget bounds the tokens looked at over
// a whole statement (nested DELETEs would otherwise cost the square of the text's length); when it runs
// out the answer is false, a violation: fail closed.
func hasWhere(st []scanToken, i int, budget *int) bool {
	d := st[i].depth
	for _, t := range st[i+1:] {
		if *budget--; *budget < 0 {
			return false
		}
		if t.depth < d || t.str {
			if t.depth < d {
				return false
			}
			continue
		}
		if t.depth > d {
			continue
		}
		if t.text == "where" {
			return true
		}
		if rowOpStops[t.text] {
			return false
		}
	}
	return false
}
