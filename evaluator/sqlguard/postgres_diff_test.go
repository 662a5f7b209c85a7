//go:build cgo

package sqlguard

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// pgFactsView is everything the checks can ask of a statement's facts, the lazy ones evaluated in
// every column context, for comparing two implementations.
type pgFactsView struct {
	Op                         string
	Tables                     []tableRef
	Joins, Unions, Depth       int
	HasWhere, Filtered, IsSelt bool
	Limit                      limitFacts
	Columns                    map[string][]colRef
	Equalities                 [][]equality
}

// Tables and columns are compared as sets: protobuf-go ranges over a message's fields in an order
// that changes from build to build (on purpose), so the oracle's order is not stable; the checks use
// them as sets.
func viewFacts(f *facts) pgFactsView {
	v := pgFactsView{Op: f.op, Tables: f.tables, Joins: f.joins, Unions: f.unions, Depth: f.depth,
		HasWhere: f.hasWhere, Filtered: f.filtered, IsSelt: f.isSelect, Limit: f.limit, Columns: map[string][]colRef{}}
	v.Tables = slices.SortedFunc(slices.Values(f.tables), func(a, b tableRef) int {
		return cmp.Or(cmp.Compare(a.schema, b.schema), cmp.Compare(a.name, b.name))
	})
	for _, ctx := range []string{"select", "where", ""} {
		for _, top := range []bool{true, false} {
			if cols := f.columns(ctx, top); len(cols) > 0 {
				v.Columns[fmt.Sprintf("%s/%v", ctx, top)] = slices.SortedFunc(slices.Values(cols), func(a, b colRef) int {
					return cmp.Or(cmp.Compare(a.qualifier, b.qualifier), cmp.Compare(a.name, b.name))
				})
			}
		}
	}
	v.Equalities = f.equalities()
	for i, e := range v.Equalities {
		if len(e) == 0 {
			v.Equalities[i] = nil
		}
	}
	return v
}

// comparePGFacts parses q with the JSON reader and with the protobuf oracle and reports any difference
// in the operations, the parse error or the facts.
func comparePGFacts(t *testing.T, q string) {
	t.Helper()
	ops, fs, err := parsePostgres(q)
	wantOps, wantFs, wantErr := oracleParsePostgres(q)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: error %v, oracle %v", q, err, wantErr)
	}
	if !reflect.DeepEqual(ops, wantOps) {
		t.Fatalf("%q: operations %v, oracle %v", q, ops, wantOps)
	}
	for i := range fs {
		got, want := viewFacts(fs[i]), viewFacts(wantFs[i])
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q statement %d:\n got    %+v\n oracle %+v", q, i, got, want)
		}
	}
}

// pgFactQueries exercise the node kinds the facts come from: statement kinds, tables (schema-qualified,
// in every clause), joins, subqueries, set operations, CTEs, UPDATE/DELETE with and without WHERE,
// LIMIT forms, tenant predicates with casts, escapes in names and strings.
var pgFactQueries = []string{
	typicalQuery,
	"SELECT 1",
	"SELECT * FROM app.users u WHERE u.tenant_id = 'acme'",
	"SELECT * FROM cat.app.users",
	"SELECT a.x, b.y FROM a JOIN b ON a.id = b.id LEFT JOIN c USING (id) CROSS JOIN d, e NATURAL FULL JOIN f",
	"SELECT * FROM (SELECT * FROM (SELECT id FROM t) x) y WHERE id IN (SELECT id FROM u WHERE EXISTS (SELECT 1 FROM v))",
	"SELECT * FROM t, LATERAL (SELECT * FROM u WHERE u.id = t.id) x",
	"SELECT (SELECT max(id) FROM u) AS m, t.* FROM t",
	"SELECT a FROM t UNION SELECT a FROM u UNION ALL SELECT a FROM v INTERSECT SELECT a FROM w EXCEPT SELECT a FROM x",
	"(SELECT a FROM t WHERE tenant_id = 1 LIMIT 5) UNION (SELECT a FROM u WHERE tenant_id = 1) ORDER BY a LIMIT 10 OFFSET 3",
	"WITH a AS (SELECT * FROM t WHERE id IN (SELECT id FROM u)), b AS (SELECT * FROM a) SELECT * FROM a JOIN b ON a.id = b.id",
	"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT * FROM r",
	"WITH d AS (DELETE FROM logs WHERE ts < now() RETURNING *) INSERT INTO archive SELECT * FROM d",
	`WITH "A" AS (SELECT 1) SELECT * FROM "A", a`,
	"UPDATE users SET admin = true",
	"UPDATE app.users u SET admin = true FROM roles r WHERE r.uid = u.id AND u.tenant_id = 'acme'::text",
	"UPDATE t SET a = (SELECT max(b) FROM u) WHERE t.tenant_id = CAST('acme' AS varchar)",
	"DELETE FROM orders o",
	"DELETE FROM orders o USING customers c WHERE o.cid = c.id AND o.tenant_id = 42",
	"DELETE FROM t WHERE id IN (SELECT id FROM u) RETURNING *",
	"INSERT INTO audit (a) VALUES (1) ON CONFLICT DO NOTHING",
	"INSERT INTO app.audit (a, b) SELECT x, y FROM src WHERE tenant_id = 'acme'",
	"INSERT INTO t VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET b = excluded.b WHERE t.a > 0",
	"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = s.a WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.a)",
	"VALUES (1), (2)",
	"SELECT * FROM (VALUES (1), (2)) v(a)",
	"SELECT * FROM t LIMIT ALL", "SELECT * FROM t LIMIT NULL", "SELECT * FROM t LIMIT 0", "SELECT * FROM t LIMIT $1 OFFSET $2",
	"SELECT * FROM t LIMIT 99999999999999999999", "SELECT * FROM t LIMIT 10 OFFSET 99999999999999999999",
	"SELECT * FROM t LIMIT 1.5", "SELECT * FROM t LIMIT '7'", "SELECT * FROM t LIMIT -5", "SELECT * FROM t OFFSET 5",
	"SELECT * FROM t FETCH FIRST 5000 ROWS ONLY", "SELECT * FROM t FETCH FIRST ROW WITH TIES",
	"SELECT * FROM t WHERE tenant_id = 0 AND b = -3 AND c = 1.50 AND d = 'x'::text::varchar AND 'y' = e AND f = NULL AND g = true",
	"SELECT * FROM t WHERE tenant_id = '' AND x.y.z = 1 AND t.* IS NOT NULL",
	"SELECT * FROM t WHERE (a = 1 AND (b = 2 AND c = 3)) AND NOT d = 4 OR e = 5",
	"SELECT * FROM t WHERE a = 1 AND b IN (1, 2) AND c BETWEEN 1 AND 2 AND d LIKE 'x%' AND e <> 3 AND f OPERATOR(pg_catalog.=) 4",
	`SELECT "Weird ""name""", 'it''s', E'tab\there\nnew <x> \\ \u00e9' FROM "My Table" WHERE "Col" = 'a"b\c'`,
	"SELECT $$it's; DROP TABLE users$$",
	"SELECT * FROM \"tab\tname\".\"a<b>c\" t WHERE t.\"x\\y\" = E'\\t\\n\\r\\b\\f\\x01<>\\\\\"é' AND t.\"q\"\"q\" = 'ok'",
	"SELECT 1; DROP TABLE users; SELECT 2",
	"DROP TABLE app.users, logs", "DROP VIEW IF EXISTS v", "DROP INDEX CONCURRENTLY i", "DROP SEQUENCE s", "DROP MATERIALIZED VIEW m",
	"DROP FOREIGN TABLE f", "DROP SCHEMA s CASCADE", "DROP FUNCTION f(int)", "DROP TABLE a.b.c", "DROP DATABASE d", "DROP ROLE r",
	"TRUNCATE t, app.logs", "LOCK TABLE t IN ACCESS EXCLUSIVE MODE", "COPY users TO STDOUT", "COPY (SELECT * FROM t) TO STDOUT",
	"GRANT SELECT ON users TO eve", "REVOKE ALL ON app.users FROM eve", "GRANT admin TO eve", "REVOKE admin FROM eve",
	"CREATE TABLE x AS SELECT * FROM t", "CREATE TABLE app.x (id int REFERENCES app.y(id), b text) INHERITS (z)",
	"CREATE FOREIGN TABLE ft (a int) SERVER s", "CREATE VIEW v AS SELECT * FROM t JOIN u ON t.id = u.id",
	"CREATE INDEX i ON app.t (a)", "CREATE SEQUENCE s", "CREATE SCHEMA s", "CREATE DATABASE d", "CREATE ROLE r",
	"CREATE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql", "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()",
	"CREATE POLICY p ON t USING (tenant_id = current_setting('app.tenant'))", "CREATE TYPE c AS (a int)", "CREATE TYPE e AS ENUM ('a')",
	"CREATE DOMAIN d AS int", "CREATE RULE r AS ON INSERT TO t DO INSTEAD NOTHING", "CREATE EXTENSION pgcrypto", "CREATE AGGREGATE a (int) (sfunc = f, stype = int)",
	"ALTER TABLE app.t ADD COLUMN c int", "ALTER TABLE t RENAME TO u", "ALTER SEQUENCE s RESTART", "ALTER DATABASE d SET x = 1",
	"ALTER ROLE r LOGIN", "ALTER TABLE t SET SCHEMA s", "ALTER TABLE t OWNER TO r", "ALTER TYPE e ADD VALUE 'b'", "ALTER SYSTEM SET x = 1",
	"ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO r", "ALTER POLICY p ON t USING (true)",
	"SET search_path = app", "SHOW search_path", "EXPLAIN SELECT * FROM t", "EXPLAIN ANALYZE DELETE FROM t", "CALL p(1)",
	"BEGIN", "COMMIT", "ROLLBACK", "VACUUM t", "ANALYZE t", "VACUUM ANALYZE t", "PREPARE q AS SELECT * FROM t WHERE id = $1",
	"EXECUTE q(1)", "DEALLOCATE q", "LISTEN c", "NOTIFY c", "DISCARD ALL", "DO $$ BEGIN END $$", "REFRESH MATERIALIZED VIEW m",
	"SELECT * INTO newt FROM t", "SELECT * FROM t FOR UPDATE OF t", "SELECT * FROM ONLY t", "SELECT * FROM t TABLESAMPLE SYSTEM (10)",
	"SELECT * FROM generate_series(1, 10) g, unnest(ARRAY[1]) u", "SELECT * FROM ROWS FROM (f(), g())",
	"SELECT * FROM xmltable('/r' PASSING '<r/>' COLUMNS a int)", "SELECT * FROM json_table('[]', '$[*]' COLUMNS (a int PATH '$'))",
	"SELECT count(*) FILTER (WHERE a > 0) OVER (PARTITION BY b) FROM t GROUP BY ROLLUP (b) HAVING count(*) > (SELECT 1)",
	"SELECT CASE WHEN a = 1 THEN (SELECT 1) ELSE 2 END, ARRAY(SELECT 1), a = ANY (SELECT b FROM u) FROM t",
	"SELECT DISTINCT ON (a) a FROM t ORDER BY a LIMIT 10",
	"TABLE t", "SELECT", "SELECT FROM t",
	// the postgres cases of testdata/cases
	"SELECT o.id FROM orders o WHERE o.tenant_id = 'acme'::text AND o.total > 10::numeric FETCH FIRST 20 ROWS ONLY",
	"DELETE FROM public.users RETURNING id",
}

// TestPostgresFactsMatchOracle: the JSON reader finds the same facts as the protobuf walk it replaced,
// on the queries above and those of every postgres test.
func TestPostgresFactsMatchOracle(t *testing.T) {
	qs := append([]string(nil), pgFactQueries...)
	for _, c := range ruleCases {
		qs = append(qs, c.query)
	}
	for _, q := range qs {
		comparePGFacts(t, q)
	}
}

// FuzzPostgresFactsMatchOracle compares the JSON reader with the protobuf oracle on arbitrary text.
func FuzzPostgresFactsMatchOracle(f *testing.F) {
	for _, q := range pgFactQueries {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		comparePGFacts(t, q)
	})
}
