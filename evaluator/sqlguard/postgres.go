//go:build cgo

package sqlguard

import (
	"strconv"
	"strings"

	"github.com/pganalyze/pg_query_go/v6/parser"
)

// postgresAvailable: this build has the PostgreSQL parser (libpg_query, through cgo).
const postgresAvailable = true

// parsePostgres parses query with PostgreSQL's own grammar (libpg_query, PostgreSQL 17) and returns
// the operation and facts of each statement. A text with no statement (empty, comments only) is a
// parse error, as in the MySQL dialect. A panic in the parser's Go side is a parse error, never a crash.
//
// The tree comes as pg_query's JSON (pgjson.go), read without building Go messages: libpg_query
// writes JSON several times faster than protobuf, and the facts need only a few fields of it.
func parsePostgres(query string) (ops []string, fs []*facts, err error) {
	defer func() {
		if r := recover(); r != nil {
			ops, fs, err = nil, nil, ErrParse
		}
	}()
	js, perr := parser.ParseToJSON(query)
	if perr != nil {
		return nil, nil, ErrParse
	}
	d, derr := readPGJSON(js)
	if derr != nil {
		return nil, nil, ErrParse
	}
	stmts := d.member(0, "stmts")
	if stmts == pgNone || d.vals[stmts].kind != pgArray {
		return nil, nil, ErrParse
	}
	for raw := d.vals[stmts].first; raw != pgNone; raw = d.vals[raw].next {
		typ, n := d.node(d.member(raw, "stmt"))
		if n == pgNone {
			continue
		}
		op := pgOperation(d, typ, n)
		ops = append(ops, op)
		fs = append(fs, analyzePG(d, op, typ, n))
	}
	if len(ops) == 0 {
		return nil, nil, ErrParse
	}
	return ops, fs, nil
}

// pgOperation names the kind of a PostgreSQL statement (its node type typ, its fields n) with the
// operation names of the config.
func pgOperation(d *pgDoc, typ string, n int32) string {
	switch typ {
	case "SelectStmt":
		return "SELECT"
	case "InsertStmt":
		return "INSERT"
	case "UpdateStmt":
		return "UPDATE"
	case "DeleteStmt":
		return "DELETE"
	case "CreateStmt", "CreateTableAsStmt", "ViewStmt", "IndexStmt", "CreateSchemaStmt",
		"CreatedbStmt", "CreateFunctionStmt", "CreateSeqStmt", "CreateExtensionStmt",
		"CreateTrigStmt", "CreateRoleStmt", "CreatePolicyStmt", "CompositeTypeStmt",
		"CreateEnumStmt", "CreateDomainStmt", "RuleStmt", "CreateForeignTableStmt", "DefineStmt":
		return "CREATE"
	case "AlterTableStmt", "AlterSeqStmt", "AlterDatabaseStmt", "AlterDatabaseSetStmt",
		"AlterRoleStmt", "AlterObjectSchemaStmt", "AlterOwnerStmt", "AlterEnumStmt",
		"AlterDomainStmt", "AlterFunctionStmt", "AlterExtensionStmt", "AlterPolicyStmt",
		"AlterSystemStmt", "AlterDefaultPrivilegesStmt", "AlterTypeStmt":
		return "ALTER"
	case "DropStmt", "DropdbStmt", "DropRoleStmt", "DropOwnedStmt", "DropTableSpaceStmt":
		return "DROP"
	case "TruncateStmt":
		return "TRUNCATE"
	case "RenameStmt":
		return "RENAME"
	case "GrantStmt", "GrantRoleStmt":
		// A false boolean is left out of the JSON, as protobuf leaves out defaults.
		if d.text(d.member(n, "is_grant")) == "true" {
			return "GRANT"
		}
		return "REVOKE"
	case "VariableSetStmt":
		return "SET"
	case "VariableShowStmt":
		return "SHOW"
	case "ExplainStmt":
		return "EXPLAIN"
	case "CallStmt":
		return "CALL"
	case "CopyStmt":
		return "COPY"
	case "TransactionStmt":
		return "TRANSACTION"
	case "LockStmt":
		return "LOCK"
	case "VacuumStmt":
		if d.text(d.member(n, "is_vacuumcmd")) != "true" {
			return "ANALYZE"
		}
	case "PrepareStmt":
		return "PREPARE"
	case "ExecuteStmt":
		return "EXECUTE"
	}
	return "OTHER"
}

// pgWalk gathers the facts found anywhere in a statement's tree: tables, joins, set operations and
// the subquery depth, in one walk.
type pgWalk struct {
	d        *pgDoc
	f        *facts
	cteNames map[string]bool
}

// value walks value i, at level subqueries deep; key is its member name in its parent.
func (w *pgWalk) value(i int32, key string, level int) {
	d := w.d
	switch d.vals[i].kind {
	case pgArray:
		for c := d.vals[i].first; c != pgNone; c = d.vals[c].next {
			w.value(c, "", level)
		}
	case pgObject:
		if typ, n := d.node(i); n != pgNone {
			w.message(typ, n, level)
			return
		}
		// A message written without its type (a field whose type is fixed): SelectStmt's larg and
		// rarg, and the RangeVar fields (relation, rel, sequence, ...), known by their relname.
		switch {
		case key == "larg" || key == "rarg":
			w.message("SelectStmt", i, level)
		case d.member(i, "relname") != pgNone:
			w.message("RangeVar", i, level)
		default:
			w.message("", i, level)
		}
	}
}

// message walks the fields n of a message of type typ.
func (w *pgWalk) message(typ string, n int32, level int) {
	d, f := w.d, w.f
	body := ""
	switch typ {
	case "RangeVar":
		f.tables = append(f.tables, tableRef{schema: d.text(d.member(n, "schemaname")), name: d.text(d.member(n, "relname"))})
	case "JoinExpr":
		f.joins++
	case "SelectStmt":
		if isSetOp(d, n) {
			f.unions++
		}
	case "DropStmt":
		f.tables = append(f.tables, droppedTables(d, n)...)
	case "SubLink":
		body = "subselect"
	case "RangeSubselect":
		body = "subquery"
	case "CommonTableExpr":
		if w.cteNames == nil {
			w.cteNames = map[string]bool{}
		}
		w.cteNames[strings.ToLower(d.text(d.member(n, "ctename")))] = true
		body = "ctequery"
	}
	if body != "" {
		// A subquery (expression subquery, FROM subquery, CTE body): its body is one level deeper,
		// the rest of the node (a SubLink's test expression, for instance) stays at this level.
		f.depth = max(f.depth, level+1)
	}
	for c := d.vals[n].first; c != pgNone; c = d.vals[c].next {
		k := d.key(c)
		if body != "" && k == body {
			w.value(c, k, level+1)
		} else {
			w.value(c, k, level)
		}
	}
}

// analyzePG gathers the facts of one PostgreSQL statement: its operation op, node type typ, fields n.
func analyzePG(d *pgDoc, op, typ string, n int32) *facts {
	f := &facts{op: op}
	// CREATE OR REPLACE (a view, function, procedure, trigger or rule): "replace" is true, left out when false.
	f.replaces = op == "CREATE" && d.text(d.member(n, "replace")) == "true"
	w := pgWalk{d: d, f: f}
	w.message(typ, n, 0)
	f.tables = withoutCTEs(f.tables, w.cteNames)
	var selects []int32 // the SelectStmts' fields
	var where []int32   // the WHERE clauses (pgNone for a SELECT without one)
	switch typ {
	case "SelectStmt":
		if !isSetOp(d, n) && d.member(n, "valuesLists") != pgNone {
			break // VALUES (...): a row list, nothing to filter or limit (as in the MySQL dialect)
		}
		f.isSelect, f.filtered = true, true
		f.limit = pgLimit(d, n)
		selects = setLeaves(d, n, nil)
		for _, leaf := range selects {
			where = append(where, d.member(leaf, "whereClause"))
		}
	case "UpdateStmt", "DeleteStmt":
		f.filtered = true
		if wc := d.member(n, "whereClause"); wc != pgNone {
			f.hasWhere, where = true, []int32{wc}
		}
	}
	stmt := n
	f.columns = func(context string, topLevel bool) []colRef {
		var out []colRef
		switch context {
		case "select":
			for _, s := range selects {
				if tl := d.member(s, "targetList"); tl != pgNone {
					out = pgColumns(d, tl, topLevel, out)
				}
			}
		case "where":
			for _, wc := range where {
				if wc != pgNone {
					out = pgColumns(d, wc, topLevel, out)
				}
			}
		default:
			out = pgColumns(d, stmt, topLevel, out)
		}
		return out
	}
	f.equalities = func() [][]equality {
		out := make([][]equality, len(where))
		for i, wc := range where {
			if wc == pgNone {
				continue
			}
			for _, c := range pgConjuncts(d, wc, nil) {
				out[i] = append(out[i], pgEqualities(d, c)...)
			}
		}
		return out
	}
	return f
}

// droppedTables lists the tables, views, sequences and indexes a DROP names (their names are lists of
// strings, not RangeVars).
func droppedTables(d *pgDoc, n int32) []tableRef {
	switch d.text(d.member(n, "removeType")) {
	case "OBJECT_TABLE", "OBJECT_VIEW", "OBJECT_MATVIEW", "OBJECT_SEQUENCE", "OBJECT_INDEX", "OBJECT_FOREIGN_TABLE":
	default:
		return nil
	}
	objects := d.member(n, "objects")
	if objects == pgNone || d.vals[objects].kind != pgArray {
		return nil
	}
	var out []tableRef
	for o := d.vals[objects].first; o != pgNone; o = d.vals[o].next {
		var parts []string
		if items := d.member(d.nodeOf(o, "List"), "items"); items != pgNone && d.vals[items].kind == pgArray {
			for it := d.vals[items].first; it != pgNone; it = d.vals[it].next {
				parts = append(parts, d.text(d.member(d.nodeOf(it, "String"), "sval")))
			}
		}
		switch len(parts) {
		case 0:
		case 1:
			out = append(out, tableRef{name: parts[0]})
		default:
			out = append(out, tableRef{schema: parts[len(parts)-2], name: parts[len(parts)-1]})
		}
	}
	return out
}

// setLeaves lists the plain SELECTs (their fields) of a set operation (UNION, INTERSECT, EXCEPT), or
// s itself. larg and rarg are SelectStmts written without their type.
func setLeaves(d *pgDoc, s int32, out []int32) []int32 {
	if s == pgNone || d.vals[s].kind != pgObject {
		return out
	}
	if !isSetOp(d, s) {
		return append(out, s)
	}
	return setLeaves(d, d.member(s, "rarg"), setLeaves(d, d.member(s, "larg"), out))
}

// isSetOp reports whether SelectStmt fields s are a set operation (op absent is SETOP_NONE).
func isSetOp(d *pgDoc, s int32) bool {
	op := d.member(s, "op")
	return op != pgNone && d.text(op) != "SETOP_NONE"
}

// pgLimit reads LIMIT (or FETCH FIRST) and OFFSET. LIMIT ALL and LIMIT NULL mean no limit.
func pgLimit(d *pgDoc, s int32) limitFacts {
	var l limitFacts
	count := d.member(s, "limitCount")
	if count == pgNone || d.text(d.member(d.nodeOf(count, "A_Const"), "isnull")) == "true" {
		return l
	}
	l.hasRowcount = true
	l.rowcount, l.rowcountOK = pgWholeNumber(d, count)
	l.offsetOK = true
	if off := d.member(s, "limitOffset"); off != pgNone {
		l.offset, l.offsetOK = pgWholeNumber(d, off)
	}
	return l
}

// pgWholeNumber reads an integer constant (a large one comes as a numeric string).
func pgWholeNumber(d *pgDoc, n int32) (int64, bool) {
	c := d.nodeOf(n, "A_Const")
	if c == pgNone {
		return 0, false
	}
	if v := d.member(c, "ival"); v != pgNone {
		return pgInt(d, v), true
	}
	if v := d.member(c, "fval"); v != pgNone {
		i, err := strconv.ParseInt(d.text(d.member(v, "fval")), 10, 64)
		return i, err == nil
	}
	return 0, false
}

// pgInt reads an Integer's fields ({"ival":N}, or {} for 0: defaults are left out, as in protobuf).
func pgInt(d *pgDoc, v int32) int64 {
	i, _ := strconv.ParseInt(d.text(d.member(v, "ival")), 10, 32)
	return i
}

// pgColumns appends the column references under value n, not descending into subqueries when topLevel.
func pgColumns(d *pgDoc, n int32, topLevel bool, out []colRef) []colRef {
	switch d.vals[n].kind {
	case pgArray:
		for c := d.vals[n].first; c != pgNone; c = d.vals[c].next {
			out = pgColumns(d, c, topLevel, out)
		}
	case pgObject:
		fields := n
		if typ, f := d.node(n); f != pgNone {
			switch typ {
			case "ColumnRef":
				if c, ok := pgColRef(d, f); ok {
					out = append(out, c)
				}
				return out
			case "SubLink", "RangeSubselect", "CommonTableExpr":
				if topLevel {
					return out
				}
			}
			fields = f
		}
		for c := d.vals[fields].first; c != pgNone; c = d.vals[c].next {
			out = pgColumns(d, c, topLevel, out)
		}
	}
	return out
}

// pgColRef reads a column reference's fields (name, or qualifier.name; "*" is not a column).
func pgColRef(d *pgDoc, c int32) (colRef, bool) {
	fields := d.member(c, "fields")
	if fields == pgNone || d.vals[fields].kind != pgArray {
		return colRef{}, false
	}
	var last, before int32 = pgNone, pgNone
	for e := d.vals[fields].first; e != pgNone; e = d.vals[e].next {
		before, last = last, e
	}
	if last == pgNone {
		return colRef{}, false
	}
	name := d.nodeOf(last, "String")
	if name == pgNone {
		return colRef{}, false
	}
	ref := colRef{name: d.text(d.member(name, "sval"))}
	if before != pgNone {
		ref.qualifier = d.text(d.member(d.nodeOf(before, "String"), "sval"))
	}
	return ref, true
}

// pgConjuncts splits an expression at its top-level ANDs.
func pgConjuncts(d *pgDoc, n int32, out []int32) []int32 {
	if b := d.nodeOf(n, "BoolExpr"); b != pgNone && d.text(d.member(b, "boolop")) == "AND_EXPR" {
		if args := d.member(b, "args"); args != pgNone && d.vals[args].kind == pgArray {
			for a := d.vals[args].first; a != pgNone; a = d.vals[a].next {
				out = pgConjuncts(d, a, out)
			}
		}
		return out
	}
	return append(out, n)
}

// pgEqualities reads a conjunct column = literal (either side; casts around either are looked through).
func pgEqualities(d *pgDoc, n int32) []equality {
	e := d.nodeOf(n, "A_Expr")
	if e == pgNone || d.text(d.member(e, "kind")) != "AEXPR_OP" {
		return nil
	}
	name := d.member(e, "name")
	if name == pgNone || d.vals[name].kind != pgArray {
		return nil
	}
	op := d.vals[name].first
	if op == pgNone || d.vals[op].next != pgNone || d.text(d.member(d.nodeOf(op, "String"), "sval")) != "=" {
		return nil
	}
	lexpr, rexpr := d.member(e, "lexpr"), d.member(e, "rexpr")
	var out []equality
	for _, pair := range [2][2]int32{{lexpr, rexpr}, {rexpr, lexpr}} {
		cr := d.nodeOf(pgUncast(d, pair[0]), "ColumnRef")
		if cr == pgNone {
			continue
		}
		col, ok := pgColRef(d, cr)
		val, isLit := pgLiteral(d, pgUncast(d, pair[1]))
		if ok && isLit {
			out = append(out, equality{col, val})
		}
	}
	return out
}

// pgUncast looks through TypeCasts.
func pgUncast(d *pgDoc, n int32) int32 {
	for {
		tc := d.nodeOf(n, "TypeCast")
		if tc == pgNone {
			return n
		}
		n = d.member(tc, "arg")
	}
}

// pgLiteral is a string or number constant as text.
func pgLiteral(d *pgDoc, n int32) (string, bool) {
	c := d.nodeOf(n, "A_Const")
	if c == pgNone || d.text(d.member(c, "isnull")) == "true" {
		return "", false
	}
	if v := d.member(c, "sval"); v != pgNone {
		return d.text(d.member(v, "sval")), true
	}
	if v := d.member(c, "ival"); v != pgNone {
		return strconv.FormatInt(pgInt(d, v), 10), true
	}
	if v := d.member(c, "fval"); v != pgNone {
		return d.text(d.member(v, "fval")), true
	}
	return "", false
}
