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

// facts are what the checks need to know about one statement.
type facts struct {
	op       string
	tables   []tableRef
	joins    int
	unions   int
	depth    int
	hasWhere bool // UPDATE and DELETE
	filtered bool // SELECT, UPDATE or DELETE: the kind required_column_values applies to
	selects  []*sqlparser.Select
	where    []sqlparser.Expr // top-level WHERE clauses (one per SELECT of a union, or the UPDATE/DELETE's)
	limit    *sqlparser.Limit
	hasLimit bool
	stmt     sqlparser.Statement
	isSelect bool
	cteNames map[string]bool
}

// analyze gathers the facts of a parsed statement.
func analyze(st sqlparser.Statement) *facts {
	f := &facts{op: operation(st), stmt: st, cteNames: map[string]bool{}}
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *sqlparser.CommonTableExpr:
			f.cteNames[strings.ToLower(x.ID.String())] = true
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
	if len(f.cteNames) > 0 {
		kept := f.tables[:0]
		for _, t := range f.tables {
			if t.schema == "" && f.cteNames[strings.ToLower(t.name)] {
				continue
			}
			kept = append(kept, t)
		}
		f.tables = kept
	}
	f.depth = subqueryDepth(st)
	switch s := st.(type) {
	case *sqlparser.Select:
		f.isSelect, f.filtered = true, true
		f.limit, f.hasLimit = s.Limit, s.Limit != nil
		f.selects = []*sqlparser.Select{s}
	case *sqlparser.Union:
		f.isSelect, f.filtered = true, true
		f.limit, f.hasLimit = s.Limit, s.Limit != nil
		f.selects = unionSelects(s, nil)
	case *sqlparser.Update:
		f.filtered = true
		f.hasWhere = s.Where != nil
		if s.Where != nil {
			f.where = append(f.where, s.Where.Expr)
		}
	case *sqlparser.Delete:
		f.filtered = true
		f.hasWhere = s.Where != nil
		if s.Where != nil {
			f.where = append(f.where, s.Where.Expr)
		}
	}
	for _, sel := range f.selects {
		if sel.Where != nil {
			f.where = append(f.where, sel.Where.Expr)
		} else {
			f.where = append(f.where, nil)
		}
	}
	return f
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
