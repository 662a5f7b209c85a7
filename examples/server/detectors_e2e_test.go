package main

import (
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
)

// The detectors of issue 15 in the real server binary: listed by GET /evaluators with their schema, and
// a control using the sql evaluator on the whole step denies a cross-tenant query.
func TestDetectorsInBinary(t *testing.T) {
	p := startServer(t, map[string]string{"DB_URL": filepath.Join(t.TempDir(), "guard.db")}, "serve", "--migrate")
	listed := map[string]bool{}
	for _, e := range p.call(http.StatusOK, http.MethodGet, "/api/v1/evaluators", nil) { // a map from name to info
		e := e.(map[string]any)
		if _, ok := e["config_schema"].(map[string]any)["properties"]; ok {
			listed[e["name"].(string)] = true
		}
	}
	for _, name := range []string{"sql", "secrets", "pii", "json"} {
		if !listed[name] {
			t.Fatalf("GET /evaluators lacks %s: %v", name, listed)
		}
	}
	ctl := map[string]any{
		"condition": map[string]any{"selector": map[string]any{"path": "*"}, "evaluator": map[string]any{"name": "sql", "config": map[string]any{
			"query_field": "input.query", "required_column_values": map[string]any{"tenant_id": "tenant_id"}}}},
		"action": map[string]any{"decision": "deny"},
	}
	id := int64(p.call(http.StatusOK, http.MethodPut, "/api/v1/controls", map[string]any{"name": "tenant-sql", "data": ctl})["control_id"].(float64))
	p.call(http.StatusOK, http.MethodPost, "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": "db-agent", "agent_description": "d"}, "steps": []any{map[string]any{"type": "tool", "name": "run_sql"}}})
	p.call(http.StatusOK, http.MethodPost, "/api/v1/agents/db-agent/controls/"+strconv.FormatInt(id, 10), nil)
	for _, tt := range []struct{ tenant, want string }{{"acme", "allow"}, {"globex", "deny"}} {
		m := p.call(http.StatusOK, http.MethodPost, "/api/v1/evaluation", map[string]any{"agent_name": "db-agent", "stage": "pre",
			"step": map[string]any{"type": "tool", "name": "run_sql", "input": map[string]any{"query": "SELECT * FROM orders WHERE tenant_id = '" + tt.tenant + "'"},
				"context": map[string]any{"tenant_id": "acme"}}})
		if m["decision"] != tt.want {
			t.Fatalf("tenant %s: decision %v, want %s", tt.tenant, m["decision"], tt.want)
		}
	}
}
