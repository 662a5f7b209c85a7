//go:build cgo

package sqlguard

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// This file keeps the first implementation of the postgres dialect, over pg_query's protobuf tree
// (pg.Parse and a reflective walk), as an oracle: the differential tests check that the JSON reader
// of postgres.go finds the same facts.

// oracleParsePostgres parses query with PostgreSQL's own grammar (libpg_query, PostgreSQL 17) and returns
// the operation and facts of each statement. A text with no statement (empty, comments only) is a
// parse error, as in the MySQL dialect. A panic in the parser's Go side is a parse error, never a crash.
func oracleParsePostgres(query string) (ops []string, fs []*facts, err error) {
	defer func() {
		if r := recover(); r != nil {
			ops, fs, err = nil, nil, ErrParse
		}
	}()
	tree, perr := pg.Parse(query)
	if perr != nil || len(tree.GetStmts()) == 0 {
		return nil, nil, ErrParse
	}
	for _, raw := range tree.GetStmts() {
		n := raw.GetStmt()
		if n == nil {
			continue
		}
		ops = append(ops, oraclePgOperation(n))
		fs = append(fs, oracleAnalyzePG(n))
	}
	if len(ops) == 0 {
		return nil, nil, ErrParse
	}
	return ops, fs, nil
}

// oraclePgOperation names the kind of a PostgreSQL statement with the operation names of the config.
func oraclePgOperation(n *pg.Node) string {
	switch x := n.GetNode().(type) {
	case *pg.Node_SelectStmt:
		return "SELECT"
	case *pg.Node_InsertStmt:
		return "INSERT"
	case *pg.Node_UpdateStmt:
		return "UPDATE"
	case *pg.Node_DeleteStmt:
		return "DELETE"
	case *pg.Node_CreateStmt, *pg.Node_CreateTableAsStmt, *pg.Node_ViewStmt, *pg.Node_IndexStmt, *pg.Node_CreateSchemaStmt,
		*pg.Node_CreatedbStmt, *pg.Node_CreateFunctionStmt, *pg.Node_CreateSeqStmt, *pg.Node_CreateExtensionStmt,
		*pg.Node_CreateTrigStmt, *pg.Node_CreateRoleStmt, *pg.Node_CreatePolicyStmt, *pg.Node_CompositeTypeStmt,
		*pg.Node_CreateEnumStmt, *pg.Node_CreateDomainStmt, *pg.Node_RuleStmt, *pg.Node_CreateForeignTableStmt, *pg.Node_DefineStmt:
		return "CREATE"
	case *pg.Node_AlterTableStmt, *pg.Node_AlterSeqStmt, *pg.Node_AlterDatabaseStmt, *pg.Node_AlterDatabaseSetStmt,
		*pg.Node_AlterRoleStmt, *pg.Node_AlterObjectSchemaStmt, *pg.Node_AlterOwnerStmt, *pg.Node_AlterEnumStmt,
		*pg.Node_AlterDomainStmt, *pg.Node_AlterFunctionStmt, *pg.Node_AlterExtensionStmt, *pg.Node_AlterPolicyStmt,
		*pg.Node_AlterSystemStmt, *pg.Node_AlterDefaultPrivilegesStmt, *pg.Node_AlterTypeStmt:
		return "ALTER"
	case *pg.Node_DropStmt, *pg.Node_DropdbStmt, *pg.Node_DropRoleStmt, *pg.Node_DropOwnedStmt, *pg.Node_DropTableSpaceStmt:
		return "DROP"
	case *pg.Node_TruncateStmt:
		return "TRUNCATE"
	case *pg.Node_RenameStmt:
		return "RENAME"
	case *pg.Node_GrantStmt:
		return oracleGrantOrRevoke(x.GrantStmt.GetIsGrant())
	case *pg.Node_GrantRoleStmt:
		return oracleGrantOrRevoke(x.GrantRoleStmt.GetIsGrant())
	case *pg.Node_VariableSetStmt:
		return "SET"
	case *pg.Node_VariableShowStmt:
		return "SHOW"
	case *pg.Node_ExplainStmt:
		return "EXPLAIN"
	case *pg.Node_CallStmt:
		return "CALL"
	case *pg.Node_CopyStmt:
		return "COPY"
	case *pg.Node_TransactionStmt:
		return "TRANSACTION"
	case *pg.Node_LockStmt:
		return "LOCK"
	case *pg.Node_VacuumStmt:
		if !x.VacuumStmt.GetIsVacuumcmd() {
			return "ANALYZE"
		}
	case *pg.Node_PrepareStmt:
		return "PREPARE"
	case *pg.Node_ExecuteStmt:
		return "EXECUTE"
	}
	return "OTHER"
}

func oracleGrantOrRevoke(isGrant bool) string {
	if isGrant {
		return "GRANT"
	}
	return "REVOKE"
}

// oracleWalkPG calls visit on every message under m, m included, in depth-first order; visit returns whether
// to descend into the message's fields. pg_query's tree is protobuf, so one reflective walk covers every
// node type.
func oracleWalkPG(m protoreflect.Message, visit func(protoreflect.ProtoMessage) bool) {
	if !m.IsValid() || !visit(m.Interface()) {
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				oracleWalkPG(l.Get(i).Message(), visit)
			}
			return true
		}
		oracleWalkPG(v.Message(), visit)
		return true
	})
}

func oracleWalkNode(n *pg.Node, visit func(protoreflect.ProtoMessage) bool) {
	if n != nil {
		oracleWalkPG(n.ProtoReflect(), visit)
	}
}

// oracleAnalyzePG gathers the facts of one PostgreSQL statement.
func oracleAnalyzePG(n *pg.Node) *facts {
	f := &facts{op: oraclePgOperation(n)}
	cteNames := map[string]bool{}
	// One walk gathers tables, joins, set operations and the subquery depth: the reflective walk is
	// the analysis' main cost. level is the number of subqueries around the node.
	var walk func(m protoreflect.Message, level int)
	visit := func(level int) func(protoreflect.ProtoMessage) bool {
		return func(m protoreflect.ProtoMessage) bool {
			var body *pg.Node
			switch x := m.(type) {
			case *pg.RangeVar:
				f.tables = append(f.tables, tableRef{schema: x.GetSchemaname(), name: x.GetRelname()})
				return true
			case *pg.JoinExpr:
				f.joins++
				return true
			case *pg.SelectStmt:
				if x.GetOp() != pg.SetOperation_SETOP_NONE {
					f.unions++
				}
				return true
			case *pg.DropStmt:
				f.tables = append(f.tables, oracleDroppedTables(x)...)
				return true
			case *pg.SubLink:
				body = x.GetSubselect()
			case *pg.RangeSubselect:
				body = x.GetSubquery()
			case *pg.CommonTableExpr:
				cteNames[strings.ToLower(x.GetCtename())] = true
				body = x.GetCtequery()
			default:
				return true
			}
			// A subquery (expression subquery, FROM subquery, CTE body): its body is one level deeper,
			// the rest of the node (a SubLink's test expression, for instance) stays at this level.
			f.depth = max(f.depth, level+1)
			if body == nil {
				return true
			}
			walk(body.ProtoReflect(), level+1)
			m.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
				switch {
				case fd.Kind() != protoreflect.MessageKind:
				case fd.IsList():
					l := v.List()
					for i := 0; i < l.Len(); i++ {
						walk(l.Get(i).Message(), level)
					}
				case v.Message().Interface() != protoreflect.ProtoMessage(body):
					walk(v.Message(), level)
				}
				return true
			})
			return false
		}
	}
	walk = func(m protoreflect.Message, level int) { oracleWalkPG(m, visit(level)) }
	walk(n.ProtoReflect(), 0)
	f.tables = withoutCTEs(f.tables, cteNames)
	var selects []*pg.SelectStmt
	var where []*pg.Node
	switch x := n.GetNode().(type) {
	case *pg.Node_SelectStmt:
		s := x.SelectStmt
		if s.GetOp() == pg.SetOperation_SETOP_NONE && len(s.GetValuesLists()) > 0 {
			break // VALUES (...): a row list, nothing to filter or limit (as in the MySQL dialect)
		}
		f.isSelect, f.filtered = true, true
		f.limit = oraclePgLimit(s)
		selects = oracleSetLeaves(s, nil)
		for _, leaf := range selects {
			where = append(where, leaf.GetWhereClause())
		}
	case *pg.Node_UpdateStmt:
		f.filtered = true
		if w := x.UpdateStmt.GetWhereClause(); w != nil {
			f.hasWhere, where = true, []*pg.Node{w}
		}
	case *pg.Node_DeleteStmt:
		f.filtered = true
		if w := x.DeleteStmt.GetWhereClause(); w != nil {
			f.hasWhere, where = true, []*pg.Node{w}
		}
	}
	f.columns = func(context string, topLevel bool) []colRef {
		var out []colRef
		switch context {
		case "select":
			for _, s := range selects {
				for _, t := range s.GetTargetList() {
					out = oraclePgColumns(t, topLevel, out)
				}
			}
		case "where":
			for _, w := range where {
				out = oraclePgColumns(w, topLevel, out)
			}
		default:
			out = oraclePgColumns(n, topLevel, out)
		}
		return out
	}
	f.equalities = func() [][]equality {
		out := make([][]equality, len(where))
		for i, w := range where {
			for _, c := range oraclePgConjuncts(w, nil) {
				out[i] = append(out[i], oraclePgEqualities(c)...)
			}
		}
		return out
	}
	return f
}

// oracleDroppedTables lists the tables, views, sequences and indexes a DROP names (their names are lists of
// strings, not RangeVars).
func oracleDroppedTables(d *pg.DropStmt) []tableRef {
	switch d.GetRemoveType() {
	case pg.ObjectType_OBJECT_TABLE, pg.ObjectType_OBJECT_VIEW, pg.ObjectType_OBJECT_MATVIEW, pg.ObjectType_OBJECT_SEQUENCE,
		pg.ObjectType_OBJECT_INDEX, pg.ObjectType_OBJECT_FOREIGN_TABLE:
	default:
		return nil
	}
	var out []tableRef
	for _, o := range d.GetObjects() {
		var parts []string
		for _, item := range o.GetList().GetItems() {
			parts = append(parts, item.GetString_().GetSval())
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

// oracleSetLeaves lists the plain SELECTs of a set operation (UNION, INTERSECT, EXCEPT), or s itself.
func oracleSetLeaves(s *pg.SelectStmt, out []*pg.SelectStmt) []*pg.SelectStmt {
	if s == nil {
		return out
	}
	if s.GetOp() == pg.SetOperation_SETOP_NONE {
		return append(out, s)
	}
	return oracleSetLeaves(s.GetRarg(), oracleSetLeaves(s.GetLarg(), out))
}

// oraclePgLimit reads LIMIT (or FETCH FIRST) and OFFSET. LIMIT ALL and LIMIT NULL mean no limit.
func oraclePgLimit(s *pg.SelectStmt) limitFacts {
	var l limitFacts
	count := s.GetLimitCount()
	if count == nil || count.GetAConst().GetIsnull() {
		return l
	}
	l.hasRowcount = true
	l.rowcount, l.rowcountOK = oraclePgWholeNumber(count)
	l.offsetOK = true
	if off := s.GetLimitOffset(); off != nil {
		l.offset, l.offsetOK = oraclePgWholeNumber(off)
	}
	return l
}

// oraclePgWholeNumber reads an integer constant (a large one comes as a numeric string).
func oraclePgWholeNumber(n *pg.Node) (int64, bool) {
	c := n.GetAConst()
	if c == nil {
		return 0, false
	}
	switch v := c.GetVal().(type) {
	case *pg.A_Const_Ival:
		return int64(v.Ival.GetIval()), true
	case *pg.A_Const_Fval:
		i, err := strconv.ParseInt(v.Fval.GetFval(), 10, 64)
		return i, err == nil
	}
	return 0, false
}

// oraclePgColumns appends the column references under n, not descending into subqueries when topLevel.
func oraclePgColumns(n *pg.Node, topLevel bool, out []colRef) []colRef {
	oracleWalkNode(n, func(m protoreflect.ProtoMessage) bool {
		switch x := m.(type) {
		case *pg.ColumnRef:
			if c, ok := oraclePgColRef(x); ok {
				out = append(out, c)
			}
			return false
		case *pg.SubLink, *pg.RangeSubselect, *pg.CommonTableExpr:
			return !topLevel
		}
		return true
	})
	return out
}

// oraclePgColRef reads a column reference (name, or qualifier.name; "*" is not a column).
func oraclePgColRef(c *pg.ColumnRef) (colRef, bool) {
	fields := c.GetFields()
	if len(fields) == 0 {
		return colRef{}, false
	}
	name := fields[len(fields)-1].GetString_()
	if name == nil {
		return colRef{}, false
	}
	ref := colRef{name: name.GetSval()}
	if len(fields) >= 2 {
		ref.qualifier = fields[len(fields)-2].GetString_().GetSval()
	}
	return ref, true
}

// oraclePgConjuncts splits an expression at its top-level ANDs.
func oraclePgConjuncts(n *pg.Node, out []*pg.Node) []*pg.Node {
	if n == nil {
		return out
	}
	if b := n.GetBoolExpr(); b != nil && b.GetBoolop() == pg.BoolExprType_AND_EXPR {
		for _, a := range b.GetArgs() {
			out = oraclePgConjuncts(a, out)
		}
		return out
	}
	return append(out, n)
}

// oraclePgEqualities reads a conjunct column = literal (either side; casts around either are looked through).
func oraclePgEqualities(n *pg.Node) []equality {
	e := n.GetAExpr()
	if e == nil || e.GetKind() != pg.A_Expr_Kind_AEXPR_OP || len(e.GetName()) != 1 || e.GetName()[0].GetString_().GetSval() != "=" {
		return nil
	}
	var out []equality
	for _, pair := range [2][2]*pg.Node{{e.GetLexpr(), e.GetRexpr()}, {e.GetRexpr(), e.GetLexpr()}} {
		cr := oracleUncast(pair[0]).GetColumnRef()
		if cr == nil {
			continue
		}
		col, ok := oraclePgColRef(cr)
		val, isLit := oraclePgLiteral(oracleUncast(pair[1]))
		if ok && isLit {
			out = append(out, equality{col, val})
		}
	}
	return out
}

func oracleUncast(n *pg.Node) *pg.Node {
	for n.GetTypeCast() != nil {
		n = n.GetTypeCast().GetArg()
	}
	return n
}

// oraclePgLiteral is a string or number constant as text.
func oraclePgLiteral(n *pg.Node) (string, bool) {
	c := n.GetAConst()
	if c == nil || c.GetIsnull() {
		return "", false
	}
	switch v := c.GetVal().(type) {
	case *pg.A_Const_Sval:
		return v.Sval.GetSval(), true
	case *pg.A_Const_Ival:
		return strconv.FormatInt(int64(v.Ival.GetIval()), 10), true
	case *pg.A_Const_Fval:
		return v.Fval.GetFval(), true
	}
	return "", false
}
