package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/server/problem"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

func TestHealth(t *testing.T) {
	ts := newTS(t)
	r := ts.do("GET", "/health", nil)
	m := r.obj(t)
	if r.Code != 200 || m["status"] != "healthy" || m["version"] != "test-1.2.3" || m["database"] != "ok" {
		t.Fatalf("health: %d %s", r.Code, r.Body)
	}
	if r.Header.Get(VersionHeader) != "test-1.2.3" || r.Header.Get(problem.RequestIDHeader) == "" {
		t.Fatalf("headers: %v", r.Header)
	}
}

// TestReady: GET /ready answers 200 {"status":"ready"} while the database answers, with no key even when
// authentication is on (TestStoreFailures covers the 503).
func TestReady(t *testing.T) {
	ts := newTS(t, WithAuth(true, []string{"r"}, []string{"a"}))
	r := ts.do("GET", "/ready", nil)
	if m := r.obj(t); r.Code != 200 || m["status"] != "ready" || m["database"] != "ok" || r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("ready: %d %s %v", r.Code, r.Body, r.Header)
	}
	if r := ts.do("POST", "/ready", "{}"); r.Code != 405 {
		t.Fatalf("POST /ready: %d", r.Code)
	}
}

func TestRequestID(t *testing.T) {
	ts := newTS(t)
	r := ts.do("GET", "/health", nil, "X-Request-Id", "abc-123")
	if got := r.Header.Get("X-Request-Id"); got != "abc-123" {
		t.Fatalf("kept id %q", got)
	}
	r = ts.do("GET", "/api/v1/nope", nil, "X-Request-Id", "bad id\twith spaces")
	got := r.Header.Get("X-Request-Id")
	if got == "" || strings.Contains(got, " ") {
		t.Fatalf("replaced id %q", got)
	}
	if b := r.problem(t); b.RequestID != got {
		t.Fatalf("body request_id %q, header %q", b.RequestID, got)
	}
}

func TestUnknownRouteAndMethod(t *testing.T) {
	ts := newTS(t)
	b := ts.expectProblem(404, problem.CodeNotFound, "GET", "/api/v1/nope", nil)
	if b.Instance != "/api/v1/nope" {
		t.Fatalf("instance %q", b.Instance)
	}
	ts.expectProblem(404, problem.CodeNotFound, "GET", "/", nil)
	r := ts.do("DELETE", "/api/v1/evaluation", nil)
	if r.Code != 405 || r.problem(t).ErrorCode != problem.CodeMethodNotAllowed || !strings.Contains(r.Header.Get("Allow"), "POST") {
		t.Fatalf("405: %d %v %s", r.Code, r.Header, r.Body)
	}
	if r.Header.Get(VersionHeader) == "" {
		t.Fatal("405 without version header")
	}
	ts.expectProblem(405, problem.CodeMethodNotAllowed, "POST", "/api/v1/controls/1", "{}")
}

func TestEvaluators(t *testing.T) {
	ts := newTS(t)
	m := ts.ok(200, "GET", "/api/v1/evaluators", nil)
	names := map[string]bool{}
	for key, e := range m { // the reference's shape: a map from name to info
		e := e.(map[string]any)
		if e["name"] != key {
			t.Fatalf("entry %q names %v", key, e["name"])
		}
		if ms, ok := e["timeout_ms"].(float64); !ok || ms <= 0 {
			t.Fatalf("timeout_ms: %v", e)
		}
		names[e["name"].(string)] = true
		if _, ok := e["config_schema"].(map[string]any); !ok {
			t.Fatalf("config_schema: %v", e)
		}
		if _, ok := e["requires_api_key"].(bool); !ok {
			t.Fatalf("requires_api_key: %v", e)
		}
	}
	if !names["regex"] || !names["list"] || len(names) != len(evaluator.Default.List()) {
		t.Fatalf("evaluators: %v, want exactly the registry's", names)
	}
}

func TestControlsCRUD(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ts := newTSOn(t, st)
		id := ts.createControl("block-ssn", regexData(`\d{3}-\d{2}-\d{4}`, "deny", "pre"))
		ts.expectProblem(409, problem.CodeControlNameConflict, "PUT", "/api/v1/controls", map[string]any{"name": "block-ssn"})

		c := ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d", id), nil)
		if c["name"] != "block-ssn" || c["enabled"] != true || c["data"] == nil {
			t.Fatalf("get: %v", c)
		}
		d := ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d/data", id), nil)
		if d["data"].(map[string]any)["action"].(map[string]any)["decision"] != "deny" {
			t.Fatalf("data: %v", d)
		}

		// A control without data exists disabled and has no data yet.
		empty := ts.createControl("empty", nil)
		c = ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d", empty), nil)
		if c["enabled"] != false || c["data"] != nil {
			t.Fatalf("empty: %v", c)
		}
		ts.expectProblem(404, problem.CodeNotFound, "GET", fmt.Sprintf("/api/v1/controls/%d/data", empty), nil)
		put := ts.ok(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", empty), map[string]any{"data": regexData("x", "warn")})
		if put["success"] != true || put["version"].(float64) < 2 {
			t.Fatalf("put data: %v", put)
		}

		// Patch renames and disables.
		p := ts.ok(200, "PATCH", fmt.Sprintf("/api/v1/controls/%d", empty), map[string]any{"name": "renamed", "enabled": false})
		if p["name"] != "renamed" || p["enabled"] != false {
			t.Fatalf("patch: %v", p)
		}
		ts.expectProblem(409, problem.CodeControlNameConflict, "PATCH", fmt.Sprintf("/api/v1/controls/%d", empty), map[string]any{"name": "block-ssn"})

		// List with filters and pagination.
		l := ts.ok(200, "GET", "/api/v1/controls?limit=1", nil)
		pg := l["pagination"].(map[string]any)
		if len(l["controls"].([]any)) != 1 || pg["total"].(float64) != 2 || pg["has_more"] != true || pg["next_cursor"] == nil {
			t.Fatalf("list page 1: %v", l)
		}
		first := l["controls"].([]any)[0].(map[string]any)
		if first["name"] != "renamed" { // newest first
			t.Fatalf("order: %v", first)
		}
		l2 := ts.ok(200, "GET", "/api/v1/controls?limit=1&cursor="+pg["next_cursor"].(string), nil)
		if got := l2["controls"].([]any)[0].(map[string]any)["name"]; got != "block-ssn" || l2["pagination"].(map[string]any)["has_more"] != false {
			t.Fatalf("list page 2: %v", l2)
		}
		for q, want := range map[string]int{"enabled=true": 1, "enabled=false": 1, "name=SSN": 1, "stage=pre": 2, "stage=post": 1, "step_type=llm": 2, "tag=none": 0} {
			l := ts.ok(200, "GET", "/api/v1/controls?"+q, nil)
			if got := len(l["controls"].([]any)); got != want {
				t.Errorf("filter %s: %d controls, want %d", q, got, want)
			}
		}
		for _, q := range []string{"limit=0", "limit=101", "limit=x", "enabled=yes", "stage=during", "cursor=bogus"} {
			b := ts.expectProblem(422, problem.CodeValidation, "GET", "/api/v1/controls?"+q, nil)
			if b.Errors[0].Field == "" {
				t.Errorf("%s: no field in %v", q, b.Errors)
			}
		}

		// Validate.
		ts.ok(200, "POST", "/api/v1/controls/validate", map[string]any{"data": regexData("a", "deny")})
		b := ts.expectProblem(422, problem.CodeValidation, "POST", "/api/v1/controls/validate", map[string]any{"data": map[string]any{
			"condition": map[string]any{"selector": map[string]any{"path": "input"}, "evaluator": map[string]any{"name": "regex", "config": map[string]any{}}},
			"action":    map[string]any{"decision": "explode"},
			"scope":     map[string]any{"stages": []string{"during"}},
		}})
		fields := map[string]bool{}
		for _, p := range b.Errors {
			fields[p.Field] = true
			if !strings.HasPrefix(p.Field, "data.") {
				t.Errorf("field %q lacks the data. prefix", p.Field)
			}
		}
		if len(fields) < 3 {
			t.Fatalf("every problem listed: %v", b.Errors)
		}

		// Delete.
		ts.ok(200, "DELETE", fmt.Sprintf("/api/v1/controls/%d", empty), nil)
		ts.expectProblem(404, problem.CodeControlNotFound, "GET", fmt.Sprintf("/api/v1/controls/%d", empty), nil)
		ts.expectProblem(404, problem.CodeControlNotFound, "DELETE", fmt.Sprintf("/api/v1/controls/%d", empty), nil)
		ts.createControl("renamed", nil) // the name is free again
		ts.expectProblem(422, problem.CodeValidation, "GET", "/api/v1/controls/abc", nil)
		ts.expectProblem(422, problem.CodeValidation, "GET", "/api/v1/controls/0", nil)
		ts.expectProblem(404, problem.CodeControlNotFound, "GET", "/api/v1/controls/999999", nil)
	})
}

func TestVersions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ts := newTSOn(t, st)
		id := ts.createControl("v", regexData("a", "deny"))
		ts.ok(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", id), map[string]any{"data": regexData("b", "warn")})
		ts.ok(200, "PATCH", fmt.Sprintf("/api/v1/controls/%d", id), map[string]any{"name": "v2"})
		l := ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d/versions", id), nil)
		vs := l["versions"].([]any)
		if len(vs) != 3 || vs[0].(map[string]any)["event"] != "renamed" || vs[2].(map[string]any)["event"] != "created" {
			t.Fatalf("versions: %v", l)
		}
		v1 := ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d/versions/1", id), nil)
		if v1["name"] != "v" || v1["event"] != "created" || v1["data"] == nil {
			t.Fatalf("version 1: %v", v1)
		}
		r := ts.ok(200, "POST", fmt.Sprintf("/api/v1/controls/%d/versions/1/restore", id), nil)
		if r["name"] != "v" || r["version"].(float64) != 4 {
			t.Fatalf("restore: %v", r)
		}
		ts.expectProblem(404, problem.CodeVersionNotFound, "GET", fmt.Sprintf("/api/v1/controls/%d/versions/99", id), nil)
		ts.expectProblem(404, problem.CodeVersionNotFound, "POST", fmt.Sprintf("/api/v1/controls/%d/versions/99/restore", id), nil)
		ts.expectProblem(422, problem.CodeValidation, "GET", fmt.Sprintf("/api/v1/controls/%d/versions/x", id), nil)
		ts.expectProblem(404, problem.CodeControlNotFound, "GET", "/api/v1/controls/9999/versions", nil)
		ts.expectProblem(422, problem.CodeValidation, "GET", fmt.Sprintf("/api/v1/controls/%d/versions?limit=500", id), nil)
	})
}

func TestAgents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ts := newTSOn(t, st)
		m := ts.initAgent("  Support-Bot ", map[string]any{"type": "tool", "name": "search", "input_schema": map[string]any{"type": "object"}})
		if m["created"] != true || m["agent"].(map[string]any)["agent_name"] != "support-bot" {
			t.Fatalf("init: %v", m)
		}
		if c, ok := m["controls"].([]any); !ok || len(c) != 0 {
			t.Fatalf("controls: %v", m)
		}
		// strict (default) keeps steps, adds new ones, and refuses a changed schema.
		m = ts.initAgent("support-bot", map[string]any{"type": "llm", "name": "chat"})
		if m["created"] != false {
			t.Fatalf("re-init: %v", m)
		}
		ts.expectProblem(409, problem.CodeSchemaIncompatible, "POST", "/api/v1/agents/initAgent", map[string]any{
			"agent": map[string]any{"agent_name": "support-bot"},
			"steps": []any{map[string]any{"type": "tool", "name": "search", "input_schema": map[string]any{"type": "string"}}},
		})
		g := ts.ok(200, "GET", "/api/v1/agents/SUPPORT-BOT", nil)
		if len(g["steps"].([]any)) != 2 {
			t.Fatalf("steps after strict: %v", g)
		}
		// overwrite replaces the step list.
		ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{
			"agent": map[string]any{"agent_name": "support-bot", "agent_version": "2"}, "conflict_mode": "overwrite",
			"steps": []any{map[string]any{"type": "tool", "name": "search", "input_schema": map[string]any{"type": "string"}}},
		})
		g = ts.ok(200, "GET", "/api/v1/agents/support-bot", nil)
		if len(g["steps"].([]any)) != 1 || g["agent"].(map[string]any)["agent_version"] != "2" {
			t.Fatalf("overwrite: %v", g)
		}
		b := ts.expectProblem(422, problem.CodeValidation, "POST", "/api/v1/agents/initAgent", map[string]any{
			"agent": map[string]any{"agent_name": "Bad Name!"}, "conflict_mode": "merge",
			"steps": []any{map[string]any{"type": "llm", "name": "a"}, map[string]any{"type": "llm", "name": "a"}, map[string]any{"type": "", "name": "b"}},
		})
		if len(b.Errors) != 4 {
			t.Fatalf("every problem: %v", b.Errors)
		}

		p := ts.ok(200, "PATCH", "/api/v1/agents/support-bot", map[string]any{
			"agent_description": "new", "agent_metadata": map[string]any{"team": "x"}, "remove_steps": []any{map[string]any{"type": "tool", "name": "search"}},
		})
		if p["agent"].(map[string]any)["agent_description"] != "new" || len(p["steps"].([]any)) != 0 {
			t.Fatalf("patch: %v", p)
		}
		ts.expectProblem(404, problem.CodeAgentNotFound, "PATCH", "/api/v1/agents/nobody", map[string]any{"agent_description": "x"})
		ts.expectProblem(404, problem.CodeAgentNotFound, "GET", "/api/v1/agents/nobody", nil)
		ts.expectProblem(422, problem.CodeValidation, "GET", "/api/v1/agents/bad%20name", nil)

		ts.initAgent("other")
		l := ts.ok(200, "GET", "/api/v1/agents?name=supp", nil)
		if len(l["agents"].([]any)) != 1 {
			t.Fatalf("filter: %v", l)
		}
		l = ts.ok(200, "GET", "/api/v1/agents?limit=1", nil)
		if l["agents"].([]any)[0].(map[string]any)["agent_name"] != "other" || l["pagination"].(map[string]any)["has_more"] != true {
			t.Fatalf("newest first: %v", l)
		}
		ts.expectProblem(422, problem.CodeValidation, "GET", "/api/v1/agents?cursor=zzz", nil)
	})
}

func TestLinksAndETag(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ts := newTSOn(t, st)
		ts.initAgent("a1")
		id := ts.createControl("c1", regexData("x", "deny"))
		nodata := ts.createControl("c2", nil)
		r := ts.do("GET", "/api/v1/agents/a1/controls", nil)
		tag0 := r.Header.Get("ETag")
		if r.Code != 200 || !strings.HasPrefix(tag0, `"r`) {
			t.Fatalf("etag %q: %d %s", tag0, r.Code, r.Body)
		}
		if r := ts.do("GET", "/api/v1/agents/a1/controls", nil, "If-None-Match", tag0); r.Code != http.StatusNotModified || len(r.Body) != 0 {
			t.Fatalf("304: %d %s", r.Code, r.Body)
		}
		ts.link("a1", id)
		ts.link("a1", id) // idempotent
		ts.link("a1", nodata)
		r = ts.do("GET", "/api/v1/agents/a1/controls", nil, "If-None-Match", tag0)
		m := r.obj(t)
		if r.Code != 200 || r.Header.Get("ETag") == tag0 || len(m["controls"].([]any)) != 1 {
			t.Fatalf("after link: %d %v %s", r.Code, r.Header, r.Body)
		}
		ac := m["controls"].([]any)[0].(map[string]any)
		if ac["id"] != ac["control_id"] || ac["name"] != "c1" || ac["control"] == nil {
			t.Fatalf("agent control: %v", ac)
		}
		ts.expectProblem(404, problem.CodeControlNotFound, "POST", "/api/v1/agents/a1/controls/999", nil)
		ts.expectProblem(404, problem.CodeAgentNotFound, "POST", fmt.Sprintf("/api/v1/agents/nobody/controls/%d", id), nil)
		ts.expectProblem(404, problem.CodeAgentNotFound, "GET", "/api/v1/agents/nobody/controls", nil)

		// Deleting a linked control: 409, then force.
		b := ts.expectProblem(409, problem.CodeControlInUse, "DELETE", fmt.Sprintf("/api/v1/controls/%d", id), nil)
		if !strings.Contains(b.Detail, "force") {
			t.Fatalf("detail: %q", b.Detail)
		}
		d := ts.ok(200, "DELETE", fmt.Sprintf("/api/v1/controls/%d?force=true", id), nil)
		if fmt.Sprint(d["unlinked_agents"]) != "[a1]" {
			t.Fatalf("force: %v", d)
		}
		u := ts.ok(200, "DELETE", fmt.Sprintf("/api/v1/agents/a1/controls/%d", nodata), nil)
		if u["removed"] != true {
			t.Fatalf("unlink: %v", u)
		}
		u = ts.ok(200, "DELETE", fmt.Sprintf("/api/v1/agents/a1/controls/%d", nodata), nil)
		if u["removed"] != false {
			t.Fatalf("unlink again: %v", u)
		}
	})
}

func TestEvaluationFlow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ts := newTSOn(t, st)
		ts.initAgent("bot")
		deny := ts.createControl("deny-ssn", regexData(`\d{3}-\d{2}-\d{4}`, "deny", "pre"))
		steer := ts.createControl("steer-pw", regexData(`password`, "steer"))
		warn := ts.createControl("warn-x", regexData(`xyz`, "warn"))
		for _, id := range []int64{deny, steer, warn} {
			ts.link("bot", id)
		}
		m := ts.eval("bot", "pre", "hello")
		if decision(m) != "allow" || m["is_safe"] != true || len(m["non_matches"].([]any)) != 3 || len(m["matches"].([]any)) != 0 {
			t.Fatalf("allow: %v", m)
		}
		m = ts.eval("bot", "pre", "ssn 123-45-6789 and password")
		if decision(m) != "deny" || m["is_safe"] != false {
			t.Fatalf("deny: %v", m)
		}
		m = ts.eval("bot", "post", "ssn 123-45-6789 and password")
		if decision(m) != "steer" || m["steering_context"].(map[string]any)["message"] != "rephrase" {
			t.Fatalf("steer at post (deny is pre only): %v", m)
		}
		m = ts.eval("bot", "pre", "xyz")
		if decision(m) != "allow" || m["is_safe"] != true || len(m["matches"].([]any)) != 1 {
			t.Fatalf("warn: %v", m)
		}
		// Edit data: the new behaviour applies at once.
		ts.ok(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", warn), map[string]any{"data": regexData("xyz", "deny")})
		if m = ts.eval("bot", "pre", "xyz"); decision(m) != "deny" {
			t.Fatalf("after edit: %v", m)
		}
		// Disable: no longer evaluated.
		ts.ok(200, "PATCH", fmt.Sprintf("/api/v1/controls/%d", warn), map[string]any{"enabled": false})
		if m = ts.eval("bot", "pre", "xyz"); decision(m) != "allow" {
			t.Fatalf("after disable: %v", m)
		}
		// Unlink: gone.
		ts.ok(200, "DELETE", fmt.Sprintf("/api/v1/agents/bot/controls/%d", deny), nil)
		if m = ts.eval("bot", "pre", "123-45-6789"); decision(m) != "allow" {
			t.Fatalf("after unlink: %v", m)
		}

		ts.expectProblem(404, problem.CodeAgentNotFound, "POST", "/api/v1/evaluation", map[string]any{
			"agent_name": "ghost", "stage": "pre", "step": map[string]any{"type": "llm", "name": "chat"}})
		for _, body := range []any{
			map[string]any{"agent_name": "bot", "stage": "during", "step": map[string]any{"type": "llm", "name": "chat"}},
			map[string]any{"agent_name": "bot", "stage": "pre"},
			map[string]any{"agent_name": "bot", "stage": "pre", "step": map[string]any{"type": "", "name": "chat"}},
			map[string]any{"agent_name": "bot", "stage": "pre", "step": map[string]any{"type": "llm", "name": 3}},
			map[string]any{"agent_name": "bot", "stage": "pre", "step": map[string]any{"type": "llm", "name": "x", "context": "str"}},
			map[string]any{"agent_name": "bad name", "stage": "pre", "step": map[string]any{"type": "llm", "name": "x"}},
			`{"agent_name":"bot","stage":"pre","step":{"type":"llm","name":"x"},"stage":"post"}`,
			map[string]any{"agent_name": "bot", "stage": "pre", "step": map[string]any{"type": "llm", "name": "x"}, "target_type": 5},
		} {
			ts.expectProblem(422, problem.CodeValidation, "POST", "/api/v1/evaluation", body)
		}
		ts.expectProblem(400, problem.CodeInvalidJSON, "POST", "/api/v1/evaluation", `{"agent_name":`)
	})
}

// TestInvalidJSONHint: a control pasted with curl with a single backslash in its regex gets a 400 that says
// where the JSON broke and how to fix it, without repeating the body.
func TestInvalidJSONHint(t *testing.T) {
	ts := newTS(t)
	body := "{\"name\": \"ssn\",\n \"data\": {\"condition\": {\"evaluator\": {\"name\": \"regex\", \"config\": {\"pattern\": \"\\d{3}-\\d{2}\"}}}}}"
	b := ts.expectProblem(400, problem.CodeInvalidJSON, "PUT", "/api/v1/controls", body)
	if !strings.Contains(b.Detail, "line 2, column 79") || !strings.Contains(b.Detail, `double the backslash (\\d`) || strings.Contains(b.Detail, "{3}") {
		t.Fatalf("detail: %q", b.Detail)
	}
}

func TestBodyLimit(t *testing.T) {
	ts := newTS(t, WithBodyLimit(64))
	big := `{"name":"` + strings.Repeat("a", 100) + `"}`
	ts.expectProblem(413, problem.CodePayloadTooLarge, "PUT", "/api/v1/controls", big)
}
