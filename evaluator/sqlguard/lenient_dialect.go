package sqlguard

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// rewriteDialect rewrites the SQL form the parser stopped on, when it is one that SQLite, PostgreSQL or
// SQL Server accept and Vitess' MySQL grammar does not, into the MySQL form that names the same tables,
// columns and statements: a derived table without an alias gets one, CAST to INTEGER or TEXT becomes
// CAST to SIGNED or CHAR, IS [NOT] DISTINCT FROM becomes <> or <=>, NULLS FIRST/LAST is dropped,
// FULL [OUTER] JOIN becomes LEFT JOIN and a window function's name used as a column is quoted. n numbers
// the retry (for a fresh alias). ok is false when the error is not at one of these forms.
func rewriteDialect(q string, err error, n int) (string, bool) {
	pos, near, found := errorPosition(err)
	if !found {
		return "", false
	}
	words := codeWords(q)
	// at is the index of the word the parser stopped on; len(words) at the end of the text.
	at := len(words)
	if near != "" {
		at = -1
		for i, w := range words {
			if w.end <= pos && strings.EqualFold(q[w.start:w.end], near) {
				at = i
			}
		}
		if at < 0 {
			return "", false
		}
	}
	if near != "" {
		if next, ok := aliasDerivedTable(q, words[at].start, n); ok {
			return next, true
		}
	} else {
		// No word: the parser stopped on a ")" ending at pos (a derived table's alias was wanted before it),
		// or at the end of the text.
		if pos >= 1 && pos <= len(q) && q[pos-1] == ')' {
			if next, ok := aliasDerivedTable(q, pos-1, n); ok {
				return next, true
			}
		}
		if next, ok := aliasDerivedTable(q, min(pos, len(q)), n); ok {
			return next, true
		}
	}
	if next, ok := quoteWindowNames(q, words); ok {
		return next, true
	}
	if at == len(words) {
		return "", false
	}
	word := strings.ToLower(near)
	prev := func(k int) string { // the k-th bare word before the stop, when only spaces separate them
		i := at - k
		if i < 0 || strings.TrimSpace(q[words[i].end:words[i+1].start]) != "" {
			return ""
		}
		return strings.ToLower(q[words[i].start:words[i].end])
	}
	replace := func(from, to int, with string) string { return q[:from] + with + q[to:] }
	switch {
	case castTypes[word] != "" && prev(1) == "as" && insideCast(q, words[at-1].start):
		return replace(words[at].start, words[at].end, castTypes[word]), true
	case word == "distinct" && prev(1) == "not" && prev(2) == "is" && at+1 < len(words) && strings.EqualFold(q[words[at+1].start:words[at+1].end], "from"):
		return replace(words[at-2].start, words[at+1].end, "<=>"), true
	case word == "distinct" && prev(1) == "is" && at+1 < len(words) && strings.EqualFold(q[words[at+1].start:words[at+1].end], "from"):
		return replace(words[at-1].start, words[at+1].end, "<>"), true
	case word == "nulls" && at+1 < len(words) && isFirstOrLast(q[words[at+1].start:words[at+1].end]) &&
		strings.TrimSpace(q[words[at].end:words[at+1].start]) == "":
		return replace(words[at].start, words[at+1].end, ""), true
	case (word == "outer" || word == "join") && prev(1) == "full":
		return replace(words[at-1].start, words[at-1].end, "left"), true
	case word == "full" && at+1 < len(words) && (strings.EqualFold(q[words[at+1].start:words[at+1].end], "outer") ||
		strings.EqualFold(q[words[at+1].start:words[at+1].end], "join")):
		return replace(words[at].start, words[at].end, "left"), true
	}
	return "", false
}

// quoteWindowNames quotes every window-function name (RANK, LEAD...) that no "(" follows: MySQL 8
// reserves them, SQLite and PostgreSQL let a column or table bear them, and without "(" they can only be
// names.
func quoteWindowNames(q string, words []span) (string, bool) {
	var b strings.Builder
	last := 0
	for _, w := range words {
		if !windowNames[strings.ToLower(q[w.start:w.end])] || (w.start > 0 && q[w.start-1] == '`') {
			continue
		}
		if strings.HasPrefix(strings.TrimLeft(q[w.end:], " \t\r\n"), "(") {
			continue
		}
		b.WriteString(q[last:w.start])
		b.WriteString("`" + q[w.start:w.end] + "`")
		last = w.end
	}
	if last == 0 {
		return "", false
	}
	b.WriteString(q[last:])
	return b.String(), true
}

// errPosition reads Vitess' "syntax error at position N [near 'word']": pos (N-1) is the offset just
// past the token the parser stopped on (past the end of the text at its end).
var errPosition = regexp.MustCompile(`at position (\d+)(?: near '([A-Za-z_]+)')?$`)

func errorPosition(err error) (pos int, near string, ok bool) {
	m := errPosition.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, "", false
	}
	p, perr := strconv.Atoi(m[1])
	if perr != nil {
		return 0, "", false
	}
	return p - 1, m[2], true
}

// span is a bare word's byte offsets.
type span struct{ start, end int }

// codeWords lists the bare words of q outside quotes and comments.
func codeWords(q string) []span {
	var out []span
	walkCode(q, func(s, e int) { out = append(out, span{s, e}) })
	return out
}

// aliasDerivedTable gives an alias to the derived table that ends just before stop: a parenthesised
// SELECT (or WITH, VALUES) after FROM, JOIN or a comma with no alias after it, which SQLite and
// PostgreSQL 16 accept and MySQL's grammar refuses.
func aliasDerivedTable(q string, stop, n int) (string, bool) {
	before := strings.TrimRight(q[:stop], " \t\r\n")
	if !strings.HasSuffix(before, ")") {
		return "", false
	}
	closeAt := len(before) - 1
	open := matchingOpen(q, closeAt)
	if open < 0 {
		return "", false
	}
	inner := strings.ToLower(strings.TrimLeft(q[open+1:closeAt], " \t\r\n("))
	if !strings.HasPrefix(inner, "select") && !strings.HasPrefix(inner, "with") && !strings.HasPrefix(inner, "values") {
		return "", false
	}
	lead := strings.ToLower(strings.TrimRight(q[:open], " \t\r\n"))
	if !strings.HasSuffix(lead, ",") && !endsWithWord(lead, "from") && !endsWithWord(lead, "join") {
		return "", false
	}
	return q[:closeAt+1] + fmt.Sprintf(" AS derived_%d", n) + q[closeAt+1:], true
}

// matchingOpen returns the offset of the "(" that the ")" at closeAt closes, outside quotes and
// comments; -1 when there is none.
func matchingOpen(q string, closeAt int) int {
	var stack []int
	open := -1
	for i := 0; i < len(q) && i <= closeAt; {
		switch c := q[i]; {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(q, i)
			continue
		case c == '(':
			stack = append(stack, i)
		case c == ')':
			if len(stack) == 0 {
				return -1
			}
			open, stack = stack[len(stack)-1], stack[:len(stack)-1]
			if i == closeAt {
				return open
			}
		}
		i++
	}
	return -1
}

func endsWithWord(s, w string) bool {
	if !strings.HasSuffix(s, w) {
		return false
	}
	return len(s) == len(w) || !isCodeWordByte(s[len(s)-len(w)-1])
}

// insideCast reports whether the AS at asAt is inside the parentheses of a CAST( ... ).
func insideCast(q string, asAt int) bool {
	depth := 0
	for i := asAt - 1; i >= 0; i-- {
		switch q[i] {
		case ')':
			depth++
		case '(':
			if depth > 0 {
				depth--
				continue
			}
			head := strings.ToLower(strings.TrimRight(q[:i], " \t"))
			return endsWithWord(head, "cast")
		}
	}
	return false
}

func isFirstOrLast(w string) bool {
	return strings.EqualFold(w, "first") || strings.EqualFold(w, "last")
}

// castTypes maps the CAST target types of SQLite, PostgreSQL and SQL Server to MySQL's.
var castTypes = map[string]string{
	"integer": "signed", "int": "signed", "bigint": "signed", "smallint": "signed", "tinyint": "signed",
	"text": "char", "varchar": "char", "string": "char", "numeric": "decimal", "boolean": "unsigned", "bool": "unsigned",
	"float": "double", "timestamp": "datetime",
}

// windowNames are MySQL 8's reserved window-function names, which SQLite and PostgreSQL let a column bear.
var windowNames = map[string]bool{"rank": true, "dense_rank": true, "row_number": true, "percent_rank": true,
	"cume_dist": true, "ntile": true, "lead": true, "lag": true, "first_value": true, "last_value": true, "nth_value": true}
