package server

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// dump reads everything the list and get endpoints show, to compare the stored state before and after.
func (ts *tserver) dump() string {
	ts.t.Helper()
	var b bytes.Buffer
	get := func(path string) map[string]any {
		r := ts.do("GET", path, nil)
		fmt.Fprintf(&b, "%s %d %s\n", path, r.Code, r.Body)
		if r.Code != 200 {
			return nil
		}
		return r.obj(ts.t)
	}
	controls := get("/api/v1/controls?limit=100")
	for _, c := range controls["controls"].([]any) {
		id := int64(c.(map[string]any)["control_id"].(float64))
		get(fmt.Sprintf("/api/v1/controls/%d", id))
		get(fmt.Sprintf("/api/v1/controls/%d/data", id))
		get(fmt.Sprintf("/api/v1/controls/%d/versions?limit=100", id))
	}
	agents := get("/api/v1/agents?limit=100")
	for _, a := range agents["agents"].([]any) {
		name := a.(map[string]any)["agent_name"].(string)
		get("/api/v1/agents/" + name)
		get("/api/v1/agents/" + name + "/controls")
	}
	return requestIDField.ReplaceAllString(b.String(), `"request_id":"-"`)
}

var requestIDField = regexp.MustCompile(`"request_id":"[^"]*"`)

// TestBadInputChangesNothing sends malformed input to every mutating route and checks each answer is the
// documented 4xx with a problem body, and that the stored data did not change.
func TestBadInputChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ts := newTSOn(t, st, WithBodyLimit(4096))
		ts.initAgent("a1", map[string]any{"type": "tool", "name": "search", "input_schema": map[string]any{"type": "object"}})
		id := ts.createControl("c1", regexData("x", "deny"))
		ts.createControl("c2", nil)
		ts.link("a1", id)
		before := ts.dump()

		big := `{"name":"` + strings.Repeat("a", 5000) + `"}`
		bigData := `{"data":{"description":"` + strings.Repeat("a", 5000) + `"}}`
		validData := map[string]any{"data": regexData("y", "deny")}
		c := fmt.Sprintf("/api/v1/controls/%d", id)
		cases := []struct {
			method, path string
			body         any
			status       int
			code         string
		}{
			{"PUT", "/api/v1/controls", "not json", 400, problem.CodeInvalidJSON},
			{"PUT", "/api/v1/controls", "", 400, problem.CodeInvalidJSON},
			{"PUT", "/api/v1/controls", `{"name":"x"} trailing`, 400, problem.CodeInvalidJSON},
			{"PUT", "/api/v1/controls", `[]`, 422, problem.CodeValidation},
			{"PUT", "/api/v1/controls", `{"name":5}`, 422, problem.CodeValidation},
			{"PUT", "/api/v1/controls", `{"name":"ok","extra":1}`, 422, problem.CodeValidation},
			{"PUT", "/api/v1/controls", `{"name":"bad name!"}`, 422, problem.CodeValidation},
			{"PUT", "/api/v1/controls", `{"name":""}`, 422, problem.CodeValidation},
			{"PUT", "/api/v1/controls", `{"name":"ok","data":{"condition":5}}`, 422, problem.CodeValidation},
			{"PUT", "/api/v1/controls", `{"name":"ok","data":{"action":{"decision":"deny"},"condition":{"selector":{"path":"input"},"evaluator":{"name":"nope","config":{}}}}}`, 422, problem.CodeValidation},
			{"PUT", "/api/v1/controls", `{"name":"ok","data":{"unknown":1}}`, 422, problem.CodeValidation},
			{"PUT", "/api/v1/controls", big, 413, problem.CodePayloadTooLarge},
			{"PUT", "/api/v1/controls", `{"name":"c1"}`, 409, problem.CodeControlNameConflict},
			{"PUT", c + "/data", "{", 400, problem.CodeInvalidJSON},
			{"PUT", c + "/data", `{}`, 422, problem.CodeValidation},
			{"PUT", c + "/data", `{"data":null}`, 422, problem.CodeValidation},
			{"PUT", c + "/data", `{"data":{}}`, 422, problem.CodeValidation},
			{"PUT", c + "/data", `{"data":[]}`, 422, problem.CodeValidation},
			{"PUT", c + "/data", bigData, 413, problem.CodePayloadTooLarge},
			{"PUT", "/api/v1/controls/99999/data", validData, 404, problem.CodeControlNotFound},
			{"PUT", "/api/v1/controls/abc/data", validData, 422, problem.CodeValidation},
			{"PUT", "/api/v1/controls/-1/data", validData, 422, problem.CodeValidation},
			{"PATCH", c, `{"name":""}`, 422, problem.CodeValidation},
			{"PATCH", c, `{"name":"has space"}`, 422, problem.CodeValidation},
			{"PATCH", c, `{"enabled":"yes"}`, 422, problem.CodeValidation},
			{"PATCH", c, `{"foo":1}`, 422, problem.CodeValidation},
			{"PATCH", c, `{"name":"c2"}`, 409, problem.CodeControlNameConflict},
			{"PATCH", c, `nope`, 400, problem.CodeInvalidJSON},
			{"PATCH", "/api/v1/controls/99999", `{"enabled":false}`, 404, problem.CodeControlNotFound},
			{"DELETE", c, nil, 409, problem.CodeControlInUse},
			{"DELETE", c + "?force=maybe", nil, 422, problem.CodeValidation},
			{"DELETE", "/api/v1/controls/99999", nil, 404, problem.CodeControlNotFound},
			{"DELETE", "/api/v1/controls/1.5", nil, 422, problem.CodeValidation},
			{"POST", "/api/v1/controls/validate", `{"data":{}}`, 422, problem.CodeValidation},
			{"POST", "/api/v1/agents/initAgent", `{`, 400, problem.CodeInvalidJSON},
			{"POST", "/api/v1/agents/initAgent", `{}`, 422, problem.CodeValidation},
			{"POST", "/api/v1/agents/initAgent", `{"agent":{"agent_name":"Bad Name!"}}`, 422, problem.CodeValidation},
			{"POST", "/api/v1/agents/initAgent", `{"agent":{"agent_name":"new"},"steps":[{"type":"llm","name":"a"},{"type":"llm","name":"a"}]}`, 422, problem.CodeValidation},
			{"POST", "/api/v1/agents/initAgent", `{"agent":{"agent_name":"new"},"conflict_mode":"merge"}`, 422, problem.CodeValidation},
			{"POST", "/api/v1/agents/initAgent", `{"agent":{"agent_name":"new","agent_name":"other"}}`, 422, problem.CodeValidation},
			{"POST", "/api/v1/agents/initAgent", `{"agent":{"agent_name":"new"},"steps":[{"type":"llm","name":"a","input_schema":"no"}]}`, 422, problem.CodeValidation},
			{"POST", "/api/v1/agents/initAgent", `{"agent":{"agent_name":"a1"},"steps":[{"type":"tool","name":"search","input_schema":{"type":"string"}},{"type":"llm","name":"added"}]}`, 409, problem.CodeSchemaIncompatible},
			{"PATCH", "/api/v1/agents/a1", `{"agent_description":5}`, 422, problem.CodeValidation},
			{"PATCH", "/api/v1/agents/a1", `{"remove_steps":[{"type":""}]}`, 422, problem.CodeValidation},
			{"PATCH", "/api/v1/agents/a1", `{"agent_metadata":[1]}`, 422, problem.CodeValidation},
			{"PATCH", "/api/v1/agents/ghost", `{"agent_description":"x"}`, 404, problem.CodeAgentNotFound},
			{"PATCH", "/api/v1/agents/bad%20name", `{"agent_description":"x"}`, 422, problem.CodeValidation},
			{"POST", "/api/v1/agents/a1/controls/99999", nil, 404, problem.CodeControlNotFound},
			{"POST", "/api/v1/agents/ghost/controls/1", nil, 404, problem.CodeAgentNotFound},
			{"POST", "/api/v1/agents/a1/controls/x", nil, 422, problem.CodeValidation},
			{"DELETE", "/api/v1/agents/a1/controls/0", nil, 422, problem.CodeValidation},
			{"DELETE", "/api/v1/agents/ghost/controls/1", nil, 404, problem.CodeAgentNotFound},
			{"POST", c + "/versions/99/restore", nil, 404, problem.CodeVersionNotFound},
			{"POST", c + "/versions/0/restore", nil, 422, problem.CodeValidation},
			{"POST", "/api/v1/controls/99999/versions/1/restore", nil, 404, problem.CodeControlNotFound},
			{"POST", "/api/v1/evaluation", `{"agent_name":"a1","stage":"pre","step":{"type":"llm"}}`, 422, problem.CodeValidation},
			{"GET", "/api/v1/controls?limit=0", nil, 422, problem.CodeValidation},
			{"GET", "/api/v1/agents?limit=101", nil, 422, problem.CodeValidation},
			{"GET", "/api/v1/agents?cursor=not-a-cursor", nil, 422, problem.CodeValidation},
			{"GET", c + "/versions?cursor=eyJ4IjoxfQ", nil, 422, problem.CodeValidation},
		}
		for _, tc := range cases {
			r := ts.do(tc.method, tc.path, tc.body)
			if r.Code != tc.status {
				t.Errorf("%s %s %v: status %d, want %d: %s", tc.method, tc.path, tc.body, r.Code, tc.status, r.Body)
				continue
			}
			b := r.problem(t)
			if b.ErrorCode != tc.code {
				t.Errorf("%s %s: code %s, want %s", tc.method, tc.path, b.ErrorCode, tc.code)
			}
			if s, ok := tc.body.(string); ok && len(s) > 12 && strings.Contains(string(r.Body), s) {
				t.Errorf("%s %s: the body echoes the request", tc.method, tc.path)
			}
		}
		if after := ts.dump(); after != before {
			t.Fatalf("bad input changed stored data:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
}

// unavailableStore fails the reads a handler makes, as a store whose database went away does.
type unavailableStore struct {
	guard.Store
}

var errDown = fmt.Errorf("dial tcp: connection refused: %w", guard.ErrUnavailable)

func (unavailableStore) Ping(context.Context) error { return errDown }
func (unavailableStore) GetControl(context.Context, int64) (guard.ControlRecord, error) {
	return guard.ControlRecord{}, errDown
}
func (unavailableStore) AgentControls(context.Context, string) ([]guard.AgentControl, guard.Revision, error) {
	return nil, 0, errDown
}
func (unavailableStore) ListControls(context.Context, guard.ControlFilter, guard.PageRequest) ([]guard.ControlSummary, guard.PageInfo, error) {
	panic("boom: internal detail")
}
func (unavailableStore) ListAgents(context.Context, guard.AgentFilter, guard.PageRequest) ([]guard.AgentSummary, guard.PageInfo, error) {
	return nil, guard.PageInfo{}, fmt.Errorf("secret internal failure")
}

func TestStoreFailures(t *testing.T) {
	base := newTS(t)
	ts := newTSOn(t, base.st, WithPolicyPollInterval(0))
	ts.srv.store = unavailableStore{Store: base.st}
	ts.srv.cache.reader = ts.srv.store
	m := ts.ok(200, "GET", "/health", nil)
	if m["database"] != "unavailable" || m["status"] != "healthy" {
		t.Fatalf("health: %v", m)
	}
	if b := ts.expectProblem(503, problem.CodeDatabaseUnavailable, "GET", "/ready", nil); strings.Contains(b.Detail, "dial") {
		t.Fatalf("/ready detail leaks internals: %q", b.Detail)
	}
	b := ts.expectProblem(503, problem.CodeDatabaseUnavailable, "GET", "/api/v1/controls/1", nil)
	if strings.Contains(b.Detail, "dial") {
		t.Fatalf("detail leaks internals: %q", b.Detail)
	}
	ts.expectProblem(503, problem.CodeDatabaseUnavailable, "POST", "/api/v1/evaluation", map[string]any{
		"agent_name": "a", "stage": "pre", "step": map[string]any{"type": "llm", "name": "x"}})
	r := ts.do("GET", "/api/v1/controls", nil)
	if r.Code != 500 || r.problem(t).ErrorCode != problem.CodeInternal || strings.Contains(string(r.Body), "boom") || strings.Contains(string(r.Body), "goroutine") {
		t.Fatalf("panic: %d %s", r.Code, r.Body)
	}
	r = ts.do("GET", "/api/v1/agents", nil)
	if r.Code != 500 || strings.Contains(string(r.Body), "secret") {
		t.Fatalf("500: %d %s", r.Code, r.Body)
	}
}
