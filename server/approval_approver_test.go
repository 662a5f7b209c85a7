package server

import (
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestApproverKey: a key with the approve permission (the key of a guard MCP gateway that asks its user)
// decides the approval requests of its agents and nothing else; the decision records the key's name and how
// it was made (via), and so does the audit trail. A regular key without the permission may not decide.
func TestApproverKey(t *testing.T) {
	const gwKey, plainKey = "gw-secret-approver", "plain-secret-runtime"
	st := storetest.SQLite(t)
	ts := newTSOn(t, st, WithAuth(true, []string{apvRuntime}, []string{apvAdmin}), WithKeys([]Key{
		{Name: "mcp-gw", Key: gwKey, Approve: true, Agents: []string{"alpha"}},
		{Name: "plain", Key: plainKey, Agents: []string{"alpha"}},
	}))
	a := &approvalTS{tserver: ts}
	a.setup("alpha", "bravo")
	open := func(agent string) string {
		res := a.refund(agent, 2500, nil)
		apv, _ := res["approval"].(map[string]any)
		if apv == nil || apv["id"] == nil {
			t.Fatalf("%s: no approval request in %v", agent, res)
		}
		return apv["id"].(string)
	}
	alpha, bravo := open("alpha"), open("bravo")
	gw := []string{"X-API-Key", gwKey}

	for _, tc := range []struct {
		name string
		key  string
		path string
		body any
		want int
		code string
	}{
		{"a regular key may not decide", plainKey, "/api/v1/approvals/" + alpha, map[string]any{"decision": "approve"}, 403, "AUTH_INSUFFICIENT_PRIVILEGES"},
		{"the approver key reaches its agents only", gwKey, "/api/v1/approvals/" + bravo, map[string]any{"decision": "approve"}, 404, codeApprovalNotFound},
		{"an unknown via is named", gwKey, "/api/v1/approvals/" + alpha, map[string]any{"decision": "approve", "via": "carrier-pigeon"}, 422, "VALIDATION_ERROR"},
		{"the approver key is no admin key", gwKey, "/api/v1/controls", map[string]any{"name": "x", "data": refundControl("^1")}, 403, "AUTH_INSUFFICIENT_PRIVILEGES"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do("POST", tc.path, tc.body, "X-API-Key", tc.key)
			if tc.path == "/api/v1/controls" {
				r = ts.do("PUT", tc.path, tc.body, "X-API-Key", tc.key)
			}
			if r.Code != tc.want || r.problem(t).ErrorCode != tc.code {
				t.Fatalf("%d %s, want %d %s", r.Code, r.Body, tc.want, tc.code)
			}
		})
	}
	if r := ts.do("POST", "/api/v1/approvals/"+alpha, map[string]any{"decision": "approve", "via": "carrier-pigeon"}, gw...); len(r.problem(t).Errors) != 1 || r.problem(t).Errors[0].Field != "via" {
		t.Fatalf("bad via: %s", r.Body)
	}

	got := a.ok(200, "POST", "/api/v1/approvals/"+alpha, map[string]any{"decision": "reject", "comment": "declined in the MCP client",
		"via": guard.DecidedViaMCPElicitation}, gw...)
	if got["status"] != guard.ApprovalRejected || got["decided_by"] != "mcp-gw" || got["decided_via"] != guard.DecidedViaMCPElicitation {
		t.Fatalf("decision = %v", got)
	}
	audit := a.admin(200, "GET", "/api/v1/audit?action=approval.rejected", nil)
	entries, _ := audit["entries"].([]any)
	if len(entries) != 1 {
		t.Fatalf("audit = %v", audit)
	}
	e := entries[0].(map[string]any)
	detail, _ := e["detail"].(map[string]any)
	if e["key_name"] != "mcp-gw" || detail["decided_via"] != guard.DecidedViaMCPElicitation || detail["approval_id"] != alpha {
		t.Fatalf("audit entry = %v", e)
	}
	// A decision through the API without via records none.
	bravoDone := a.admin(200, "POST", "/api/v1/approvals/"+bravo, map[string]any{"decision": "approve", "via": "api"})
	if _, has := bravoDone["decided_via"]; has {
		t.Fatalf("api decision = %v", bravoDone)
	}
}
