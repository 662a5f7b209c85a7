package sqlguard

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/guardrail-control/guard/evaluator"
)

// Operations are the statement kinds allowed_operations and blocked_operations name. DDL stands for
// CREATE, ALTER, DROP, TRUNCATE and RENAME; DCL for GRANT and REVOKE. CREATE_OR_REPLACE is the CREATE
// OR REPLACE form alone (a view, function, procedure, trigger or rule that replaces an existing one): a
// CREATE statement, which blocked_operations can name without blocking every CREATE.
var Operations = []string{"SELECT", "INSERT", "REPLACE", "UPDATE", "DELETE", "CREATE", "CREATE_OR_REPLACE", "ALTER", "DROP", "TRUNCATE",
	"RENAME", "GRANT", "REVOKE", "SET", "USE", "SHOW", "EXPLAIN", "CALL", "LOAD", "COPY", "TRANSACTION", "LOCK", "ANALYZE",
	"PREPARE", "EXECUTE", "OTHER", "DDL", "DCL"}

// opCreateOrReplace names the CREATE OR REPLACE statements in blocked_operations.
const opCreateOrReplace = "CREATE_OR_REPLACE"

// The dialects: which grammar reads the query.
const (
	dialectMySQL    = "mysql"
	dialectPostgres = "postgres"
	dialectAuto     = "auto"
)

var (
	ddlOps = []string{"CREATE", "ALTER", "DROP", "TRUNCATE", "RENAME"}
	dclOps = []string{"GRANT", "REVOKE"}
)

func configSchema() json.RawMessage {
	names := map[string]any{"type": "array", "maxItems": 1000, "items": map[string]any{"type": "string", "minLength": 1, "maxLength": 256}}
	ops := map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"type": "string", "minLength": 1, "maxLength": 32}}
	posInt := map[string]any{"type": "integer", "minimum": 1}
	nonNegInt := map[string]any{"type": "integer", "minimum": 0}
	with := func(m map[string]any, desc string) map[string]any {
		out := map[string]any{"description": desc}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	doc := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query_field":            with(map[string]any{"type": "string", "minLength": 1, "maxLength": 256}, "Dotted path, inside the selected value, to the SQL text (for instance input.query with the selector path \"*\"). Default: the selected value is the SQL text."),
			"context_field":          with(map[string]any{"type": "string", "minLength": 1, "maxLength": 256, "default": "context"}, "Dotted path, inside the selected value, to the object required_column_values reads (default context, with the selector path \"*\")."),
			"dialect":                with(map[string]any{"type": "string", "enum": []any{"mysql", "postgres", "auto"}, "default": "mysql"}, "SQL dialect: mysql (Vitess' MySQL 8 grammar), postgres (PostgreSQL 17's own grammar, libpg_query; needs a build with cgo) or auto (when the database is not known: MySQL's grammar, then PostgreSQL's when the build has cgo, then MySQL's with the lenient rewrites of SQLite, SQL Server and PostgreSQL forms; the query is judged by the first that parses it, and by both MySQL's and PostgreSQL's when they split or comment it differently)."),
			"on_parse_error":         with(map[string]any{"type": "string", "enum": []any{"match", "error", "scan"}, "default": "match"}, "What text that does not parse as SQL means: match (a violation), error (the control's on_error decides) or scan (judged by a token scan that finds destructive statements outside strings and comments and fails closed on anything it cannot read; see scan.go. With rules that need the parse tree configured, scan is match)."),
			"allow_multi_statements": with(map[string]any{"type": "boolean", "default": true}, "Whether several statements separated by ; are allowed."),
			"max_statements":         with(posInt, "Most statements allowed in one query."),
			"allowed_operations":     with(ops, "Statement kinds allowed (SELECT, INSERT, UPDATE, DELETE, CREATE, CREATE_OR_REPLACE, ALTER, DROP, TRUNCATE, RENAME, GRANT, REVOKE, SET, USE, SHOW, EXPLAIN, CALL, LOAD, COPY, TRANSACTION, LOCK, ANALYZE, PREPARE, EXECUTE, OTHER; DDL and DCL stand for their groups); any other kind is a violation."),
			"blocked_operations":     with(ops, "Statement kinds that are a violation (same names as allowed_operations)."),
			"block_ddl":              with(map[string]any{"type": "boolean", "default": false}, "Block CREATE, ALTER, DROP, TRUNCATE and RENAME."),
			"block_dcl":              with(map[string]any{"type": "boolean", "default": false}, "Block GRANT and REVOKE."),
			"allowed_tables":         with(names, "Tables that may be touched (name or schema.name); any other table is a violation."),
			"blocked_tables":         with(names, "Tables that may not be touched (name or schema.name)."),
			"allowed_schemas":        with(names, "Schemas (databases) that may be named; a table qualified with another schema is a violation."),
			"blocked_schemas":        with(names, "Schemas (databases) that may not be named."),
			"required_columns":       with(names, "Columns that must be referenced by SELECT, UPDATE and DELETE statements."),
			"column_presence_logic":  with(map[string]any{"type": "string", "enum": []any{"any", "all"}, "default": "any"}, "required_columns: any one of them, or all."),
			"column_context":         with(map[string]any{"type": "string", "enum": []any{"select", "where"}}, "Where required_columns must appear: select (the select list) or where (the WHERE clause); default anywhere."),
			"column_context_scope":   with(map[string]any{"type": "string", "enum": []any{"top_level", "all"}, "default": "all"}, "top_level: only the statement's own clause; all: subqueries too."),
			"required_column_values": with(map[string]any{"type": "object", "maxProperties": 64, "additionalProperties": map[string]any{"type": "string", "minLength": 1, "maxLength": 256}}, "Column (or table.column) to context key: SELECT, UPDATE and DELETE statements must have a top-level WHERE conjunct column = literal whose value equals the context value (a tenant filter)."),
			"require_where":          with(map[string]any{"type": "boolean", "default": false}, "UPDATE and DELETE statements without WHERE are a violation."),
			"require_limit":          with(map[string]any{"type": "boolean", "default": false}, "SELECT statements without LIMIT are a violation."),
			"max_limit":              with(posInt, "Largest LIMIT allowed (a LIMIT that is not a number is a violation)."),
			"max_result_window":      with(posInt, "Largest LIMIT + OFFSET allowed."),
			"max_subquery_depth":     with(nonNegInt, "Deepest nesting of subqueries (and derived tables) allowed."),
			"max_joins":              with(nonNegInt, "Most JOINs allowed in one statement."),
			"max_union_count":        with(nonNegInt, "Most UNION operations allowed in one statement."),
			"case_sensitive":         with(map[string]any{"type": "boolean", "default": false}, "Compare table, schema and column names case-sensitively."),
		},
		"additionalProperties": false,
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return b
}

// settings is the parsed config.
type settings struct {
	queryField, contextField  []string
	parseErrorIsMatch         bool
	parseErrorScan            bool // on_parse_error "scan": unparsable text is judged by scan.go
	allowMulti                bool
	maxStatements             int
	allowedOps, blockedOps    map[string]bool
	allowedTables             map[string]bool
	blockedTables             map[string]bool
	allowedSchemas            map[string]bool
	blockedSchemas            map[string]bool
	requiredColumns           []string
	columnsAll                bool
	columnContext             string
	columnTopLevel            bool
	requiredValues            map[string]string // column ref -> context key
	requireWhere              bool
	requireLimit              bool
	maxLimit, maxWindow       int64
	maxDepth, maxJoins, maxUn int // -1: no limit
	caseSensitive             bool
	dialect                   string // dialectMySQL, dialectPostgres or dialectAuto
}

func (s *settings) fold(name string) string {
	if s.caseSensitive {
		return name
	}
	return strings.ToLower(name)
}

// parseConfig reads a config that passed the schema, checking what the schema cannot express.
func parseConfig(config map[string]any) (*settings, error) {
	s := &settings{parseErrorIsMatch: true, allowMulti: true, contextField: []string{"context"},
		maxDepth: -1, maxJoins: -1, maxUn: -1, dialect: dialectMySQL}
	if b, ok := config["case_sensitive"].(bool); ok {
		s.caseSensitive = b
	}
	var problems []evaluator.FieldError
	bad := func(field, code, msg string) {
		problems = append(problems, evaluator.FieldError{Field: field, Code: code, Message: msg})
	}
	nameSet := func(k string) map[string]bool {
		list, ok := evaluator.StringList(config[k])
		if !ok {
			return nil
		}
		set := make(map[string]bool, len(list))
		for i, n := range list {
			if strings.TrimSpace(n) == "" {
				bad(fmt.Sprintf("%s.%d", k, i), "pattern", "must not be blank")
				continue
			}
			set[s.fold(n)] = true
		}
		return set
	}
	opSet := func(k string) map[string]bool {
		list, ok := evaluator.StringList(config[k])
		if !ok {
			return nil
		}
		set := map[string]bool{}
		for i, op := range list {
			op = strings.ToUpper(strings.TrimSpace(op))
			if !slices.Contains(Operations, op) {
				bad(fmt.Sprintf("%s.%d", k, i), "enum", "is not a known operation")
				continue
			}
			switch op {
			case "DDL":
				for _, o := range ddlOps {
					set[o] = true
				}
			case "DCL":
				for _, o := range dclOps {
					set[o] = true
				}
			default:
				set[op] = true
			}
		}
		return set
	}
	intOf := func(k string, lo float64) (int64, bool) {
		v, present := config[k]
		if !present || v == nil {
			return 0, false
		}
		f, ok := evaluator.Number(v)
		if !ok || f < lo || f != math.Trunc(f) || f > 1e15 {
			bad(k, "range", fmt.Sprintf("must be a whole number, %d or more", int(lo)))
			return 0, false
		}
		return int64(f), true
	}
	if v, ok := config["query_field"].(string); ok {
		if s.queryField, ok = splitPath(v); !ok {
			bad("query_field", "invalid_path", "must be names separated by dots")
		}
	}
	if v, ok := config["context_field"].(string); ok {
		if s.contextField, ok = splitPath(v); !ok {
			bad("context_field", "invalid_path", "must be names separated by dots")
		}
	}
	switch v, _ := config["dialect"].(string); v {
	case dialectAuto:
		s.dialect = dialectAuto // without cgo: MySQL's grammar, then the lenient rewrites (autoparse.go)
	case dialectPostgres:
		s.dialect = dialectPostgres
		if !postgresAvailable {
			bad("dialect", "unavailable", "postgres needs a guard built with cgo (the PostgreSQL parser is libpg_query, C code)")
		}
	}
	if v, ok := config["on_parse_error"].(string); ok {
		s.parseErrorIsMatch = v != "error"
		s.parseErrorScan = v == "scan"
	}
	if v, ok := config["allow_multi_statements"].(bool); ok {
		s.allowMulti = v
	}
	if n, ok := intOf("max_statements", 1); ok {
		if !s.allowMulti {
			bad("max_statements", "conflict", "applies only when allow_multi_statements is true")
		}
		s.maxStatements = int(n)
	}
	s.allowedOps, s.blockedOps = opSet("allowed_operations"), opSet("blocked_operations")
	if len(s.allowedOps) > 0 && len(s.blockedOps) > 0 {
		bad("blocked_operations", "conflict", "cannot be used together with allowed_operations")
	}
	if b, _ := config["block_ddl"].(bool); b {
		if s.blockedOps == nil {
			s.blockedOps = map[string]bool{}
		}
		for _, o := range ddlOps {
			s.blockedOps[o] = true
		}
	}
	if b, _ := config["block_dcl"].(bool); b {
		if s.blockedOps == nil {
			s.blockedOps = map[string]bool{}
		}
		for _, o := range dclOps {
			s.blockedOps[o] = true
		}
	}
	s.allowedTables, s.blockedTables = nameSet("allowed_tables"), nameSet("blocked_tables")
	if len(s.allowedTables) > 0 && len(s.blockedTables) > 0 {
		bad("blocked_tables", "conflict", "cannot be used together with allowed_tables")
	}
	s.allowedSchemas, s.blockedSchemas = nameSet("allowed_schemas"), nameSet("blocked_schemas")
	if len(s.allowedSchemas) > 0 && len(s.blockedSchemas) > 0 {
		bad("blocked_schemas", "conflict", "cannot be used together with allowed_schemas")
	}
	if list, ok := evaluator.StringList(config["required_columns"]); ok {
		for _, c := range list {
			s.requiredColumns = append(s.requiredColumns, s.fold(c))
		}
	}
	s.columnsAll = config["column_presence_logic"] == "all"
	s.columnContext, _ = config["column_context"].(string)
	s.columnTopLevel = config["column_context_scope"] == "top_level"
	if m, ok := config["required_column_values"].(map[string]any); ok {
		s.requiredValues = map[string]string{}
		for col, key := range m {
			k, _ := key.(string)
			left, right, qualified := strings.Cut(col, ".")
			if strings.TrimSpace(col) == "" || strings.TrimSpace(k) == "" || (qualified && (strings.TrimSpace(left) == "" || strings.TrimSpace(right) == "" || strings.Contains(right, "."))) {
				bad("required_column_values."+col, "invalid", "must map a column or table.column to a non-empty context key")
				continue
			}
			s.requiredValues[s.fold(col)] = k
		}
	}
	s.requireWhere, _ = config["require_where"].(bool)
	s.requireLimit, _ = config["require_limit"].(bool)
	s.maxLimit, _ = intOf("max_limit", 1)
	s.maxWindow, _ = intOf("max_result_window", 1)
	for k, dst := range map[string]*int{"max_subquery_depth": &s.maxDepth, "max_joins": &s.maxJoins, "max_union_count": &s.maxUn} {
		if n, ok := intOf(k, 0); ok {
			*dst = int(n)
		}
	}
	if len(problems) > 0 {
		return nil, &evaluator.ConfigError{Problems: problems}
	}
	return s, nil
}

// scanJudges reports whether the token scan can judge every configured rule: the operation blocks,
// require_where and the statement counts. Rules that need the parse tree cannot be judged on tokens.
func (s *settings) scanJudges() bool {
	return len(s.allowedOps) == 0 && len(s.allowedTables) == 0 && len(s.blockedTables) == 0 &&
		len(s.allowedSchemas) == 0 && len(s.blockedSchemas) == 0 && len(s.requiredColumns) == 0 &&
		len(s.requiredValues) == 0 && !s.requireLimit && s.maxLimit == 0 && s.maxWindow == 0 &&
		s.maxDepth < 0 && s.maxJoins < 0 && s.maxUn < 0
}

func splitPath(p string) ([]string, bool) {
	segs := strings.Split(p, ".")
	for _, s := range segs {
		if s == "" {
			return nil, false
		}
	}
	return segs, true
}
