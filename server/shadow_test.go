package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
)

// withTests returns data with tests attached.
func withTests(d map[string]any, tests ...map[string]any) map[string]any {
	d["tests"] = tests
	return d
}

func ctest(name, input, expect string) map[string]any {
	return map[string]any{"name": name, "stage": "pre", "step": map[string]any{"type": "llm", "name": "chat", "input": input}, "expect": expect}
}

// TestControlTestsRunOnSave: every way of saving data runs its tests; a failing test is a 422 at
// data.tests.<i> saying what the control decided, and nothing is saved.
func TestControlTestsRunOnSave(t *testing.T) {
	ts := newTS(t)
	passing := withTests(regexData("secret", "deny"), ctest("finds it", "a secret", "match"), ctest("clean", "hello", "no_match"),
		map[string]any{"name": "denies", "stage": "pre", "step": map[string]any{"type": "llm", "input": "secret"}, "expect": map[string]any{"decision": "deny"}})
	failing := withTests(regexData("secret", "deny"), ctest("finds it", "a secret", "match"), ctest("wrong", "a secret", "no_match"))

	id := ts.createControl("c1", passing)
	got := ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d/data", id), nil)
	if n := len(got["data"].(map[string]any)["tests"].([]any)); n != 3 {
		t.Fatalf("stored data has %d tests, want 3", n)
	}
	for _, c := range []struct{ method, path string }{
		{"PUT", "/api/v1/controls"},
		{"PUT", fmt.Sprintf("/api/v1/controls/%d/data", id)},
		{"POST", "/api/v1/controls/validate"},
	} {
		body := map[string]any{"data": failing, "name": "c2"}
		if c.path != "/api/v1/controls" {
			delete(body, "name")
		}
		b := ts.expectProblem(422, "VALIDATION_ERROR", c.method, c.path, body)
		if len(b.Errors) != 1 || b.Errors[0].Field != "data.tests.1" || b.Errors[0].Code != "test_failed" ||
			b.Errors[0].Message != "expected no match; the control matched (decision deny)" {
			t.Errorf("%s %s: problems %+v, want one at data.tests.1", c.method, c.path, b.Errors)
		}
		if strings.Contains(fmt.Sprint(b), "wrong") {
			t.Errorf("%s %s: the problem echoes the test's name: %+v", c.method, c.path, b)
		}
	}
	// Nothing was saved: version 1 still.
	if v := ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d", id), nil)["version"]; v != float64(1) {
		t.Errorf("version %v after refused saves, want 1", v)
	}
	if l := ts.ok(200, "GET", "/api/v1/controls?name=c2", nil)["controls"].([]any); len(l) != 0 {
		t.Errorf("c2 was created: %v", l)
	}
}

func TestControlTestsBadInput(t *testing.T) {
	ts := newTS(t)
	cases := []struct {
		name  string
		tests any
		field string
	}{
		{"not a list", "x", "data.tests"},
		{"no name", []any{map[string]any{"stage": "pre", "step": map[string]any{"type": "llm"}, "expect": "match"}}, "data.tests.0.name"},
		{"bad stage", []any{map[string]any{"name": "a", "stage": "during", "step": map[string]any{"type": "llm"}, "expect": "match"}}, "data.tests.0.stage"},
		{"bad expect", []any{map[string]any{"name": "a", "stage": "pre", "step": map[string]any{"type": "llm"}, "expect": "maybe"}}, "data.tests.0.expect"},
		{"bad decision", []any{map[string]any{"name": "a", "stage": "pre", "step": map[string]any{"type": "llm"}, "expect": map[string]any{"decision": "warn"}}}, "data.tests.0.expect.decision"},
		{"unknown field", []any{map[string]any{"name": "a", "stage": "pre", "step": map[string]any{"type": "llm"}, "expect": "match", "control": "x"}}, "data.tests.0.control"},
		{"step without type", []any{map[string]any{"name": "a", "stage": "pre", "step": map[string]any{"name": "x"}, "expect": "match"}}, "data.tests.0.step.type"},
		{"duplicate names", []any{ctest("a", "x", "no_match"), ctest("a", "y", "no_match")}, "data.tests.1.name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := regexData("secret", "deny")
			d["tests"] = c.tests
			b := ts.expectProblem(422, "VALIDATION_ERROR", "POST", "/api/v1/controls/validate", map[string]any{"data": d})
			found := false
			for _, p := range b.Errors {
				found = found || p.Field == c.field
			}
			if !found {
				t.Errorf("problems %+v, want one at %s", b.Errors, c.field)
			}
		})
	}
	d := regexData("secret", "deny")
	d["mode"] = "dry-run"
	if b := ts.expectProblem(422, "VALIDATION_ERROR", "POST", "/api/v1/controls/validate", map[string]any{"data": d}); b.Errors[0].Field != "data.mode" {
		t.Errorf("problems %+v, want data.mode", b.Errors)
	}
	id := ts.createControl("c", regexData("secret", "deny"))
	if b := ts.expectProblem(422, "VALIDATION_ERROR", "PATCH", fmt.Sprintf("/api/v1/controls/%d", id), map[string]any{"mode": "off"}); b.Errors[0].Field != "mode" {
		t.Errorf("problems %+v, want mode", b.Errors)
	}
	empty := ts.createControl("empty", nil)
	if b := ts.expectProblem(422, "VALIDATION_ERROR", "PATCH", fmt.Sprintf("/api/v1/controls/%d", empty), map[string]any{"mode": "shadow"}); b.Errors[0].Field != "mode" {
		t.Errorf("problems %+v, want mode", b.Errors)
	}
}

// TestControlTestEndpoint: POST /controls/test answers every outcome, passing or not.
func TestControlTestEndpoint(t *testing.T) {
	ts := newTS(t)
	d := withTests(regexData("secret", "deny", "pre"), ctest("finds it", "a secret", "match"), ctest("wrong", "a secret", "no_match"),
		map[string]any{"name": "post", "stage": "post", "step": map[string]any{"type": "llm", "input": "secret"}, "expect": "no_match"})
	got := ts.ok(200, "POST", "/api/v1/controls/test", map[string]any{"data": d})
	if got["passed"] != false {
		t.Errorf("passed = %v, want false", got["passed"])
	}
	want := []struct {
		name, outcome, decision string
		passed                  bool
	}{{"finds it", "match", "deny", true}, {"wrong", "match", "deny", false}, {"post", "not_applied", "allow", true}}
	tests := got["tests"].([]any)
	if len(tests) != len(want) {
		t.Fatalf("tests %v", tests)
	}
	for i, w := range want {
		o := tests[i].(map[string]any)
		if o["name"] != w.name || o["outcome"] != w.outcome || o["decision"] != w.decision || o["passed"] != w.passed {
			t.Errorf("test %d = %v, want %+v", i, o, w)
		}
	}
	if msg, _ := tests[1].(map[string]any)["message"].(string); msg != "expected no match; the control matched (decision deny)" {
		t.Errorf("message %q", msg)
	}
	bad := regexData("(", "deny")
	ts.expectProblem(422, "VALIDATION_ERROR", "POST", "/api/v1/controls/test", map[string]any{"data": bad})
}

// TestShadowControlEndToEnd: a shadow deny control never changes the answer, is recorded as shadow
// events with what it would have decided, is counted apart in statistics, and once promoted (PATCH mode
// enforce) denies.
func TestShadowControlEndToEnd(t *testing.T) {
	ts, rec := fullServer(t)
	ts.initAgent("bot")
	shadow := regexData("secret", "deny")
	shadow["mode"] = "shadow"
	id := ts.createControl("would-block", shadow)
	ts.link("bot", id)
	logc := ts.createControl("logger", regexData("secret", "log"))
	ts.link("bot", logc)

	for _, input := range []string{"a secret", "hello", "another secret"} {
		res := ts.eval("bot", "pre", input)
		if decision(res) != "allow" {
			t.Fatalf("%q: decision %s, want allow", input, decision(res))
		}
		for _, list := range []string{"matches", "errors", "non_matches"} {
			for _, cr := range res[list].([]any) {
				if cr.(map[string]any)["control_name"] == "would-block" {
					t.Fatalf("%q: the shadow control is in %s: %v", input, list, res)
				}
			}
		}
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	page := ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{"shadow": true})
	evs := page["events"].([]any)
	if page["total"] != float64(3) {
		t.Fatalf("shadow events: %v", page)
	}
	denied := 0
	for _, e := range evs {
		ev := e.(map[string]any)
		if ev["shadow"] != true || ev["control_name"] != "would-block" || ev["action"] != "deny" {
			t.Errorf("shadow event %v", ev)
		}
		if ev["matched"] == true {
			denied++
		}
	}
	if denied != 2 {
		t.Errorf("%d shadow events matched, want 2", denied)
	}
	if n := ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{"shadow": false})["total"]; n != float64(3) {
		t.Errorf("enforced events: %v, want 3 (the log control)", n)
	}
	st := ts.ok(200, "GET", "/api/v1/observability/stats?agent_name=bot&time_range=24h", nil)
	if tot := st["totals"].(map[string]any); tot["execution_count"] != float64(3) {
		t.Errorf("totals %v: shadow events must not count", tot)
	}
	sh := st["shadow"].([]any)
	if len(sh) != 1 {
		t.Fatalf("shadow stats %v", st["shadow"])
	}
	s0 := sh[0].(map[string]any)
	if s0["control_name"] != "would-block" || s0["shadow"] != true || s0["execution_count"] != float64(3) ||
		s0["action_counts"].(map[string]any)["deny"] != float64(2) {
		t.Errorf("shadow stats %v, want 2 denies of 3", s0)
	}
	for _, c := range st["controls"].([]any) {
		if c.(map[string]any)["control_name"] == "would-block" {
			t.Errorf("the shadow control is in controls: %v", c)
		}
	}
	cst := ts.ok(200, "GET", fmt.Sprintf("/api/v1/observability/stats/controls/%d?agent_name=bot&time_range=24h", id), nil)
	if cst["shadow"] == nil || cst["control_name"] != "would-block" {
		t.Errorf("control stats %v", cst)
	}

	// Promote.
	p := ts.ok(200, "PATCH", fmt.Sprintf("/api/v1/controls/%d", id), map[string]any{"mode": "enforce"})
	if p["version"] != float64(2) {
		t.Errorf("version after promotion %v, want 2", p["version"])
	}
	if d := ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d/data", id), nil)["data"].(map[string]any); d["mode"] != "enforce" {
		t.Errorf("data.mode %v after promotion", d["mode"])
	}
	if res := ts.eval("bot", "pre", "a secret"); decision(res) != "deny" {
		t.Errorf("after promotion: decision %s, want deny", decision(res))
	}
	// PATCH to the same mode is no new version.
	if p := ts.ok(200, "PATCH", fmt.Sprintf("/api/v1/controls/%d", id), map[string]any{"mode": "enforce"}); p["version"] != float64(2) {
		t.Errorf("version %v after a no-op mode patch", p["version"])
	}
}

// TestRestoreRunsControlTests: restoring a version runs its tests like any save. A version whose tests
// fail (written here under the API, straight into the store) cannot be restored; one that passes can.
func TestRestoreRunsControlTests(t *testing.T) {
	ts := newTS(t)
	id := ts.createControl("c", withTests(regexData("secret", "deny"), ctest("finds it", "a secret", "match"))) // v1
	bad, err := guard.ParseControlData(mustJSON(t, withTests(regexData("secret", "deny"), ctest("wrong", "a secret", "no_match"))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.st.PutControlData(context.Background(), id, bad); err != nil { // v2, never accepted by the API
		t.Fatal(err)
	}
	ts.ok(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", id), map[string]any{"data": regexData("other", "deny")}) // v3
	b := ts.expectProblem(422, "VALIDATION_ERROR", "POST", fmt.Sprintf("/api/v1/controls/%d/versions/2/restore", id), nil)
	if len(b.Errors) != 1 || b.Errors[0].Field != "data.tests.0" || b.Errors[0].Code != "test_failed" {
		t.Fatalf("problems %+v", b.Errors)
	}
	if got := ts.ok(200, "POST", fmt.Sprintf("/api/v1/controls/%d/versions/1/restore", id), nil); got["version"] != float64(4) {
		t.Fatalf("restore of version 1: %v", got)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
