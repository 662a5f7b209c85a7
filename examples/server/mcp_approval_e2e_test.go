package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPApprovalEndToEnd runs issue 25's "ask the human where they are" through the real binaries: the
// guard server (with a named key that may decide the agent's approval requests), `guard mcp` in front of
// examples/mcpserver, and the official Go SDK's client.
//
//   - A client that answers elicitation: accept runs the tool exactly once (the upstream sees one call) and
//     the request reads approved by the gateway's key, via mcp_elicitation, its grant used; decline answers
//     a tool error, the tool never runs, the request reads rejected; cancel answers the tool error naming
//     the request, which stays pending. The audit trail records the decisions under the key's name.
//   - A client without elicitation (same gateway configuration): the tool error names the request; approved
//     through the API (as the dashboard does), the same call retried runs once; once more, it asks again.
func TestMCPApprovalEndToEnd(t *testing.T) {
	upstream := buildMCPServer(t)
	const agent, agentKey, adminKey, gwKey = "mcp-apv", "agent-key-mcp-apv", "admin-key-mcp-apv", "gateway-approver-key-mcp-apv"
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	keys := `{"keys": [{"name": "mcp-gateway", "key": "` + gwKey + `", "approve": true, "agents": ["` + agent + `"]}]}`
	if err := os.WriteFile(keyFile, []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServer(t, map[string]string{"GUARD_API_KEY_ENABLED": "true", "GUARD_API_KEYS": agentKey,
		"GUARD_ADMIN_API_KEYS": adminKey, "GUARD_API_KEYS_FILE": keyFile}, "serve", "--migrate")
	admin := func(want int, method, path string, body any) map[string]any {
		t.Helper()
		code, _, raw := p.do(method, path, body, map[string]string{"X-API-Key": adminKey})
		if code != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, raw)
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return m
	}
	admin(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": agent}, "steps": []any{}})
	id := admin(200, "PUT", "/api/v1/controls", map[string]any{"name": "deleting-needs-a-person",
		"data": toolControl("echo", "pre", "input.text", `^delete `, map[string]any{"decision": "deny",
			"approval": map[string]any{"message": "Deleting needs a person", "ttl_seconds": 600}})})["control_id"].(float64)
	admin(200, "POST", "/api/v1/agents/"+agent+"/controls/"+itoa(int64(id)), nil)
	approval := func(text string) map[string]any {
		t.Helper()
		list := admin(200, "GET", "/api/v1/approvals?agent_name="+agent+"&limit=100", nil)["approvals"].([]any)
		for _, a := range list {
			m := a.(map[string]any)
			if in, _ := m["step"].(map[string]any)["input"].(map[string]any); in["text"] == text {
				return m
			}
		}
		t.Fatalf("no approval request for %q in %v", text, list)
		return nil
	}
	count := filepath.Join(t.TempDir(), "calls")
	env := []string{"GUARD_API_KEY=" + agentKey, "GUARD_MCP_APPROVER_KEY=" + gwKey}
	args := []string{"--agent", agent, "--server", p.base, "--refresh", "0", "--", upstream, "--count-file", count}

	// The SDK's client speaks 2026-07-28 by default: the gateway asks by an input request in the call's
	// result (SEP-2322). In 2025-11-25 (the session protocol) it sends elicitation/create, from the fast path.
	versions := []string{"", "2025-11-25"}
	for _, version := range versions {
		t.Run("client with elicitation "+version, func(t *testing.T) {
			testMCPElicitApproval(t, version, env, args, count, approval)
		})
	}
	for _, action := range []string{"approval.approved", "approval.rejected"} {
		entries, _ := admin(200, "GET", "/api/v1/audit?action="+action, nil)["entries"].([]any)
		if len(entries) != len(versions) {
			t.Fatalf("audit %s: %v", action, entries)
		}
		for _, e := range entries {
			e := e.(map[string]any)
			if e["key_name"] != "mcp-gateway" || e["detail"].(map[string]any)["decided_via"] != "mcp_elicitation" {
				t.Fatalf("audit entry = %v", e)
			}
		}
	}

	t.Run("client without elicitation", func(t *testing.T) {
		g := startGatewayClient(t, askingClient, nil, nil, env, args...)
		const text = "delete repo delta"
		before := len(upstreamCalls(t, count))
		res := g.call("echo", map[string]any{"text": text})
		if !res.IsError || !strings.Contains(resultText(res), "Once it is approved, call the tool again with the same arguments") {
			t.Fatalf("first call: %s", resultText(res))
		}
		a := approval(text)
		if res.Meta["guard"].(map[string]any)["approval_id"] != a["id"] || a["status"] != "pending" {
			t.Fatalf("request %v, _meta %v", a, res.Meta)
		}
		admin(200, "POST", "/api/v1/approvals/"+a["id"].(string), map[string]any{"decision": "approve", "comment": "ok once"})
		res = g.call("echo", map[string]any{"text": text})
		if res.IsError || resultText(res) != "echo: "+text {
			t.Fatalf("the retry after the approval: %s\n%s", resultText(res), g.stderr)
		}
		res = g.call("echo", map[string]any{"text": text})
		if !res.IsError || res.Meta["guard"].(map[string]any)["approval_id"] == a["id"] {
			t.Fatalf("the grant let the call through twice: %s", resultText(res))
		}
		if n := len(upstreamCalls(t, count)) - before; n != 1 {
			t.Fatalf("the upstream ran the tool %d times, want 1", n)
		}
		if a = admin(200, "GET", "/api/v1/approvals/"+a["id"].(string), nil); a["used_at"] == nil || a["decided_via"] != nil {
			t.Fatalf("the approved request: %v", a)
		}
	})
}

// testMCPElicitApproval is the client with elicitation of TestMCPApprovalEndToEnd, in protocol version
// (the SDK's default when "").
func testMCPElicitApproval(t *testing.T, version string, env, args []string, count string, approval func(string) map[string]any) {
	var session *mcp.ClientSessionOptions
	if version != "" {
		session = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	asker := &elicitAnswers{}
	g := startGatewayClient(t, askingClient, &mcp.ClientOptions{ElicitationHandler: asker.handle}, session, env, args...)
	{
		for _, tc := range []struct {
			answer, text string
			runs         bool
			status       string // of the request afterwards
			resultText   []string
		}{
			{"accept", "delete repo alpha" + version, true, "approved", []string{"echo: delete repo alpha"}},
			{"decline", "delete repo beta" + version, false, "rejected", []string{`guard control "deleting-needs-a-person"`, "was rejected: Declined in the MCP client (guard-e2e-asking-client)"}},
			{"cancel", "delete repo gamma" + version, false, "pending", []string{"A person may approve this exact call: approval request"}},
		} {
			t.Run(tc.answer, func(t *testing.T) {
				asker.set(tc.answer)
				before := len(upstreamCalls(t, count))
				res := g.call("echo", map[string]any{"text": tc.text})
				got := resultText(res)
				if res.IsError == tc.runs {
					t.Fatalf("isError = %v: %s\n%s", res.IsError, got, g.stderr)
				}
				for _, s := range tc.resultText {
					if !strings.Contains(got, s) {
						t.Fatalf("result %q does not contain %q", got, s)
					}
				}
				if n := len(upstreamCalls(t, count)) - before; n != map[bool]int{true: 1, false: 0}[tc.runs] {
					t.Fatalf("the upstream ran the tool %d times", n)
				}
				q := asker.last()
				if !strings.Contains(q, "`echo`") || !strings.Contains(q, tc.text) || !strings.Contains(q, "Deleting needs a person") {
					t.Fatalf("the question was %q", q)
				}
				a := approval(tc.text)
				if a["status"] != tc.status {
					t.Fatalf("request = %v, want %s", a, tc.status)
				}
				if tc.status != "pending" && (a["decided_by"] != "mcp-gateway" || a["decided_via"] != "mcp_elicitation") {
					t.Fatalf("decision recorded as %v", a)
				}
				if tc.runs && a["used_at"] == nil {
					t.Fatalf("the grant is not recorded as used: %v", a)
				}
				if !tc.runs && res.Meta["guard"].(map[string]any)["approval_id"] != a["id"] {
					t.Fatalf("_meta.guard = %v, want the request %v", res.Meta, a["id"])
				}
			})
		}
		if n := asker.count(); n != 3 {
			t.Fatalf("the user was asked %d times, want 3", n)
		}
	}
}

// elicitAnswers is the user of the asking client: it answers every question with the action set, and
// keeps the questions.
type elicitAnswers struct {
	mu        sync.Mutex
	action    string
	questions []string
}

func (e *elicitAnswers) set(action string) {
	e.mu.Lock()
	e.action = action
	e.mu.Unlock()
}

func (e *elicitAnswers) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.questions = append(e.questions, req.Params.Message)
	res := &mcp.ElicitResult{Action: e.action}
	if e.action == "accept" {
		res.Content = map[string]any{}
	}
	return res, nil
}

func (e *elicitAnswers) last() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.questions) == 0 {
		return ""
	}
	return e.questions[len(e.questions)-1]
}

func (e *elicitAnswers) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.questions)
}

// askingClient names the MCP client of the approval tests; the gateway quotes it in the decision's comment.
const askingClient = "guard-e2e-asking-client"
