package mcpgateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"

	"github.com/guardrail-control/guard/internal/strictjson"
)

// Asking the user where they are (docs/approvals.md, "MCP gateway"). A tool call refused by a control with
// action.approval opens an approval request on the guard server. When the gateway is given an
// ApprovalDecider (Options.Approvals: a key that may decide the agent's requests) and the client session
// announced the elicitation capability (form mode), the gateway asks the user in the MCP client ("the agent
// wants to call `delete_repo` with {...}: allow once?") before it answers the call:
//
//   - accept: the request is approved with the decider's key (decided_by its name, decided_via
//     "mcp_elicitation", the user's comment, if any) and the call is checked again, now with the grant: it
//     runs once, unless another control refuses it;
//   - decline: the request is rejected the same way, and the call is answered with a tool error saying so;
//     nothing runs;
//   - cancel (the user dismissed the question without choosing), no answer within ElicitApprovals.Timeout,
//     or a failed elicitation: nothing is decided, the request stays pending, and the call is answered with
//     the tool error that names the request, as without elicitation: a person may still approve it in the
//     dashboard or the CLI, and the same call retried then runs.
//
// Without a decider, or for a client without elicitation, the gateway answers with that tool error at once.

// ApprovalDecider records a decision on an approval request: HTTPDecider with a key of the guard server that
// may decide the agent's requests (an admin key, or a named key with "approve": true).
type ApprovalDecider interface {
	DecideApproval(ctx context.Context, id string, approve bool, comment string) error
}

// HTTPDecider decides approval requests through the guard server's API with its client's key, recording
// that the decision was made in the MCP client (guard.DecidedViaMCPElicitation).
type HTTPDecider struct {
	Client *client.HTTPClient
}

// DecideApproval implements ApprovalDecider.
func (d HTTPDecider) DecideApproval(ctx context.Context, id string, approve bool, comment string) error {
	_, err := d.Client.DecideApprovalVia(ctx, id, approve, comment, guard.DecidedViaMCPElicitation)
	return err
}

// ElicitApprovals makes the gateway ask the user of the MCP client to decide the approval requests of the
// calls it refuses (see above). Set it in Options.Approvals.
type ElicitApprovals struct {
	// Decider records the user's decision; required.
	Decider ApprovalDecider
	// Timeout bounds the wait for the user's answer; 0 means DefaultElicitTimeout.
	Timeout time.Duration
}

// DefaultElicitTimeout is how long the gateway waits for the user's answer by default.
const DefaultElicitTimeout = 2 * time.Minute

// maxElicitPayload bounds the JSON of the arguments (or result) shown in the question; longer is cut.
const maxElicitPayload = 2000

// checkCall checks one stage of a tool call (check), and, when the call is refused for approval and the
// gateway may ask, asks the user of session ss (nil: the session is not known, nobody is asked). p is the
// call as the client sent it: a client of protocol 2026-07-28 or later is asked by an input request in the
// call's result (MCP's multi round-trip requests, SEP-2322), and its answer comes back in p on the retry.
func (g *Gateway) checkCall(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolParamsRaw, step *guard.Step, stage guard.Stage) (*mcp.CallToolResult, error) {
	err := g.gd.CheckStep(ctx, step, stage)
	if err != nil && g.opts.Approvals != nil && g.opts.Approvals.Decider != nil {
		var ar *client.ApprovalRequiredError
		if errors.As(err, &ar) && ar.Status == guard.ApprovalRequired && ar.Approval.ID != "" {
			switch {
			case ss == nil:
			case inputRequestsProtocol(ss, p):
				// The question can only be asked before the tool runs: the client retries the whole call.
				if stage == guard.StagePre && inputRequestsElicit(p) {
					if ans, answered := g.answerIn(p, ar); answered {
						err = g.recordAnswer(ctx, ss, p, step, stage, ar, ans)
					} else {
						return g.inputRequest(step, stage, ar), nil
					}
				}
			case canElicit(ss):
				err = g.askApproval(ctx, ss, step, stage, ar)
			}
		}
	}
	return g.answer(ctx, step, stage, err)
}

// canElicit reports whether the client of ss announced form elicitation (an empty elicitation capability
// means form, as the SDK reads it) in a version of the session protocol (server-initiated requests).
func canElicit(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil || ip.ProtocolVersion >= newProtocolVersion {
		return false
	}
	e := ip.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// inputRequestsProtocol reports whether the call is of protocol 2026-07-28 or later, which asks the client
// by input requests in results instead of server-initiated requests.
func inputRequestsProtocol(ss *mcp.ServerSession, p *mcp.CallToolParamsRaw) bool {
	if p != nil {
		if v, ok := p.Meta[mcp.MetaKeyProtocolVersion].(string); ok {
			return v >= newProtocolVersion
		}
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= newProtocolVersion
}

// inputRequestsElicit reports whether the call's client announced form elicitation in its per-request
// capabilities (protocol 2026-07-28 and later).
func inputRequestsElicit(p *mcp.CallToolParamsRaw) bool {
	if p == nil {
		return false
	}
	b, err := json.Marshal(p.Meta[mcp.MetaKeyClientCapabilities])
	if err != nil {
		return false
	}
	var caps struct {
		Elicitation *struct {
			Form json.RawMessage `json:"form"`
			URL  json.RawMessage `json:"url"`
		} `json:"elicitation"`
	}
	if strictjson.UnmarshalLenient(b, &caps) != nil || caps.Elicitation == nil {
		return false
	}
	return caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
}

// elicitSchema is the form of the question: no field is required, an optional comment is recorded with
// the decision.
var elicitSchema = json.RawMessage(`{"type":"object","properties":{"comment":{"type":"string","title":"Comment",` +
	`"description":"Optional: recorded with your decision in guard's approval history","maxLength":2000}}}`)

// elicitParams is the question about request ar.
func elicitParams(step *guard.Step, stage guard.Stage, ar *client.ApprovalRequiredError) *mcp.ElicitParams {
	return &mcp.ElicitParams{Mode: "form", Message: elicitMessage(step, stage, ar), RequestedSchema: elicitSchema}
}

// askApproval asks the user to decide request ar by a server-initiated elicitation and records the answer
// (see above). It returns the stage's error after the answer: nil when the call may go on, a refusal
// otherwise.
func (g *Gateway) askApproval(ctx context.Context, ss *mcp.ServerSession, step *guard.Step, stage guard.Stage, ar *client.ApprovalRequiredError) error {
	timeout := g.opts.Approvals.Timeout
	if timeout <= 0 {
		timeout = DefaultElicitTimeout
	}
	ectx, cancel := context.WithTimeout(ctx, timeout)
	res, err := ss.Elicit(ectx, elicitParams(step, stage, ar))
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		g.log.Info("the user was asked to approve the call but gave no answer; the request stays pending", zap.String("tool", step.Name),
			zap.String("approval_id", ar.Approval.ID), zap.Error(err))
		return ar
	}
	return g.recordAnswer(ctx, ss, nil, step, stage, ar, res)
}

// recordAnswer records the user's answer res to the question about request ar and returns the stage's error
// after it: accept approves the request and checks the step again (with the grant, which the client
// remembers); decline rejects it; cancel leaves it pending.
func (g *Gateway) recordAnswer(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolParamsRaw, step *guard.Step, stage guard.Stage, ar *client.ApprovalRequiredError, res *mcp.ElicitResult) error {
	log := g.log.With(zap.String("tool", step.Name), zap.String("stage", string(stage)), zap.String("approval_id", ar.Approval.ID))
	comment, _ := res.Content["comment"].(string)
	who := clientName(ss, p)
	switch res.Action {
	case "accept":
		if comment == "" {
			comment = "Allowed once in the MCP client" + who
		}
		if err := g.opts.Approvals.Decider.DecideApproval(ctx, ar.Approval.ID, true, comment); err != nil && !decidedAlready(err) {
			log.Warn("the user allowed the call but the approval could not be recorded; the request stays pending", zap.Error(err))
			return ar
		}
		log.Info("the user allowed the call once (MCP elicitation)")
		// The client remembers the request: checked again, the call carries the grant and uses it.
		return g.gd.CheckStep(ctx, step, stage)
	case "decline":
		if comment == "" {
			comment = "Declined in the MCP client" + who
		}
		if err := g.opts.Approvals.Decider.DecideApproval(ctx, ar.Approval.ID, false, comment); err != nil && !decidedAlready(err) {
			log.Warn("the user declined the call but the rejection could not be recorded; the request stays pending", zap.Error(err))
		}
		log.Info("the user declined the call (MCP elicitation)")
		rejected := *ar
		rejected.Status, rejected.Comment = guard.ApprovalRejected, comment
		return &rejected
	default: // cancel: the user dismissed the question
		log.Info("the user dismissed the approval question; the request stays pending")
		return ar
	}
}

// decidedAlready reports whether a decision failed because the request was decided meanwhile (in the
// dashboard, say): the check that follows sees that decision.
func decidedAlready(err error) bool {
	var ae *client.APIError
	return errors.As(err, &ae) && ae.Status == 409
}

// clientName is " (<the MCP client's name>)" when the client said its name (at initialize, or in the
// call's _meta from protocol 2026-07-28 on), else "".
func clientName(ss *mcp.ServerSession, p *mcp.CallToolParamsRaw) string {
	name := ""
	if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
		name = ip.ClientInfo.Name
	}
	if p != nil {
		var info mcp.Implementation
		if b, err := json.Marshal(p.Meta[mcp.MetaKeyClientInfo]); err == nil && strictjson.UnmarshalLenient(b, &info) == nil && info.Name != "" {
			name = info.Name
		}
	}
	if name == "" {
		return ""
	}
	if len(name) > 100 {
		name = name[:100]
	}
	return fmt.Sprintf(" (%s)", name)
}

// elicitMessage is the question: which tool, with what, which control asks and why.
func elicitMessage(step *guard.Step, stage guard.Stage, ar *client.ApprovalRequiredError) string {
	what, payload := "call", step.Input
	if stage == guard.StagePost {
		what, payload = "receive the result of", step.Output
	}
	b, err := json.Marshal(payload)
	if err != nil {
		b = []byte("(not JSON)")
	}
	shown := string(b)
	if len(shown) > maxElicitPayload {
		cut := maxElicitPayload
		for cut > 0 && !utf8.RuneStart(shown[cut]) {
			cut--
		}
		shown = shown[:cut] + "…"
	}
	msg := fmt.Sprintf("The agent wants to %s `%s` with %s.\n", what, step.Name, shown)
	if cs := ar.Approval.Controls; len(cs) > 1 {
		// One request covers every approval control that refuses the call: the user answers for all.
		names, reasons := make([]string, len(cs)), make([]string, 0, len(cs))
		for i, c := range cs {
			names[i] = strconv.Quote(c.ControlName)
			if c.Message != "" {
				reasons = append(reasons, c.Message)
			}
		}
		msg += "guard controls " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " ask a person"
		if len(reasons) > 0 {
			msg += ": " + strings.Join(reasons, "; ")
		}
	} else {
		msg += fmt.Sprintf("guard control %q asks a person", ar.Approval.ControlName)
		if ar.Approval.Message != "" {
			msg += ": " + ar.Approval.Message
		}
	}
	return msg + fmt.Sprintf(".\nAllow this exact call once? (approval request %s)", ar.Approval.ID)
}

// runSession is mcp.Server.Run for Gateway.Run: it also hands the session to the fast path's connection,
// so that a call the fast path serves can ask the session's user (checkCall).
func runSession(ctx context.Context, srv *mcp.Server, t *fastTransport) error {
	ss, err := srv.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	if t.conn != nil {
		t.conn.session.Store(ss)
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		_ = ss.Close()
		<-ended
		return ctx.Err()
	case err := <-ended:
		return err
	}
}

// SetApprovals sets Options.Approvals after Connect (the decider may need the agent the gateway's tools
// registered). Call it before Server: calls read it without a lock.
func (g *Gateway) SetApprovals(a *ElicitApprovals) { g.opts.Approvals = a }
