package mcpgateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
)

// Asking by input request (protocol 2026-07-28 and later, SEP-2322): the gateway answers the refused call
// with an input-required result holding the question (an elicitation under approvalInputKey) and a request
// state naming the approval request; the client asks its user and calls the tool again with the answer and
// the state. The state is signed with a key of this process, so that a client cannot answer a question it
// was not asked: only the answer to the step's own pending request counts (the same step reopens the same
// request, store.OpenApproval). The answer and the state are the gateway's: the upstream never sees them.

// approvalInputKey is the id of the gateway's question among a result's input requests.
const approvalInputKey = "guard_approval"

// approvalStatePrefix starts the request state of the gateway's question.
const approvalStatePrefix = "guard-approval.v1."

// stateKey signs the request states of this process.
var stateKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
}()

func stateMAC(id, tool string, stage guard.Stage) string {
	m := hmac.New(sha256.New, stateKey)
	m.Write([]byte(id + "\x00" + tool + "\x00" + string(stage)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// inputRequest is the input-required result that asks the user about request ar.
func (g *Gateway) inputRequest(step *guard.Step, stage guard.Stage, ar *client.ApprovalRequiredError) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalInputKey: elicitParams(step, stage, ar)},
		RequestState:  approvalStatePrefix + ar.Approval.ID + "." + stateMAC(ar.Approval.ID, step.Name, stage),
	}
}

// answerIn returns the user's answer to the question about request ar, when the call p carries it with a
// request state the gateway signed for that request and this tool.
func (g *Gateway) answerIn(p *mcp.CallToolParamsRaw, ar *client.ApprovalRequiredError) (*mcp.ElicitResult, bool) {
	if p == nil || !strings.HasPrefix(p.RequestState, approvalStatePrefix) {
		return nil, false
	}
	ans, ok := p.InputResponses[approvalInputKey].(*mcp.ElicitResult)
	if !ok || ans == nil {
		return nil, false
	}
	rest := strings.TrimPrefix(p.RequestState, approvalStatePrefix)
	i := strings.LastIndexByte(rest, '.')
	if i < 0 || rest[:i] != ar.Approval.ID {
		return nil, false
	}
	if !hmac.Equal([]byte(rest[i+1:]), []byte(stateMAC(ar.Approval.ID, p.Name, guard.StagePre))) {
		return nil, false
	}
	return ans, true
}

// upstreamInput is the input responses and request state of call p as the upstream gets them: without the
// gateway's question and state.
func upstreamInput(p *mcp.CallToolParamsRaw) (mcp.InputResponseMap, string) {
	state := p.RequestState
	if strings.HasPrefix(state, approvalStatePrefix) {
		state = ""
	}
	in := p.InputResponses
	if _, ours := in[approvalInputKey]; ours {
		in = make(mcp.InputResponseMap, len(p.InputResponses))
		for k, v := range p.InputResponses {
			if k != approvalInputKey {
				in[k] = v
			}
		}
		if len(in) == 0 {
			in = nil
		}
	}
	return in, state
}
