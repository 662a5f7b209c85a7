// Package sqlguard provides the "sql" evaluator: it parses the selected SQL and matches when the query
// breaks a rule: statement kinds (allow or block lists, DDL, DCL), several statements, tables and schemas
// (allow or block lists), required columns, a tenant filter whose value comes from the step's context
// (required_column_values), UPDATE/DELETE without WHERE, a missing or too large LIMIT, and too many
// joins, unions or nested subqueries. Config field names follow the reference implementation's sql
// evaluator so that its configs carry over.
//
// Importing the package registers the evaluator in evaluator.Default:
//
//	import _ "github.com/guardrail-control/guard/evaluator/sqlguard"
//
// Three dialects: "mysql" (the default) with Vitess' MySQL parser (vitess.io/vitess/go/vt/sqlparser, pure
// Go), "postgres" with PostgreSQL's own grammar through pg_query_go (libpg_query, C: only in a build
// with cgo; without cgo the dialect is refused at config time), and "auto" for SQL whose database is not
// known: MySQL's grammar, then PostgreSQL's, then MySQL's with the lenient rewrites (autoparse.go). Each
// parser's tree is reduced to the same facts (analyze.go, postgres.go), which the rules check.
package sqlguard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/guardrail-control/guard/evaluator"
	"vitess.io/vitess/go/vt/sqlparser"
)

// Name is the evaluator's registered name.
const Name = "sql"

// Version is the evaluator's version as GET /evaluators shows it.
const Version = "1.0.0"

// MaxQueryBytes bounds the SQL text parsed; a longer text is treated as a parse error.
const MaxQueryBytes = 256 << 10

func init() { evaluator.Register(Factory()) }

// Factory returns the sql evaluator's factory, for registering into a registry other than
// evaluator.Default (the package's init already registers it there).
func Factory() evaluator.Factory {
	return evaluator.Factory{
		Name: Name,
		Description: "Parses SQL (MySQL or PostgreSQL dialect, or auto: the first of them that reads it) and matches on statement kinds, multiple statements, tables and schemas, " +
			"tenant filters from the step context, UPDATE/DELETE without WHERE, LIMIT, joins, unions and subquery depth.",
		Version:      Version,
		ConfigSchema: configSchema(),
		New: func(config map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
			return New(config)
		},
	}
}

// Evaluator is a configured sql evaluator. It is safe for concurrent use.
type Evaluator struct {
	s      *settings
	parser *sqlparser.Parser
}

// New builds an evaluator from a config; problems are reported as *evaluator.ConfigError.
func New(config map[string]any) (*Evaluator, error) {
	s, err := parseConfig(config)
	if err != nil {
		return nil, err
	}
	p, err := sqlparser.New(sqlparser.Options{})
	if err != nil {
		return nil, err
	}
	return &Evaluator{s: s, parser: p}, nil
}

// ErrParse is returned (wrapped) for text that is not SQL when on_parse_error is "error". Its message
// never quotes the text.
var ErrParse = errors.New("sql: query does not parse")

// violation is one broken rule: a code and a short detail naming the statement kind, table or column.
type violation struct{ code, detail string }

// Evaluate parses the query and matches when a rule is broken. Null data never matches.
func (e *Evaluator) Evaluate(ctx context.Context, d *evaluator.Data) (evaluator.Result, error) {
	if d == nil || d.IsNull() {
		return evaluator.Result{Confidence: 1}, nil
	}
	query, ok := e.query(d)
	if !ok {
		return e.parseFailure("the selected value holds no SQL text", -1)
	}
	if strings.TrimSpace(query) == "" {
		return evaluator.Result{Confidence: 1}, nil
	}
	if len(query) > MaxQueryBytes {
		return e.parseFailure("the query is too long to parse", -1)
	}
	if why := unseenText(query); why != "" {
		return e.parseFailure(why, -1)
	}
	ops, fs, count, err := e.parseFacts(query)
	var vs []violation
	var replaces []bool
	if err != nil {
		if !e.s.parseErrorScan || !e.s.scanJudges() {
			return e.parseFailure("the query does not parse as SQL", -1)
		}
		// scan.go: no grammar reads the text; the token scan judges what it can see.
		sr := scanQuery(query)
		ops, replaces, count, vs = sr.ops, sr.replaces, sr.count, sr.violations
		if !e.s.requireWhere {
			vs = slices.DeleteFunc(vs, func(v violation) bool { return v.code == "missing_where" })
		}
		fs = make([]*facts, len(ops))
	}
	if err := ctx.Err(); err != nil {
		return evaluator.Result{}, err
	}
	if count > 1 && !e.s.allowMulti {
		vs = append(vs, violation{"multi_statements", fmt.Sprintf("%d statements", count)})
	}
	if e.s.maxStatements > 0 && count > e.s.maxStatements {
		vs = append(vs, violation{"max_statements", fmt.Sprintf("%d statements", count)})
	}
	var ctxObj map[string]any
	if len(e.s.requiredValues) > 0 {
		ctxObj, _ = lookup(d.Value, e.s.contextField).(map[string]any)
	}
	for i, f := range fs {
		vs = e.checkOperation(ops[i], f != nil && f.replaces || replaces != nil && replaces[i], vs)
		if f == nil {
			continue // MySQL GRANT/REVOKE: recognised by keyword only
		}
		vs = e.checkStatement(f, ctxObj, vs)
	}
	if len(vs) == 0 {
		return evaluator.Result{Confidence: 1, Metadata: map[string]any{"operations": evaluator.AnyList(dedupe(ops))}}, nil
	}
	codes := make([]string, 0, len(vs))
	listed := make([]any, 0, len(vs))
	for _, v := range vs {
		codes = append(codes, v.code)
		listed = append(listed, map[string]any{"rule": v.code, "detail": v.detail})
	}
	codes = dedupe(codes)
	return evaluator.Result{
		Matched:    true,
		Confidence: 1,
		Message:    "SQL breaks rules: " + strings.Join(codes, ", "),
		Metadata:   map[string]any{"violations": listed, "operations": evaluator.AnyList(dedupe(ops)), "statement_count": count},
	}, nil
}

// query finds the SQL text: the selected string, or the string at query_field inside the selection.
func (e *Evaluator) query(d *evaluator.Data) (string, bool) {
	v := d.Value
	if e.s.queryField != nil {
		v = lookup(v, e.s.queryField)
	}
	s, ok := v.(string)
	return s, ok
}

// lookup follows a dotted path through decoded JSON objects.
func lookup(v any, path []string) any {
	for _, seg := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[seg]
	}
	return v
}

// parseFacts parses the query in the configured dialect and returns each statement's operation and
// facts (nil facts for a MySQL GRANT or REVOKE, known by keyword only), and how many statements the
// query holds (in dialect auto, where two grammars may each see the text, the larger count).
func (e *Evaluator) parseFacts(query string) ([]string, []*facts, int, error) {
	switch e.s.dialect {
	case dialectPostgres:
		ops, fs, err := parsePostgres(query)
		return ops, fs, len(ops), err
	case dialectAuto:
		return e.parseAuto(query)
	}
	ops, fs, err := e.mysqlFacts(query, true)
	return ops, fs, len(ops), err
}

// mysqlFacts parses the query with the MySQL grammar (retrying the lenient rewrites of lenient.go when
// lenient) and gathers each statement's facts.
func (e *Evaluator) mysqlFacts(query string, lenient bool) ([]string, []*facts, error) {
	stmts, ops, _, err := e.parse(query, lenient)
	if err != nil {
		return nil, nil, err
	}
	fs := make([]*facts, len(stmts))
	for i, st := range stmts {
		if st != nil {
			fs[i] = analyze(st)
		}
	}
	return ops, fs, nil
}

// parse splits the query into statements and parses each, retrying a statement that does not parse
// with the lenient rewrites (lenient.go) when lenient. GRANT and REVOKE, which the grammar does not
// know, come back as a nil statement with their operation. pos is the byte offset of a syntax error
// when known, else -1. The parser is run under recover: a panic in it is a parse error, never a crash.
func (e *Evaluator) parse(query string, lenient bool) (stmts []sqlparser.Statement, ops []string, pos int, err error) {
	defer func() {
		if r := recover(); r != nil {
			stmts, ops, pos, err = nil, nil, -1, ErrParse
		}
	}()
	pieces := []string{query}
	if strings.IndexByte(query, ';') >= 0 {
		// Only a text holding ";" can hold several statements; splitting tokenizes it a second time.
		if pieces, err = e.parser.SplitStatementToPieces(query); err != nil {
			return nil, nil, -1, ErrParse
		}
	}
	for _, piece := range pieces {
		if strings.TrimSpace(piece) == "" {
			continue
		}
		if kw := dclKeyword(piece); kw != "" {
			stmts, ops = append(stmts, nil), append(ops, kw)
			continue
		}
		st, perr := e.parseWhole(piece)
		if perr != nil && lenient && !errors.Is(perr, sqlparser.ErrEmpty) {
			st, perr = e.parseLenient(piece, perr) // lenient.go: INTERSECT/EXCEPT, keywords as names
		}
		if perr != nil {
			if errors.Is(perr, sqlparser.ErrEmpty) {
				continue
			}
			return nil, nil, -1, ErrParse
		}
		if _, comment := st.(*sqlparser.CommentOnly); comment {
			continue
		}
		stmts, ops = append(stmts, st), append(ops, pieceOperation(st, piece))
	}
	if len(stmts) == 0 {
		return nil, nil, -1, ErrParse
	}
	return stmts, ops, -1, nil
}

// parseFailure answers text that is not SQL per on_parse_error.
func (e *Evaluator) parseFailure(msg string, _ int) (evaluator.Result, error) {
	if !e.s.parseErrorIsMatch {
		return evaluator.Result{}, fmt.Errorf("%w: %s", ErrParse, msg)
	}
	return evaluator.Result{Matched: true, Confidence: 1, Message: msg,
		Metadata: map[string]any{"parse_error": true}}, nil
}

// checkOperation applies the operation lists to a statement of kind op; replaces is true for a CREATE
// OR REPLACE, which blocked_operations CREATE_OR_REPLACE names on its own (CREATE names it too).
func (e *Evaluator) checkOperation(op string, replaces bool, vs []violation) []violation {
	if len(e.s.allowedOps) > 0 && !e.s.allowedOps[op] {
		vs = append(vs, violation{"operation_not_allowed", op})
	}
	switch {
	case e.s.blockedOps[op]:
		vs = append(vs, violation{"operation_blocked", op})
	case replaces && e.s.blockedOps[opCreateOrReplace]:
		vs = append(vs, violation{"operation_blocked", opCreateOrReplace})
	}
	return vs
}

func (e *Evaluator) checkStatement(f *facts, ctxObj map[string]any, vs []violation) []violation {
	s := e.s
	for _, t := range f.tables {
		name, schema := s.fold(t.name), s.fold(t.schema)
		full := name
		if schema != "" {
			full = schema + "." + name
		}
		if len(s.allowedTables) > 0 && !s.allowedTables[name] && !s.allowedTables[full] {
			vs = append(vs, violation{"table_not_allowed", full})
		}
		if s.blockedTables[name] || s.blockedTables[full] {
			vs = append(vs, violation{"table_blocked", full})
		}
		if schema != "" && len(s.allowedSchemas) > 0 && !s.allowedSchemas[schema] {
			vs = append(vs, violation{"schema_not_allowed", schema})
		}
		if schema != "" && s.blockedSchemas[schema] {
			vs = append(vs, violation{"schema_blocked", schema})
		}
	}
	if s.requireWhere && (f.op == "UPDATE" || f.op == "DELETE") && !f.hasWhere {
		vs = append(vs, violation{"missing_where", f.op})
	}
	if f.isSelect {
		vs = e.checkLimit(f, vs)
	}
	if s.maxJoins >= 0 && f.joins > s.maxJoins {
		vs = append(vs, violation{"max_joins", fmt.Sprintf("%d joins", f.joins)})
	}
	if s.maxUn >= 0 && f.unions > s.maxUn {
		vs = append(vs, violation{"max_union_count", fmt.Sprintf("%d unions", f.unions)})
	}
	if s.maxDepth >= 0 && f.depth > s.maxDepth {
		vs = append(vs, violation{"max_subquery_depth", fmt.Sprintf("depth %d", f.depth)})
	}
	if f.filtered && len(s.requiredColumns) > 0 {
		vs = e.checkColumns(f, vs)
	}
	if f.filtered && len(s.requiredValues) > 0 {
		vs = e.checkValues(f, ctxObj, vs)
	}
	return vs
}

func (e *Evaluator) checkLimit(f *facts, vs []violation) []violation {
	s := e.s
	l := f.limit
	if !l.hasRowcount {
		if s.requireLimit {
			vs = append(vs, violation{"missing_limit", "SELECT"})
		}
		return vs
	}
	if s.maxLimit > 0 && (!l.rowcountOK || l.rowcount > s.maxLimit) {
		vs = append(vs, violation{"max_limit", "LIMIT above the maximum"})
	}
	if s.maxWindow > 0 && (!l.rowcountOK || !l.offsetOK || l.rowcount+l.offset > s.maxWindow) {
		vs = append(vs, violation{"max_result_window", "LIMIT + OFFSET above the maximum"})
	}
	return vs
}

// checkColumns applies required_columns to the statement's select list, WHERE clauses or whole text.
func (e *Evaluator) checkColumns(f *facts, vs []violation) []violation {
	s := e.s
	present := map[string]bool{}
	for _, c := range f.columns(s.columnContext, s.columnTopLevel) {
		present[s.fold(c.name)] = true
		if c.qualifier != "" {
			present[s.fold(c.qualifier+"."+c.name)] = true
		}
	}
	found := 0
	var missing []string
	for _, rc := range s.requiredColumns {
		if present[rc] {
			found++
		} else {
			missing = append(missing, rc)
		}
	}
	if (s.columnsAll && len(missing) > 0) || (!s.columnsAll && found == 0) {
		vs = append(vs, violation{"missing_required_columns", strings.Join(missing, ", ")})
	}
	return vs
}

// checkValues requires, in every top-level WHERE of the statement, a conjunct column = literal whose
// literal equals the context value of each required_column_values entry.
func (e *Evaluator) checkValues(f *facts, ctxObj map[string]any, vs []violation) []violation {
	s := e.s
	cols := make([]string, 0, len(s.requiredValues))
	for c := range s.requiredValues {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	wheres := f.equalities()
	if len(wheres) == 0 {
		wheres = [][]equality{nil} // an UPDATE or DELETE without WHERE filters nothing
	}
	for _, col := range cols {
		want, ok := contextValue(ctxObj, s.requiredValues[col])
		if !ok {
			vs = append(vs, violation{"missing_context_value", s.requiredValues[col]})
			continue
		}
		for _, w := range wheres {
			if !e.hasEquality(w, col, want) {
				vs = append(vs, violation{"required_column_value", col})
				break
			}
		}
	}
	return vs
}

// contextValue reads a context key as text; numbers print as JSON does.
func contextValue(ctxObj map[string]any, key string) (string, bool) {
	switch v := lookup(ctxObj, strings.Split(key, ".")).(type) {
	case string:
		return v, v != ""
	case float64:
		return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%f", v), "0"), "."), true
	case bool:
		return fmt.Sprint(v), true
	}
	return "", false
}

// hasEquality reports whether a WHERE clause's equalities hold col = want (either side), col being
// "name" (any qualifier) or "table.name".
func (e *Evaluator) hasEquality(eqs []equality, col, want string) bool {
	for _, eq := range eqs {
		if !e.colMatches(eq.col, col) {
			continue
		}
		if eq.val == want || (isNumber(eq.val) && isNumber(want) && trimNumber(eq.val) == trimNumber(want)) {
			return true
		}
	}
	return false
}

func (e *Evaluator) colMatches(c colRef, ref string) bool {
	name := e.s.fold(c.name)
	table, column, qualified := strings.Cut(ref, ".")
	if !qualified {
		return name == ref
	}
	return name == column && e.s.fold(c.qualifier) == table
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' && !(i == 0 && s[i] == '-') {
			return false
		}
	}
	return true
}

func trimNumber(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// errPartialDDL: Vitess accepts a DDL statement it could parse only in part (it stops at the first thing
// its grammar lacks and ignores the rest). The rest is text no verdict covered, and in a dialect whose
// statements need no ";" (SQL Server) it can be further statements ("CREATE TABLE t (a int) BULK INSERT
// t FROM 'c:\x'"), so a partial parse is a parse failure; the lenient rewrites may still read it whole.
var errPartialDDL = errors.New("sql: DDL parsed only in part")

// parseWhole parses one statement with Vitess' grammar, refusing a DDL statement parsed only in part.
func (e *Evaluator) parseWhole(piece string) (sqlparser.Statement, error) {
	st, err := e.parser.Parse(piece)
	if err != nil {
		return nil, err
	}
	switch d := st.(type) {
	case sqlparser.DDLStatement:
		if !d.IsFullyParsed() {
			return nil, errPartialDDL
		}
	case sqlparser.DBDDLStatement:
		if !d.IsFullyParsed() {
			return nil, errPartialDDL
		}
	}
	return st, nil
}
