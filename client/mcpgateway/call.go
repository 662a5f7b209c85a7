package mcpgateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/guardrail-control/guard"

	"github.com/guardrail-control/guard/internal/strictjson"
)

// toolHandler returns the handler of one upstream tool: check at pre, forward, check at post.
func (g *Gateway) toolHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return g.callTool(ctx, req.Session, name, req.Params)
	}
}

// callTool checks and forwards one tools/call.
func (g *Gateway) callTool(ctx context.Context, ss *mcp.ServerSession, name string, p *mcp.CallToolParamsRaw) (*mcp.CallToolResult, error) {
	res, _, err := g.callToolRaw(ctx, ss, name, p)
	return res, err
}

// callToolRaw is callTool that also returns the upstream's result as it came (raw) when res is that
// result unchanged and the client can be given those bytes (see decodePlainResult); nil otherwise.
func (g *Gateway) callToolRaw(ctx context.Context, ss *mcp.ServerSession, name string, p *mcp.CallToolParamsRaw) (res *mcp.CallToolResult, raw []byte, err error) {
	g.inflight.Add(1)
	defer g.inflight.Done()
	select {
	case <-g.done:
		return nil, nil, g.upstreamError(ctx, "tools/call", name, mcp.ErrConnectionClosed)
	default:
	}
	if g.down.Load() != nil { // (the message is built only then: this is every call's path)
		if err := g.downError(fmt.Sprintf("tools/call %q", name)); err != nil {
			return nil, nil, err
		}
	}
	args, err := decodeArguments(p.Arguments)
	if err != nil {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call: arguments must be a JSON object"}
	}
	stepName := name
	if g.opts.ToolPrefix != "" {
		stepName = g.opts.ToolPrefix + name
	}
	cs := &callState{step: guard.Step{Type: StepType, Name: stepName, Input: args, Context: g.sessionContext(ctx, ss)}} // one allocation for both
	step := &cs.step
	if res, err := g.checkCall(ctx, ss, p, step, guard.StagePre); res != nil || err != nil {
		return res, nil, err
	}

	callCtx := ctx
	if g.opts.CallTimeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, g.opts.CallTimeout)
		defer cancel()
	}
	fwd := &cs.fwd
	*fwd = mcp.CallToolParams{Meta: upstreamMeta(p.Meta), Name: name}
	if p.InputResponses != nil || p.RequestState != "" {
		fwd.InputResponses, fwd.RequestState = upstreamInput(p) // without the gateway's own question (elicit_input.go)
	}
	if len(p.Arguments) > 0 {
		fwd.Arguments = p.Arguments // as the client sent them, byte for byte
	}
	if replaced(args, step.Input) {
		// A redacting control rewrote the arguments at pre: the upstream gets them redacted.
		b, err := json.Marshal(step.Input)
		if err != nil {
			return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tools/call: the redacted arguments cannot be encoded"}
		}
		fwd.Arguments = json.RawMessage(b)
	}
	if tok := p.GetProgressToken(); tok != nil && ss != nil {
		var done func()
		fwd.Meta, done = g.trackProgress(fwd.Meta, ss, tok)
		defer done()
	}
	res, raw, err = g.forwardCall(callCtx, fwd)
	if err != nil {
		return nil, nil, g.upstreamError(callCtx, "tools/call", name, err)
	}

	if step.Output, err = StepOutput(res); err != nil {
		g.log.Warn("upstream tool result cannot be checked; withholding it", zap.String("tool", name), zap.Error(err))
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("upstream tool %q returned structured content that is not JSON", name)}
	}
	if kinds := UncheckedContent(res); kinds != nil {
		step.Context = map[string]any{UncheckedKey: kinds}
	}
	checked := step.Output
	if blocked, err := g.checkCall(ctx, ss, p, step, guard.StagePost); blocked != nil || err != nil {
		return blocked, nil, err
	}
	if replaced(checked, step.Output) {
		// A redacting control rewrote the output: the client sees the redacted result only.
		res, err = RedactedResult(res, step.Output)
		return res, nil, err
	}
	return res, raw, nil
}

// callState is what callToolRaw builds per call and hands on by pointer.
type callState struct {
	step guard.Step         // checked at pre and post
	fwd  mcp.CallToolParams // forwarded
}

// check evaluates one stage. It returns (nil, nil) to proceed, a tool error result for a deny or a steer,
// and an MCP error when the evaluation itself failed (the call is then not forwarded, or its result is
// withheld: guard fails closed on its own errors, as Protect does).
func (g *Gateway) check(ctx context.Context, step *guard.Step, stage guard.Stage) (*mcp.CallToolResult, error) {
	return g.answer(ctx, step, stage, g.gd.CheckStep(ctx, step, stage))
}

// answer is what check answers for the stage's error err.
func (g *Gateway) answer(ctx context.Context, step *guard.Step, stage guard.Stage, err error) (*mcp.CallToolResult, error) {
	if err == nil {
		return nil, nil
	}
	if res := BlockedResult(stage, err); res != nil {
		return res, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	g.log.Warn("guard evaluation failed", zap.String("tool", step.Name), zap.String("stage", string(stage)), zap.Error(err))
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("guard could not evaluate the %s stage of tool %q; the call was stopped", stage, step.Name)}
}

// decodeArguments turns the raw arguments into the step input: a JSON object (an empty one when the
// client sent none).
func decodeArguments(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	if m, ok := decodeObject(raw); ok {
		return m, nil
	}
	var m map[string]any
	if err := strictjson.UnmarshalLenient(raw, &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// upstreamError turns a failed upstream request into the MCP error the client gets: the upstream's own
// JSON-RPC error as it is, a clear message for a timeout, a cancellation or a vanished upstream.
func (g *Gateway) upstreamError(ctx context.Context, method, tool string, err error) error {
	what := method
	if tool != "" {
		what = fmt.Sprintf("%s %q", method, tool)
	}
	var je *jsonrpc.Error
	if g.opts.Reconnect && g.relay == nil && transportFailed(err) && ctx.Err() == nil {
		// The upstream went away: reconnectLoop takes over, and the client is told so.
		g.upstreamFailed(g.upstream(), err)
		if derr := g.downErrorSoon(what); derr != nil {
			return derr
		}
	}
	switch {
	case errors.As(err, &je):
		return je
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && g.opts.CallTimeout > 0:
		g.log.Warn("upstream request timed out", zap.String("method", method), zap.String("tool", tool),
			zap.Duration("timeout", g.opts.CallTimeout))
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("upstream MCP server did not answer %s within %s (the gateway's call timeout)", what, g.opts.CallTimeout)}
	case ctx.Err() != nil:
		return ctx.Err() // the client cancelled the request: the SDK answers nothing
	case errors.Is(err, mcp.ErrConnectionClosed) || g.goneSoon():
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("%s (it exited, closed the connection or stopped speaking JSON-RPC) during %s: %v", errUpstreamGone, what, err)}
	default:
		g.log.Warn("upstream request failed", zap.String("method", method), zap.String("tool", tool), zap.Error(err))
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("upstream MCP server failed %s: %v", what, err)}
	}
}

// goneGrace is how long a failed request waits to learn whether the upstream connection is ending: a
// broken stream fails the requests in flight a moment before the session reports its end.
const goneGrace = time.Second

// goneSoon reports whether the upstream connection ends within goneGrace.
func (g *Gateway) goneSoon() bool {
	t := time.NewTimer(goneGrace)
	defer t.Stop()
	select {
	case <-g.done:
		return true
	case <-t.C:
		return false
	}
}

// upstreamMeta is the _meta of a client's request as the upstream gets it: without the keys of the protocol
// ("io.modelcontextprotocol/..."), which describe the client's session with the gateway (from 2026-07-28 on,
// its version, name and capabilities), not the gateway's session with the upstream, which the SDK
// describes itself. m itself is not modified.
func upstreamMeta(m mcp.Meta) mcp.Meta {
	for k := range m {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			out := make(mcp.Meta, len(m))
			for k, v := range m {
				if !strings.HasPrefix(k, "io.modelcontextprotocol/") {
					out[k] = v
				}
			}
			if len(out) == 0 {
				return nil
			}
			return out
		}
	}
	return m
}

// sessionContext is the step context of a call: the MCP session's id as context.session_id, so that
// controls reading session state (docs/control-language.md, "Sessions") see the calls of one client
// session together. A stdio gateway serves one client: its calls share the gateway's own session id
// (Options.SessionID when given). Over HTTP a request's SessionHeader names the session instead.
func (g *Gateway) sessionContext(ctx context.Context, ss *mcp.ServerSession) map[string]any {
	if id, ok := ctx.Value(headerSessionKey{}).(string); ok {
		return map[string]any{"session_id": id}
	}
	if ss != nil {
		if id := ss.ID(); id != "" && len("mcp-")+len(id) <= guard.MaxSessionIDBytes {
			return map[string]any{"session_id": "mcp-" + id}
		}
	}
	return g.procSession
}

// SessionHeader is the HTTP header (guard mcp --listen) that names the guard session of a request's tool
// calls, as Options.SessionID does for stdio: the id the agent's other guarded calls use. A value longer
// than guard.MaxSessionIDBytes is ignored.
const SessionHeader = "Guard-Session-Id"

type headerSessionKey struct{}

// withHeaderSession is ctx with the session id of req's SessionHeader, when it has one.
func withHeaderSession(ctx context.Context, req mcp.Request) context.Context {
	if req == nil {
		return ctx
	}
	extra := req.GetExtra()
	if extra == nil || extra.Header == nil {
		return ctx
	}
	if id := extra.Header.Get(SessionHeader); id != "" && len(id) <= guard.MaxSessionIDBytes {
		return context.WithValue(ctx, headerSessionKey{}, id)
	}
	return ctx
}
