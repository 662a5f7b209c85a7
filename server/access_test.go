package server

import (
	"encoding/json"
	"testing"

	"github.com/guardrail-control/guard/store/storetest"
)

// TestAccess (issue 32, item 9): GET /access tells a client (the dashboard) what its key may do: an
// approve-only key may decide approval requests of its agents and nothing an admin key does.
func TestAccess(t *testing.T) {
	st := storetest.SQLite(t)
	ts := newTSOn(t, st, WithAuth(true, []string{apvRuntime}, []string{apvAdmin}), WithKeys([]Key{
		{Name: "mcp-gw", Key: "gw-secret-approver", Approve: true, Agents: []string{"alpha", "team-*"}},
		{Name: "ops", Key: "ops-secret-admin", Admin: true},
		{Name: "plain", Key: "plain-secret-runtime", Agents: []string{"alpha"}},
	}))
	for _, tc := range []struct {
		name, key string
		want      string
	}{
		{"an unnamed admin key", apvAdmin, `{"authenticated":true,"key_name":"unnamed-admin-1","admin":true,"approve":true}`},
		{"a named admin key", "ops-secret-admin", `{"authenticated":true,"key_name":"ops","admin":true,"approve":true}`},
		{"an unnamed runtime key", apvRuntime, `{"authenticated":true,"key_name":"unnamed-regular-1","admin":false,"approve":false}`},
		{"an approve key of some agents", "gw-secret-approver", `{"authenticated":true,"key_name":"mcp-gw","admin":false,"approve":true,"agents":["alpha","team-*"]}`},
		{"a runtime key of one agent", "plain-secret-runtime", `{"authenticated":true,"key_name":"plain","admin":false,"approve":false,"agents":["alpha"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do("GET", "/api/v1/access", nil, "X-API-Key", tc.key)
			if r.Code != 200 {
				t.Fatalf("status %d: %s", r.Code, r.Body)
			}
			var got, want any
			if err := json.Unmarshal(r.Body, &got); err != nil {
				t.Fatal(err)
			}
			_ = json.Unmarshal([]byte(tc.want), &want)
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Fatalf("access = %s, want %s", g, w)
			}
		})
	}
	ts.expectProblem(401, "AUTH_INVALID_KEY", "GET", "/api/v1/access", nil, "X-API-Key", "nope")
	ts.expectProblem(401, "AUTH_MISSING_KEY", "GET", "/api/v1/access", nil)

	// Without authentication everything is allowed.
	open := newTSOn(t, storetest.SQLite(t))
	if r := open.ok(200, "GET", "/api/v1/access", nil); r["authenticated"] != false || r["admin"] != true || r["approve"] != true {
		t.Fatalf("without authentication: %v", r)
	}
}
