//lint:file-ignore SA1019 MCP's sampling, roots and logging are deprecated from protocol 2026-07-28 on, but they are the session protocol's, which the gateway's clients and upstreams speak: it passes them on.

package mcpgateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/guardrail-control/guard"

	"github.com/guardrail-control/guard/internal/strictjson"
)

// The requests of the upstream to the client (MCP's server-initiated requests): sampling (the upstream asks
// the client's model for a completion), elicitation (it asks the user for input) and roots (it asks which
// directories it may work in). The gateway announces these capabilities to the upstream (Options.
// ClientCapabilities) and passes each request to a client session that announced the same capability,
// checked as a step both ways:
//
//   - type StepTypeServerRequest, name the MCP method ("sampling/createMessage", "elicitation/create",
//     "roots/list");
//   - stage pre: the input is the request's params as JSON (for sampling: messages, systemPrompt, ...; for
//     elicitation: message, requestedSchema, ...). A deny or a steer answers the upstream with a JSON-RPC
//     error (code CodeBlocked) and the client never sees the request; a redaction sends the redacted params;
//   - stage post: the output is the client's answer as JSON (the model's message, the user's form content,
//     the roots). A deny or a steer answers the upstream with the same error; a redaction returns the
//     redacted answer.

// StepTypeServerRequest is the step type of the upstream's requests to the client.
const StepTypeServerRequest = "mcp_server_request"

// The names of the steps of type StepTypeServerRequest: the MCP methods.
const (
	StepSampling    = "sampling/createMessage"
	StepElicitation = "elicitation/create"
	StepRoots       = "roots/list"
)

// CodeBlocked is the JSON-RPC error code the upstream gets for a request of its own that a control denied or
// steered: -1, the code MCP's specification shows for a sampling request the user rejected. The error's
// message is the one a blocked tool call's text has; its data is {"guard": <the _meta of BlockedResult>}.
const CodeBlocked = -1

// defaultClientCapabilities are the capabilities the gateway announces to the upstream by default: all that
// it forwards, so that an upstream offers what depends on them (server-everything's sampling and
// elicitation tools) to the clients that announce them too.
func defaultClientCapabilities() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{
		Sampling:    &mcp.SamplingCapabilities{},
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}},
		RootsV2:     &mcp.RootCapabilities{ListChanged: true},
	}
}

// fromUpstream is the receiving middleware of the gateway's client session with the upstream: it passes the
// upstream's requests to the client (see above).
func (g *Gateway) fromUpstream(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch req.(type) {
		case *mcp.CreateMessageWithToolsRequest, *mcp.ElicitRequest, *mcp.ListRootsRequest:
			g.awaitFirstClient(ctx)
		}
		switch r := req.(type) {
		case *mcp.CreateMessageWithToolsRequest:
			ss := g.clientWith(func(c *mcp.ClientCapabilities) bool { return c.Sampling != nil })
			if ss == nil {
				return nil, notAdvertised(method, "sampling")
			}
			return serverRequest(g, ctx, method, r.Params, func(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
				return ss.CreateMessageWithTools(ctx, p)
			})
		case *mcp.ElicitRequest:
			ss := g.clientWith(func(c *mcp.ClientCapabilities) bool { return c.Elicitation != nil })
			if ss == nil {
				return nil, notAdvertised(method, "elicitation")
			}
			return serverRequest(g, ctx, method, r.Params, func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return ss.Elicit(ctx, p)
			})
		case *mcp.ListRootsRequest:
			ss := g.clientWith(func(c *mcp.ClientCapabilities) bool { return c.RootsV2 != nil })
			if ss == nil {
				return nil, notAdvertised(method, "roots")
			}
			return serverRequest(g, ctx, method, r.Params, func(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
				return ss.ListRoots(ctx, p)
			})
		}
		return next(ctx, method, req)
	}
}

// firstClientWait bounds how long a request of the upstream waits for the first client session: an
// upstream asks for the roots as soon as it is initialized (server-filesystem, server-everything), which is
// before any client has connected to the gateway.
const firstClientWait = 30 * time.Second

// awaitFirstClient waits until a client session has initialized (see firstClientWait), or ctx ends.
func (g *Gateway) awaitFirstClient(ctx context.Context) {
	t := time.NewTimer(firstClientWait)
	defer t.Stop()
	select {
	case <-g.firstClient:
	case <-ctx.Done():
	case <-t.C:
	case <-g.stop:
	}
}

// clientInitialized is the server's InitializedHandler: it lets the requests waiting for a first client go.
func (g *Gateway) clientInitialized(context.Context, *mcp.InitializedRequest) {
	g.firstClientOnce.Do(func() { close(g.firstClient) })
}

// notAdvertised is the error the upstream gets when no client announced the capability: what a client
// without it answers (method not found).
func notAdvertised(method, capability string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
		Message: fmt.Sprintf("%s: the client of the guard MCP gateway did not announce the %s capability", method, capability)}
}

// clientWith returns the client session that announced a capability (has says which) in a version of the
// session protocol (before 2026-07-28, which has no server-initiated requests): the latest one to connect,
// when several share the upstream; nil when none did.
func (g *Gateway) clientWith(has func(*mcp.ClientCapabilities) bool) *mcp.ServerSession {
	g.mu.Lock()
	srv := g.srv
	g.mu.Unlock()
	if srv == nil {
		return nil
	}
	var found *mcp.ServerSession
	for ss := range srv.Sessions() {
		if ip := ss.InitializeParams(); ip != nil && ip.Capabilities != nil && has(ip.Capabilities) && ip.ProtocolVersion < newProtocolVersion {
			found = ss
		}
	}
	return found
}

// serverRequest checks one request of the upstream at pre, sends it to the client (send), and checks the
// answer at post.
func serverRequest[P any, R mcp.Result](g *Gateway, ctx context.Context, method string, params P, send func(context.Context, P) (R, error)) (mcp.Result, error) {
	g.inflight.Add(1)
	defer g.inflight.Done()
	ctx, release := g.handlerContext(ctx)
	defer release()
	g.mu.Lock()
	gd := g.gd
	g.mu.Unlock()
	if gd == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: method + ": the guard MCP gateway has no controls yet"}
	}
	in, err := asObject(params)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + ": params cannot be checked: " + err.Error()}
	}
	step := &guard.Step{Type: StepTypeServerRequest, Name: method, Input: in}
	if err := g.checkServerRequest(ctx, gd, step, guard.StagePre); err != nil {
		return nil, err
	}
	if replaced(in, step.Input) {
		var redacted P
		if err := remarshal(step.Input, &redacted); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: method + ": the redacted params cannot be encoded"}
		}
		params = redacted
	}
	res, err := send(ctx, params)
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return nil, je
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: the client did not answer: %v", method, err)}
	}
	out, err := asObject(res)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: method + ": the client's answer cannot be checked: " + err.Error()}
	}
	step.Output = out
	if err := g.checkServerRequest(ctx, gd, step, guard.StagePost); err != nil {
		return nil, err
	}
	if replaced(out, step.Output) {
		var redacted R
		if err := remarshal(step.Output, &redacted); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: method + ": the redacted answer cannot be encoded"}
		}
		return redacted, nil
	}
	return res, nil
}

// checkServerRequest evaluates one stage of a request of the upstream: nil to proceed, else the error the
// upstream gets (CodeBlocked for a deny or a steer; the gateway fails closed on its own errors).
func (g *Gateway) checkServerRequest(ctx context.Context, gd Guard, step *guard.Step, stage guard.Stage) error {
	err := gd.CheckStep(ctx, step, stage)
	if err == nil {
		return nil
	}
	if blocked := BlockedResult(stage, err); blocked != nil {
		text := blocked.Content[0].(*mcp.TextContent).Text
		data, _ := json.Marshal(map[string]any{MetaKey: blocked.Meta[MetaKey]})
		g.log.Info("upstream request blocked", zap.String("method", step.Name), zap.String("stage", string(stage)))
		return &jsonrpc.Error{Code: CodeBlocked, Message: text, Data: data}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	g.log.Warn("guard evaluation failed", zap.String("method", step.Name), zap.String("stage", string(stage)), zap.Error(err))
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("guard could not evaluate the %s stage of %s; the request was stopped", stage, step.Name)}
}

// asObject is v as a JSON object (an empty one for nil).
func asObject(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if string(b) == "null" {
		return m, nil
	}
	if err := strictjson.UnmarshalLenient(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// remarshal decodes the JSON of v into out.
func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return strictjson.UnmarshalLenient(b, out)
}

// onLog passes the upstream's log messages on to every client session; the SDK's session sends them once
// the client has set a level (logging/setLevel, which the gateway also passes to the upstream), at or
// above it.
func (g *Gateway) onLog(ctx context.Context, req *mcp.LoggingMessageRequest) {
	if req == nil || req.Params == nil {
		return
	}
	g.mu.Lock()
	srv := g.srv
	g.mu.Unlock()
	if srv == nil {
		return
	}
	for ss := range srv.Sessions() {
		if err := ss.Log(ctx, req.Params); err != nil {
			g.log.Debug("log message not delivered", zap.Error(err))
		}
	}
}

// onRootsChanged tells the upstream that a client's roots changed (notifications/roots/list_changed): the
// SDK's client sends it on a change of its own roots, which the gateway never lists (roots/list goes to
// the client), so adding the same placeholder root again only sends the notification.
func (g *Gateway) onRootsChanged(context.Context, *mcp.RootsListChangedRequest) {
	g.client.AddRoots(&mcp.Root{URI: "guard-gateway:roots-changed"})
}
