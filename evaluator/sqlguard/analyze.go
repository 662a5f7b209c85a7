package sqlguard

import (
	"strconv"
	"strings"

	"vitess.io/vitess/go/vt/sqlparser"
)

// operation names the kind of a parsed statement.
func operation(st sqlparser.Statement) string {
	switch s := st.(type) {
	case *sqlparser.Select, *sqlparser.Union, *sqlparser.ValuesStatement:
		return "SELECT"
	case *sqlparser.Insert:
		if s.Action == sqlparser.ReplaceAct {
			return "REPLACE"
		}
		return "INSERT"
	case *sqlparser.Update:
		return "UPDATE"
	case *sqlparser.Delete:
		return "DELETE"
	case *sqlparser.CreateTable, *sqlparser.CreateView, *sqlparser.CreateDatabase, *sqlparser.CreateProcedure:
		return "CREATE"
	case *sqlparser.AlterTable, *sqlparser.AlterView, *sqlparser.AlterDatabase:
		return "ALTER"
	case *sqlparser.DropTable, *sqlparser.DropView, *sqlparser.DropDatabase, *sqlparser.DropProcedure:
		return "DROP"
	case *sqlparser.TruncateTable:
		return "TRUNCATE"
	case *sqlparser.RenameTable:
		return "RENAME"
	case *sqlparser.Set:
		return "SET"
	case *sqlparser.Use:
		return "USE"
	case *sqlparser.Show:
		return "SHOW"
	case *sqlparser.ExplainStmt, *sqlparser.ExplainTab, *sqlparser.VExplainStmt:
		return "EXPLAIN"
	case *sqlparser.CallProc:
		return "CALL"
	case *sqlparser.Load:
		return "LOAD"
	case *sqlparser.Begin, *sqlparser.Commit, *sqlparser.Rollback, *sqlparser.SRollback, *sqlparser.Savepoint, *sqlparser.Release:
		return "TRANSACTION"
	case *sqlparser.LockTables, *sqlparser.UnlockTables:
		return "LOCK"
	case *sqlparser.Analyze:
		return "ANALYZE"
	case *sqlparser.PrepareStmt:
		return "PREPARE"
	case *sqlparser.ExecuteStmt:
		return "EXECUTE"
	}
	return "OTHER"
}

// pieceOperation names the kind of statement st parsed from piece. Vitess parses CREATE [UNIQUE |
// FULLTEXT | SPATIAL] INDEX into the ALTER TABLE ... ADD INDEX it amounts to; the text's first word tells
// them apart, so that creating an index is a CREATE, as in the PostgreSQL dialect.
func pieceOperation(st sqlparser.Statement, piece string) string {
	op := operation(st)
	if _, alter := st.(*sqlparser.AlterTable); alter && firstWordIs(piece, "create") {
		return "CREATE"
	}
	return op
}

// firstWordIs reports whether the first bare word of q, outside comments, is w (any case).
func firstWordIs(q, w string) bool {
	first := ""
	walkCode(q, func(s, e int) {
		if first == "" {
			first = q[s:e]
		}
	})
	return strings.EqualFold(first, w)
}

// dclKeyword recognises GRANT and REVOKE, which the MySQL grammar of Vitess does not parse, by the
// statement's first keyword after comments.
func dclKeyword(piece string) string {
	s := strings.TrimSpace(piece)
	for {
		switch {
		case strings.HasPrefix(s, "--") || strings.HasPrefix(s, "#"):
			_, rest, ok := strings.Cut(s, "\n")
			if !ok {
				return ""
			}
			s = strings.TrimSpace(rest)
			continue
		case strings.HasPrefix(s, "/*"):
			_, rest, ok := strings.Cut(s[2:], "*/")
			if !ok {
				return ""
			}
			s = strings.TrimSpace(rest)
			continue
		}
		break
	}
	for _, kw := range dclOps {
		if len(s) > len(kw) && strings.EqualFold(s[:len(kw)], kw) && !isWordByte(s[len(kw)]) {
			return kw
		}
	}
	return ""
}

func isWordByte(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// tableRef is a table a statement names: its schema (empty when unqualified) and name.
type tableRef struct{ schema, name string }

// colRef is a column reference: its qualifier (a table or alias, empty when unqualified) and name.
type colRef struct{ qualifier, name string }

// equality is a WHERE conjunct column = literal, the literal as text.
type equality struct {
	col colRef
	val string
}

// limitFacts is a SELECT's LIMIT: whether it has a row count, and the count and offset when they are
// whole-number literals.
type limitFacts struct {
	rowcount, offset        int64
	hasRowcount, rowcountOK bool
	offsetOK                bool // true when there is no offset (0)
}

// facts are what the checks need to know about one statement, whatever the dialect that parsed it.
type facts struct {
	op       string
	tables   []tableRef
	joins    int
	unions   int
	depth    int
	hasWhere bool // UPDATE and DELETE
	replaces bool // CREATE OR REPLACE
	filtered bool // SELECT, UPDATE or DELETE: the kind required_column_values applies to
	isSelect bool
	limit    limitFacts
	// columns lists the column references of the select lists (context "select"), the WHERE clauses
	// ("where") or the whole statement (""), not descending into subqueries when topLevel. Computed on
	// demand: only required_columns needs it.
	columns func(context string, topLevel bool) []colRef
	// equalities lists, per top-level WHERE clause (one per SELECT of a union, or the UPDATE's or
	// DELETE's), its conjuncts column = literal; a SELECT without WHERE has an empty entry. Computed on
	// demand: only required_column_values needs it.
	equalities func() [][]equality
}

// analyze gathers the facts of a statement parsed by Vitess (the MySQL dialect).
func analyze(st sqlparser.Statement) *facts {
	f := &facts{op: operation(st)}
	if ddl, ok := st.(sqlparser.DDLStatement); ok && f.op == "CREATE" {
		f.replaces = ddl.GetIsReplace()
	}
	cteNames := map[string]bool{}
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *sqlparser.CommonTableExpr:
			cteNames[strings.ToLower(x.ID.String())] = true
		case *sqlparser.AliasedTableExpr:
			if tn, ok := x.Expr.(sqlparser.TableName); ok {
				f.tables = append(f.tables, tableRef{schema: tn.Qualifier.String(), name: tn.Name.String()})
			}
		case *sqlparser.JoinTableExpr:
			f.joins++
		case *sqlparser.Union:
			f.unions++
		}
		return true, nil
	}, st)
	if ddl, ok := st.(sqlparser.DDLStatement); ok {
		for _, tn := range append(append([]sqlparser.TableName{ddl.GetTable()}, ddl.GetFromTables()...), ddl.GetToTables()...) {
			if !tn.IsEmpty() {
				f.tables = append(f.tables, tableRef{schema: tn.Qualifier.String(), name: tn.Name.String()})
			}
		}
	}
	f.tables = withoutCTEs(f.tables, cteNames)
	f.depth = subqueryDepth(st)
	var selects []*sqlparser.Select
	var where []sqlparser.Expr
	var limit *sqlparser.Limit
	switch s := st.(type) {
	case *sqlparser.Select:
		f.isSelect, f.filtered = true, true
		limit = s.Limit
		selects = []*sqlparser.Select{s}
	case *sqlparser.Union:
		f.isSelect, f.filtered = true, true
		limit = s.Limit
		selects = unionSelects(s, nil)
	case *sqlparser.Update:
		f.filtered = true
		f.hasWhere = s.Where != nil
		if s.Where != nil {
			where = append(where, s.Where.Expr)
		}
	case *sqlparser.Delete:
		f.filtered = true
		f.hasWhere = s.Where != nil
		if s.Where != nil {
			where = append(where, s.Where.Expr)
		}
	}
	for _, sel := range selects {
		if sel.Where != nil {
			where = append(where, sel.Where.Expr)
		} else {
			where = append(where, nil)
		}
	}
	if limit != nil && limit.Rowcount != nil {
		f.limit.hasRowcount = true
		f.limit.rowcount, f.limit.rowcountOK = limitValue(limit.Rowcount)
		f.limit.offsetOK = true
		if limit.Offset != nil {
			f.limit.offset, f.limit.offsetOK = limitValue(limit.Offset)
		}
	}
	f.columns = func(context string, topLevel bool) []colRef {
		var cols []*sqlparser.ColName
		switch context {
		case "select":
			for _, sel := range selects {
				cols = append(cols, columns(sel.SelectExprs, topLevel)...)
			}
		case "where":
			for _, w := range where {
				if w != nil {
					cols = append(cols, columns(w, topLevel)...)
				}
			}
		default:
			cols = columns(st, topLevel)
		}
		out := make([]colRef, len(cols))
		for i, c := range cols {
			out[i] = colRef{qualifier: c.Qualifier.Name.String(), name: c.Name.String()}
		}
		return out
	}
	f.equalities = func() [][]equality {
		out := make([][]equality, len(where))
		for i, w := range where {
			if w == nil {
				continue
			}
			for _, c := range conjuncts(w, nil) {
				cmp, ok := c.(*sqlparser.ComparisonExpr)
				if !ok || cmp.Operator != sqlparser.EqualOp {
					continue
				}
				for _, pair := range [2][2]sqlparser.Expr{{cmp.Left, cmp.Right}, {cmp.Right, cmp.Left}} {
					cn, isCol := pair[0].(*sqlparser.ColName)
					val, isLit := literalText(pair[1])
					if isCol && isLit {
						out[i] = append(out[i], equality{colRef{cn.Qualifier.Name.String(), cn.Name.String()}, val})
					}
				}
			}
		}
		return out
	}
	return f
}

// withoutCTEs drops the unqualified tables that name a common table expression of the statement.
func withoutCTEs(tables []tableRef, cteNames map[string]bool) []tableRef {
	if len(cteNames) == 0 {
		return tables
	}
	kept := tables[:0]
	for _, t := range tables {
		if t.schema == "" && cteNames[strings.ToLower(t.name)] {
			continue
		}
		kept = append(kept, t)
	}
	return kept
}

func unionSelects(u *sqlparser.Union, out []*sqlparser.Select) []*sqlparser.Select {
	for _, side := range []sqlparser.TableStatement{u.Left, u.Right} {
		switch x := side.(type) {
		case *sqlparser.Select:
			out = append(out, x)
		case *sqlparser.Union:
			out = unionSelects(x, out)
		}
	}
	return out
}

// subqueryDepth is the deepest nesting of subqueries and derived tables under n.
func subqueryDepth(n sqlparser.SQLNode) int {
	d := 0
	_ = sqlparser.Walk(func(c sqlparser.SQLNode) (bool, error) {
		if c == n {
			return true, nil
		}
		switch x := c.(type) {
		case *sqlparser.Subquery:
			d = max(d, 1+subqueryDepth(x.Select))
			return false, nil
		case *sqlparser.DerivedTable:
			d = max(d, 1+subqueryDepth(x.Select))
			return false, nil
		}
		return true, nil
	}, n)
	return d
}

// limitValue reads a literal LIMIT or OFFSET; ok is false for anything but a whole number.
func limitValue(e sqlparser.Expr) (int64, bool) {
	lit, isLit := e.(*sqlparser.Literal)
	if !isLit || lit.Type != sqlparser.IntVal {
		return 0, false
	}
	n, err := strconv.ParseInt(lit.Val, 10, 64)
	return n, err == nil
}

// conjuncts splits an expression at its top-level ANDs.
func conjuncts(e sqlparser.Expr, out []sqlparser.Expr) []sqlparser.Expr {
	switch x := e.(type) {
	case *sqlparser.AndExpr:
		return conjuncts(x.Right, conjuncts(x.Left, out))
	}
	return append(out, e)
}

// literalText is the value of a literal as a string, for comparing with a context value.
func literalText(e sqlparser.Expr) (string, bool) {
	lit, ok := e.(*sqlparser.Literal)
	if !ok {
		return "", false
	}
	switch lit.Type {
	case sqlparser.StrVal, sqlparser.IntVal, sqlparser.DecimalVal, sqlparser.FloatVal:
		return lit.Val, true
	}
	return "", false
}

// columns returns the column references of node, not descending into subqueries when topLevel.
func columns(node sqlparser.SQLNode, topLevel bool) []*sqlparser.ColName {
	var out []*sqlparser.ColName
	_ = sqlparser.Walk(func(c sqlparser.SQLNode) (bool, error) {
		switch x := c.(type) {
		case *sqlparser.ColName:
			out = append(out, x)
		case *sqlparser.Subquery, *sqlparser.DerivedTable:
			return !topLevel, nil
		}
		return true, nil
	}, node)
	return out
}
