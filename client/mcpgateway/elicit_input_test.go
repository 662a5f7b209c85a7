package mcpgateway

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
)

// TestApprovalAnswerIn: the answer to the gateway's question counts only with the request state the gateway
// signed for that request and tool; a client cannot answer a question it was not asked, and the upstream
// never sees the gateway's question or state.
func TestApprovalAnswerIn(t *testing.T) {
	g := &Gateway{}
	ar := &client.ApprovalRequiredError{Approval: guard.ApprovalRequest{ID: "req-1", ControlName: "c"}, Status: guard.ApprovalRequired}
	step := &guard.Step{Type: StepType, Name: "delete_repo", Input: map[string]any{"repo": "alpha"}}
	asked := g.inputRequest(step, guard.StagePre, ar)
	if _, ok := asked.InputRequests[approvalInputKey].(*mcp.ElicitParams); !ok || asked.RequestState == "" || asked.Content != nil {
		t.Fatalf("question = %+v", asked)
	}
	accept := mcp.InputResponseMap{approvalInputKey: &mcp.ElicitResult{Action: "accept"}}
	other := g.inputRequest(step, guard.StagePre, &client.ApprovalRequiredError{Approval: guard.ApprovalRequest{ID: "req-2"}})
	for _, tc := range []struct {
		name   string
		p      *mcp.CallToolParamsRaw
		answer bool
	}{
		{"the answer with the signed state", &mcp.CallToolParamsRaw{Name: "delete_repo", InputResponses: accept, RequestState: asked.RequestState}, true},
		{"no state", &mcp.CallToolParamsRaw{Name: "delete_repo", InputResponses: accept}, false},
		{"a forged state", &mcp.CallToolParamsRaw{Name: "delete_repo", InputResponses: accept, RequestState: approvalStatePrefix + "req-1.AAAA"}, false},
		{"the state of another request", &mcp.CallToolParamsRaw{Name: "delete_repo", InputResponses: accept, RequestState: other.RequestState}, false},
		{"the state for another tool", &mcp.CallToolParamsRaw{Name: "create_repo", InputResponses: accept, RequestState: asked.RequestState}, false},
		{"no answer", &mcp.CallToolParamsRaw{Name: "delete_repo", RequestState: asked.RequestState}, false},
		{"a null answer", &mcp.CallToolParamsRaw{Name: "delete_repo", RequestState: asked.RequestState,
			InputResponses: mcp.InputResponseMap{approvalInputKey: (*mcp.ElicitResult)(nil)}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := g.answerIn(tc.p, ar); ok != tc.answer {
				t.Fatalf("answered = %v, want %v", ok, tc.answer)
			}
		})
	}

	// The upstream gets its own input responses and state only.
	theirs := &mcp.ElicitResult{Action: "accept"}
	in, state := upstreamInput(&mcp.CallToolParamsRaw{RequestState: asked.RequestState,
		InputResponses: mcp.InputResponseMap{approvalInputKey: &mcp.ElicitResult{Action: "accept"}, "upstream-q": theirs}})
	if state != "" || len(in) != 1 || in["upstream-q"] != theirs {
		t.Fatalf("upstream input = %v %q", in, state)
	}
	in, state = upstreamInput(&mcp.CallToolParamsRaw{RequestState: "upstream-state", InputResponses: mcp.InputResponseMap{"upstream-q": theirs}})
	if state != "upstream-state" || len(in) != 1 {
		t.Fatalf("upstream input = %v %q", in, state)
	}
}

// TestElicitMessage: the question names the tool, shows its arguments (cut when long), the control and
// its message, and the request.
func TestElicitMessage(t *testing.T) {
	ar := &client.ApprovalRequiredError{Approval: guard.ApprovalRequest{ID: "req-9", ControlName: "deleting", Message: "Deleting needs a person"}}
	msg := elicitMessage(&guard.Step{Name: "delete_repo", Input: map[string]any{"repo": "alpha"}}, guard.StagePre, ar)
	want := "The agent wants to call `delete_repo` with {\"repo\":\"alpha\"}.\nguard control \"deleting\" asks a person: Deleting needs a person.\nAllow this exact call once? (approval request req-9)"
	if msg != want {
		t.Fatalf("message = %q", msg)
	}
	// A call that several approval controls refuse: one question names them all (issue 32).
	several := &client.ApprovalRequiredError{Approval: guard.ApprovalRequest{ID: "req-10", ControlName: "deleting", Message: "Deleting needs a person",
		Controls: []guard.ApprovalControl{{ControlName: "deleting", Message: "Deleting needs a person"}, {ControlName: "prod-repos", Message: "Production repositories need the owners"}}}}
	msg = elicitMessage(&guard.Step{Name: "delete_repo", Input: map[string]any{"repo": "alpha"}}, guard.StagePre, several)
	want = "The agent wants to call `delete_repo` with {\"repo\":\"alpha\"}.\nguard controls \"deleting\" and \"prod-repos\" ask a person: " +
		"Deleting needs a person; Production repositories need the owners.\nAllow this exact call once? (approval request req-10)"
	if msg != want {
		t.Fatalf("message = %q", msg)
	}
	long := elicitMessage(&guard.Step{Name: "x", Input: map[string]any{"s": string(make([]byte, 5000))}}, guard.StagePre, ar)
	if len(long) > maxElicitPayload+300 {
		t.Fatalf("a long payload is not cut: %d bytes", len(long))
	}
}
