package sqlguard

import (
	"reflect"
	"testing"
)

// TestLenientParse: SQL that MySQL 8 or the common dialects accept but Vitess' grammar does not is parsed
// after a rewrite, with the operations and tables the rules need; smuggled statements and clauses stay
// parse failures or violations.
func TestLenientParse(t *testing.T) {
	cfg := map[string]any{"blocked_operations": []any{"DDL", "DCL"}, "require_where": true}
	cases := []struct {
		name, query string
		want        string   // violation rule, "" for none, "parse" for a parse failure
		ops         []string // operations reported when it parses
	}{
		{"intersect", "select a from t intersect select b from u", "", []string{"SELECT"}},
		{"except", "SELECT id FROM t1 EXCEPT SELECT id FROM t2 WHERE x = 'except'", "", []string{"SELECT"}},
		{"union then except", "select a from t union select a from u except select b from v", "", []string{"SELECT"}},
		{"except inside a string is left alone", "select 'a intersect b' from t", "", []string{"SELECT"}},
		{"a table named show", "select avg(attendance) from show", "", []string{"SELECT"}},
		{"columns named key and value", "select key, value from settings where key like 'mail.%'", "", []string{"SELECT"}},
		{"stacked drop after except still blocked", "select a from t except select b from u; drop table t", "operation_blocked", nil},
		{"a statement keyword is never a name", "select * from drop", "parse", nil},
		{"injection text still fails", "x' or 1=1 intersect select 1 --", "parse", nil},
		{"delete without where after the rewrite", "delete from show", "missing_where", nil},
		{"derived table without an alias", "select count(*) from (select a from t intersect select b from u)", "", []string{"SELECT"}},
		{"derived table without an alias before where", "select * from (select id from t) where id > 1", "", []string{"SELECT"}},
		{"derived tables nested, no aliases", "select * from (select * from (select 1))", "", []string{"SELECT"}},
		{"derived table after a comma", "select * from o, (select id from p) where o.pid = 1", "", []string{"SELECT"}},
		{"derived table in a subquery", "select 1 from t where (select count(*) from (select 1 from u)) > 0", "", []string{"SELECT"}},
		{"cast to integer", "select cast(price as integer), cast(name as text) from products", "", []string{"SELECT"}},
		{"is not distinct from", "select * from t where a is not distinct from b", "", []string{"SELECT"}},
		{"is distinct from", "select * from t where a is distinct from b", "", []string{"SELECT"}},
		{"nulls last", "select name from users order by created_at desc nulls last", "", []string{"SELECT"}},
		{"full outer join", "select * from t1 full outer join t2 on t1.id = t2.id", "", []string{"SELECT"}},
		{"full join after an alias", "select a.id from accounts a full join ledgers l on l.id = a.id", "", []string{"SELECT"}},
		{"a column named rank", "select name, rank from ranking where rank <= 3", "", []string{"SELECT"}},
		{"a parenthesised expression is not a derived table", "select (1 + 2) from t)", "parse", nil},
		{"drop hidden after a derived table", "select * from (select 1); drop table t", "operation_blocked", nil},
		{"delete with a derived table, no where", "delete from t where id in (select id from (select id from u))", "", []string{"DELETE"}},
		{"an alias is not a statement", "select * from (select 1) drop table t", "parse", nil},
		{"postgres casts", "select price::numeric(10, 2), created_at::date from orders", "", []string{"SELECT"}},
		{"ilike", "select * from t where name ilike 'a%'", "", []string{"SELECT"}},
		{"on conflict do nothing", "insert into t (a) values (1) on conflict (a) do nothing", "", []string{"INSERT"}},
		{"returning", "update t set a = 1 where id = 2 returning a", "", []string{"UPDATE"}},
		{"returning does not hide a missing where", "delete from t returning id", "missing_where", nil},
		{"returning does not hide a second statement", "update t set a = 1 where id = 1 returning *; drop table t", "operation_blocked", nil},
		{"insert or replace", "insert or replace into t (a) values (1)", "", []string{"REPLACE"}},
		{"distinct on", "select distinct on (a) a, b from t order by a, b", "", []string{"SELECT"}},
		{"aggregate filter", "select count(*) filter (where active) from users", "", []string{"SELECT"}},
		{"fetch first", "select * from events order by ts fetch first 10 rows only", "", []string{"SELECT"}},
		{"interval literal", "select now() - interval '1 day'", "", []string{"SELECT"}},
		{"positional parameters", "select * from users where id = $1 and org = $2", "", []string{"SELECT"}},
		{"sql server names and top", "select top 10 [Order], [Customer Name] from [dbo].[Orders] where [Status] = 'open'", "", []string{"SELECT"}},
		{"forms inside strings are left alone", "select '::text ilike' from t where a = '$1'", "", []string{"SELECT"}},
		{"injection with a cast still fails", "1' or 1=1::int --", "parse", nil},
		{"keywords as names in a column list", "INSERT OR REPLACE INTO settings (key, value, updated_at) VALUES ('theme', 'dark', datetime('now'))", "", []string{"REPLACE"}},
		{"a statement keyword after ( is never a name", "select count(drop) from t", "parse", nil},
		// SQLite and SQL Server statements and forms, and Python's placeholders.
		{"sqlite pragma setting", "PRAGMA foreign_keys = ON;", "", []string{"SET"}},
		{"sqlite pragma read", "PRAGMA table_info(users)", "", []string{"SET"}},
		{"pragma hides no second statement", "PRAGMA foreign_keys = ON; DROP TABLE users", "operation_blocked", nil},
		{"exec of a procedure", "EXEC dbo.GetOrdersByCustomer @CustomerId = 42, @Status = N'open';", "", []string{"CALL"}},
		{"exec of a system procedure stays unparsed", "EXEC xp_cmdshell 'whoami'", "parse", nil},
		{"exec sp_executesql stays unparsed", "EXEC sp_executesql N'DROP TABLE users'", "parse", nil},
		{"exec with a statement after it", "EXEC dbo.p @a = 1 DROP TABLE users", "parse", nil},
		{"sql server declare", "DECLARE @start DATE = '2024-01-01'", "", []string{"SET"}},
		{"sql server declare hides no statement", "DECLARE @n INT = 5 DROP TABLE users", "parse", nil},
		{"sql server convert", "SELECT CONVERT(VARCHAR(10), OrderDate, 120) FROM Orders", "", []string{"SELECT"}},
		{"sql server table hint", "SELECT TOP 5 * FROM dbo.Customers WITH (NOLOCK) WHERE Country = N'France'", "", []string{"SELECT"}},
		{"sql server cross apply", "SELECT a.* FROM a CROSS APPLY (SELECT TOP 1 * FROM b WHERE b.a_id = a.id ORDER BY b.ts DESC) x", "", []string{"SELECT"}},
		{"sql server output", "INSERT INTO Logs (Msg) OUTPUT INSERTED.Id VALUES (N'hello')", "", []string{"INSERT"}},
		{"python placeholders", "UPDATE users SET name = %s WHERE id = %(user_id)s", "", []string{"UPDATE"}},
		{"a placeholder is a value, never a clause", "DELETE FROM users %s", "parse", nil},
		{"a percent in a string is left alone", "SELECT * FROM t WHERE a LIKE '%s' OR b = %s", "", []string{"SELECT"}},
	}
	e := build(t, cfg)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := eval(t, e, c.query)
			switch c.want {
			case "":
				if res.Matched {
					t.Fatalf("matched: %s %v", res.Message, res.Metadata)
				}
				if got := res.Metadata["operations"]; !reflect.DeepEqual(got, anyList(c.ops)) {
					t.Errorf("operations %v, want %v", got, c.ops)
				}
			case "parse":
				if !res.Matched || res.Metadata["parse_error"] != true {
					t.Fatalf("want a parse failure, got %v %v", res.Matched, res.Metadata)
				}
			default:
				found := false
				for _, r := range rules(res) {
					found = found || r == c.want
				}
				if !found {
					t.Fatalf("rules %v, want %s (%s)", rules(res), c.want, res.Message)
				}
			}
		})
	}
}

func anyList(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
