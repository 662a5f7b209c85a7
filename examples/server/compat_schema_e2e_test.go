package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The schema flow test walks a reference client's user flow against the real server binary and validates
// every answer against the JSON Schema that the reference's typed clients (its TypeScript SDK, its Python
// models) validate it with, from /work/shared/compat (issue 22). The schemas list every field of the
// reference's models as required, so an answer that loses a field fails here.

// refSchemasFixture is the schema file, relative to this package's directory.
const refSchemasFixture = "../../../shared/compat/agent-control-8.4-response-schemas.json"

// refSchemas holds one compiled schema per "METHOD /path" of the reference.
type refSchemas map[string]*jsonschema.Schema

// loadRefSchemas compiles every route's schema; without the file the test skips, except under CI=true.
func loadRefSchemas(t *testing.T) refSchemas {
	t.Helper()
	raw, err := os.ReadFile(refSchemasFixture)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the reference schemas %s are required under CI: %v", refSchemasFixture, err)
		}
		t.Skipf("the reference schemas %s are absent (%v)", refSchemasFixture, err)
	}
	var doc struct {
		Routes []struct {
			Method string          `json:"method"`
			Path   string          `json:"path"`
			Schema json.RawMessage `json:"schema"`
		} `json:"routes"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	out := refSchemas{}
	for i, r := range doc.Routes {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Schema))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		loc := "file:///ref/" + strconv.Itoa(i) + ".json"
		if err := c.AddResource(loc, v); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(loc)
		if err != nil {
			t.Fatalf("%s %s: %v", r.Method, r.Path, err)
		}
		out[r.Method+" "+r.Path] = sch
	}
	return out
}

// check validates an answer against the schema of route ("METHOD /path" as the reference names it).
func (s refSchemas) check(t *testing.T, route string, body []byte) {
	t.Helper()
	if err := s.validate(route, body); err != nil {
		t.Errorf("%s: the answer does not validate against the reference's schema: %v\n%s", route, err, body)
	}
}

func (s refSchemas) validate(route string, body []byte) error {
	sch, ok := s[route]
	if !ok {
		return fmt.Errorf("no reference schema for %s", route)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	return sch.Validate(inst)
}

// refCall sends a request the way the reference's clients do (X-API-Key; the SDK's identification
// headers) and checks the status and the reference's version header.
func refCall(t *testing.T, p *proc, want int, method, path string, body any) []byte {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, p.base+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-Key", "flow-admin")
	req.Header.Set("X-Agent-Control-SDK", "typescript")
	req.Header.Set("X-Agent-Control-SDK-Version", "3.1.0")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(res.Body); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, res.StatusCode, want, buf.Bytes())
	}
	if v := res.Header.Get("X-Agent-Control-Server-Version"); !strings.HasPrefix(v, "8.") {
		t.Errorf("%s %s: X-Agent-Control-Server-Version %q: the SDKs compare its major with their own (8)", method, path, v)
	}
	return buf.Bytes()
}

func TestCompatReferenceSchemasFlow(t *testing.T) {
	schemas := loadRefSchemas(t)
	dbURL := "sqlite://" + filepath.Join(t.TempDir(), "guard.db")
	// Default observability settings: the flush interval stays 10 s, so an event read back at once is
	// read from what the server acknowledged, not from a timed flush.
	p := startServer(t, map[string]string{"DATABASE_URL": dbURL, "GUARD_API_KEY_ENABLED": "true",
		"GUARD_ADMIN_API_KEYS": "flow-admin", "OBSERVABILITY_ENABLED": "true"}, "serve", "--migrate")
	suffix := strings.ReplaceAll(uuid.NewString(), "-", "")[:8]
	agent := "flow-agent-" + suffix

	schemas.check(t, "GET /health", refCall(t, p, 200, "GET", "/health", nil))

	// Register two agents (the list has two pages at limit 1), the first with steps under the seed's
	// other name, tools.
	for _, name := range []string{agent + "-second", agent} {
		b := refCall(t, p, 200, "POST", "/api/v1/agents/initAgent", map[string]any{
			"agent": map[string]any{"agent_name": name, "agent_description": "flow", "agent_version": "1.0"},
			"tools": []map[string]any{
				{"type": "llm", "name": "chat", "input_schema": map[string]any{"type": "object"}},
				{"type": "tool", "name": "shell"},
			},
		})
		schemas.check(t, "POST /api/v1/agents/initAgent", b)
	}

	// One control per decision of the reference.
	type ctl struct {
		name    string
		action  map[string]any
		pattern string
		step    string
		id      int64
	}
	controls := []*ctl{
		{name: "flow-deny-" + suffix, action: map[string]any{"decision": "deny"}, pattern: `\bssn\b`, step: "llm"},
		{name: "flow-steer-" + suffix, action: map[string]any{"decision": "steer", "steering_context": map[string]any{"message": "rephrase"}}, pattern: `rm -rf`, step: "tool"},
		{name: "flow-observe-" + suffix, action: map[string]any{"decision": "observe"}, pattern: `weather`, step: "llm"},
	}
	for _, c := range controls {
		b := refCall(t, p, 200, "PUT", "/api/v1/controls", map[string]any{"name": c.name, "data": map[string]any{
			"description": "flow", "enabled": true, "execution": "server",
			"scope":     map[string]any{"step_types": []string{c.step}, "stages": []string{"pre"}},
			"condition": map[string]any{"selector": map[string]any{"path": "input"}, "evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": c.pattern}}},
			"action":    c.action, "tags": []string{"flow"},
		}})
		schemas.check(t, "PUT /api/v1/controls", b)
		var out struct {
			ID int64 `json:"control_id"`
		}
		if err := json.Unmarshal(b, &out); err != nil || out.ID <= 0 {
			t.Fatalf("PUT /controls: %s", b)
		}
		c.id = out.ID
		schemas.check(t, "POST /api/v1/agents/{agent_name}/controls/{control_id}",
			refCall(t, p, 200, "POST", fmt.Sprintf("/api/v1/agents/%s/controls/%d", agent, c.id), nil))
	}

	// Reads of the control plane.
	schemas.check(t, "GET /api/v1/agents/{agent_name}", refCall(t, p, 200, "GET", "/api/v1/agents/"+agent, nil))
	schemas.check(t, "GET /api/v1/agents/{agent_name}/controls", refCall(t, p, 200, "GET", "/api/v1/agents/"+agent+"/controls", nil))
	again := refCall(t, p, 200, "POST", "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": agent}, "steps": []map[string]any{{"type": "llm", "name": "chat", "input_schema": map[string]any{"type": "object"}}, {"type": "tool", "name": "shell"},
			{"type": "tool", "name": "search", "description": "added"}}})
	schemas.check(t, "POST /api/v1/agents/initAgent", again) // now with the controls
	for _, c := range controls {
		schemas.check(t, "GET /api/v1/controls/{control_id}", refCall(t, p, 200, "GET", fmt.Sprintf("/api/v1/controls/%d", c.id), nil))
	}
	schemas.check(t, "PATCH /api/v1/controls/{control_id}",
		refCall(t, p, 200, "PATCH", fmt.Sprintf("/api/v1/controls/%d", controls[0].id), map[string]any{"enabled": true}))

	// Pagination: agents with their cursor, controls with integer cursors, one per page.
	walk := func(route, path string, wantAtLeast int) {
		t.Helper()
		seen, cursor := 0, ""
		for page := 0; ; page++ {
			q := url.Values{"limit": {"1"}}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			b := refCall(t, p, 200, "GET", path+"?"+q.Encode(), nil)
			schemas.check(t, route, b)
			var out struct {
				Pagination struct {
					Next    *string `json:"next_cursor"`
					HasMore bool    `json:"has_more"`
				} `json:"pagination"`
			}
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			seen++
			if !out.Pagination.HasMore {
				break
			}
			if out.Pagination.Next == nil || page > 20 {
				t.Fatalf("%s: has_more without a usable next_cursor: %s", route, b)
			}
			cursor = *out.Pagination.Next
			if route == "GET /api/v1/controls" {
				if _, err := strconv.ParseInt(cursor, 10, 64); err != nil {
					t.Errorf("control cursor %q: the reference's clients send an integer", cursor)
				}
			}
		}
		if seen < wantAtLeast {
			t.Errorf("%s: %d pages, want at least %d", route, seen, wantAtLeast)
		}
	}
	walk("GET /api/v1/agents", "/api/v1/agents", 2)
	walk("GET /api/v1/controls", "/api/v1/controls", len(controls))

	// Evaluations: one step per decision.
	for _, st := range []map[string]any{
		{"type": "llm", "name": "chat", "input": "my ssn is 123"},
		{"type": "tool", "name": "shell", "input": "rm -rf /"},
		{"type": "llm", "name": "chat", "input": "the weather today"},
	} {
		b := refCall(t, p, 200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": agent, "step": st, "stage": "pre"})
		schemas.check(t, "POST /api/v1/evaluation", b)
	}

	// Events as the SDKs post them: applies_to, no source; the second without control_execution_id.
	now := time.Now().UTC().Format(time.RFC3339Nano)
	sdkID := uuid.NewString()
	events := []map[string]any{
		{"control_execution_id": sdkID, "trace_id": strings.Repeat("a", 32), "span_id": strings.Repeat("b", 16),
			"agent_name": agent, "control_id": controls[2].id, "control_name": controls[2].name, "check_stage": "pre",
			"applies_to": "llm_call", "action": "observe", "matched": true, "confidence": 1.0, "timestamp": now,
			"execution_duration_ms": 1.5, "evaluator_name": "regex", "selector_path": "input", "error_message": nil, "metadata": map[string]any{}},
		{"trace_id": strings.Repeat("c", 32), "span_id": strings.Repeat("d", 16),
			"agent_name": agent, "control_id": controls[1].id, "control_name": controls[1].name, "check_stage": "pre",
			"applies_to": "tool_call", "action": "steer", "matched": true, "confidence": 0.9, "timestamp": now},
	}
	schemas.check(t, "POST /api/v1/observability/events",
		refCall(t, p, 202, "POST", "/api/v1/observability/events", map[string]any{"events": events}))

	// Read at once (no wait): the two SDK events and the three the server recorded are there.
	b := refCall(t, p, 200, "POST", "/api/v1/observability/events/query", map[string]any{"agent_name": agent, "limit": 100})
	schemas.check(t, "POST /api/v1/observability/events/query", b)
	var q struct {
		Events []map[string]any `json:"events"`
		Total  int              `json:"total"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	var gotSDK, assigned bool
	for _, e := range q.Events {
		id, _ := e["control_execution_id"].(string)
		if id == sdkID {
			gotSDK = true
			if e["action"] != "observe" || e["applies_to"] != "llm_call" {
				t.Errorf("the SDK's observe event reads back %v/%v, want observe/llm_call", e["action"], e["applies_to"])
			}
		}
		if e["trace_id"] == strings.Repeat("c", 32) {
			_, err := uuid.Parse(id)
			assigned = err == nil
		}
	}
	if !gotSDK || !assigned || q.Total < 5 {
		t.Errorf("query right after the 202: total %d, SDK event %v, event without id stored with one %v: %s", q.Total, gotSDK, assigned, b)
	}

	// Statistics, at once, with every time range the reference accepts.
	for _, tr := range []string{"1h", "180d", "365d"} {
		b := refCall(t, p, 200, "GET", "/api/v1/observability/stats?agent_name="+agent+"&include_timeseries=true&time_range="+tr, nil)
		schemas.check(t, "GET /api/v1/observability/stats", b)
		if tr != "1h" {
			continue
		}
		var st struct {
			Totals struct {
				Executions int            `json:"execution_count"`
				Actions    map[string]int `json:"action_counts"`
			} `json:"totals"`
			Controls []map[string]any `json:"controls"`
		}
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		if st.Totals.Executions < 5 || st.Totals.Actions["observe"] < 2 || st.Totals.Actions["deny"] < 1 || st.Totals.Actions["steer"] < 2 {
			t.Errorf("statistics right after the 202: %s", b)
		}
	}
	for _, c := range controls {
		b := refCall(t, p, 200, "GET", fmt.Sprintf("/api/v1/observability/stats/controls/%d?agent_name=%s&include_timeseries=true", c.id, agent), nil)
		schemas.check(t, "GET /api/v1/observability/stats/controls/{control_id}", b)
	}

	// Changing and removing.
	schemas.check(t, "PUT /api/v1/controls/{control_id}/data", refCall(t, p, 200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", controls[0].id),
		map[string]any{"data": map[string]any{
			"scope":     map[string]any{"step_types": []string{"llm"}},
			"condition": map[string]any{"selector": map[string]any{"path": "input"}, "evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": "ssn"}}},
			"action":    map[string]any{"decision": "deny"}}}))
	schemas.check(t, "DELETE /api/v1/agents/{agent_name}/controls/{control_id}",
		refCall(t, p, 200, "DELETE", fmt.Sprintf("/api/v1/agents/%s/controls/%d", agent, controls[0].id), nil))
	schemas.check(t, "DELETE /api/v1/controls/{control_id}",
		refCall(t, p, 200, "DELETE", fmt.Sprintf("/api/v1/controls/%d?force=true", controls[1].id), nil))

	schemas.check(t, "GET /api/v1/evaluators", refCall(t, p, 200, "GET", "/api/v1/evaluators", nil))
	schemas.check(t, "GET /api/v1/observability/status", refCall(t, p, 200, "GET", "/api/v1/observability/status", nil))
}

// TestRefSchemasCatchAMissingField shows the flow test's check fails when an answer loses a field the
// reference emits: a valid answer passes, the same answer without one field does not.
func TestRefSchemasCatchAMissingField(t *testing.T) {
	schemas := loadRefSchemas(t)
	for _, tc := range []struct {
		route, valid, missing string
	}{
		{"DELETE /api/v1/controls/{control_id}",
			`{"success":true,"dissociated_from":[],"dissociated_from_policies":[],"dissociated_from_agents":[],"detached_target_bindings":[]}`,
			`{"success":true,"dissociated_from":[],"dissociated_from_policies":[],"dissociated_from_agents":[]}`},
		{"GET /api/v1/observability/status",
			`{"status":"healthy","ingestor_initialized":true,"store_initialized":true}`,
			`{"status":"healthy","ingestor_initialized":true}`},
		{"PUT /api/v1/controls", `{"control_id":1}`, `{}`},
	} {
		if err := schemas.validate(tc.route, []byte(tc.valid)); err != nil {
			t.Errorf("%s: a complete answer fails: %v", tc.route, err)
		}
		if err := schemas.validate(tc.route, []byte(tc.missing)); err == nil {
			t.Errorf("%s: an answer without a field passes", tc.route)
		}
	}
}
