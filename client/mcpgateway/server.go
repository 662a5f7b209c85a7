//lint:file-ignore SA1019 MCP's sampling, roots and logging are deprecated from protocol 2026-07-28 on, but they are the session protocol's, which the gateway's clients and upstreams speak: it passes them on.

package mcpgateway

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server returns the MCP server the clients talk to: it serves the upstream's tools, each call checked by
// gd, and passes resources, resource templates, prompts and completions through to the upstream. Run it
// on any transport (mcp.StdioTransport, mcp.NewStreamableHTTPHandler, an in-memory pipe); several client
// sessions may share it and the upstream connection. It is built on the first call; later calls return
// the same server (gd is then ignored).
func (g *Gateway) Server(gd Guard) *mcp.Server {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.srv != nil {
		return g.srv
	}
	ir := g.upstream().InitializeResult()
	impl := &mcp.Implementation{Name: "guard-mcp-gateway", Version: "1"}
	var upCaps mcp.ServerCapabilities
	instructions := ""
	if ir != nil {
		if ir.ServerInfo != nil {
			// The client sees the upstream's name: the gateway stands in for it.
			impl = ir.ServerInfo
		}
		if ir.Capabilities != nil {
			upCaps = *ir.Capabilities
		}
		instructions = ir.Instructions
	}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	// Passed-through features are announced as the upstream announced them, minus what the gateway does
	// not forward: list-changed notifications and subscriptions of prompts and resources.
	if upCaps.Prompts != nil {
		caps.Prompts = &mcp.PromptCapabilities{}
	}
	if upCaps.Resources != nil {
		caps.Resources = &mcp.ResourceCapabilities{}
	}
	if upCaps.Completions != nil {
		caps.Completions = &mcp.CompletionCapabilities{}
	}
	if upCaps.Logging != nil {
		caps.Logging = &mcp.LoggingCapabilities{}
	}
	srv := mcp.NewServer(impl, &mcp.ServerOptions{Instructions: instructions, Capabilities: caps,
		RootsListChangedHandler: g.onRootsChanged, InitializedHandler: g.clientInitialized})
	srv.AddReceivingMiddleware(g.passThrough, g.announceSource)
	for _, t := range g.tools {
		g.addTool(srv, t)
	}
	g.srv, g.gd = srv, gd
	return srv
}

// exposed is the name clients see of the upstream's tool name (Options.ToolPrefix).
func (g *Gateway) exposed(name string) string { return g.opts.ToolPrefix + name }

// addTool serves the upstream's tool t on srv, under its exposed name.
func (g *Gateway) addTool(srv *mcp.Server, t *mcp.Tool) {
	if g.opts.ToolPrefix != "" {
		cp := *t
		cp.Name = g.exposed(t.Name)
		t = &cp
	}
	srv.AddTool(t, g.toolHandler(t.Name[len(g.opts.ToolPrefix):]))
}

// attach makes srv, built by an Aggregate, the server of the gateway's tools (instead of Server's own):
// the tools are added to it under their exposed names, and gd decides.
func (g *Gateway) attach(srv *mcp.Server, gd Guard) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, t := range g.tools {
		g.addTool(srv, t)
	}
	g.srv, g.gd = srv, gd
}

// passThrough forwards the requests of the features the gateway does not check to the upstream, with
// their parameters as the client sent them, and returns the upstream's answers as they are.
func (g *Gateway) passThrough(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctx, release := g.handlerContext(ctx)
		defer release()
		ctx = withHeaderSession(ctx, req)
		if sessionProtocol(req) {
			ctx = withRawWanted(ctx)
		}
		var res mcp.Result
		var err error
		switch r := req.(type) {
		case *mcp.ListPromptsRequest:
			res, err = forward(g, ctx, method, func(ctx context.Context) (*mcp.ListPromptsResult, error) {
				return g.upstream().ListPrompts(ctx, r.Params)
			})
		case *mcp.GetPromptRequest:
			res, err = forward(g, ctx, method, func(ctx context.Context) (*mcp.GetPromptResult, error) { return g.upstream().GetPrompt(ctx, r.Params) })
		case *mcp.ListResourcesRequest:
			res, err = forward(g, ctx, method, func(ctx context.Context) (*mcp.ListResourcesResult, error) {
				return g.upstream().ListResources(ctx, r.Params)
			})
		case *mcp.ListResourceTemplatesRequest:
			res, err = forward(g, ctx, method, func(ctx context.Context) (*mcp.ListResourceTemplatesResult, error) {
				return g.upstream().ListResourceTemplates(ctx, r.Params)
			})
		case *mcp.ReadResourceRequest:
			res, err = forward(g, ctx, method, func(ctx context.Context) (*mcp.ReadResourceResult, error) {
				return g.upstream().ReadResource(ctx, r.Params)
			})
		case *mcp.CompleteRequest:
			res, err = forward(g, ctx, method, func(ctx context.Context) (*mcp.CompleteResult, error) { return g.upstream().Complete(ctx, r.Params) })
		case *mcp.ServerRequest[*mcp.SetLoggingLevelParams]:
			// The upstream filters its log messages by the level too; the SDK's session records it for
			// the messages the gateway passes on (onLog).
			if err := g.setUpstreamLevel(ctx, r.Params); err != nil {
				return nil, err
			}
			return next(ctx, method, req)
		case *mcp.ListToolsRequest:
			// The tools as the upstream wrote them (execution, annotations as they are: raw.go).
			res, err = next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && sessionProtocol(req) {
				g.mu.Lock()
				order := make(map[string]int, len(g.tools))
				for i, t := range g.tools {
					order[t.Name] = i
				}
				res = rawToolList{ListToolsResult: lr, tools: g.rawTools, order: order, extra: g.rawExtra}
				g.mu.Unlock()
			}
		case *mcp.CallToolRequest:
			if r.Params != nil && !g.serves(r.Params.Name) {
				// A tool the upstream did not list: checked as any other and forwarded, so that the client
				// gets the upstream's own answer (most often an isError result), as it would directly.
				res, err = g.callTool(ctx, r.Session, r.Params.Name, r.Params)
				if err == nil && res.(*mcp.CallToolResult) == nil {
					res = nil
				}
				return res, err
			}
			return next(ctx, method, req)
		default:
			return next(ctx, method, req)
		}
		return res, err
	}
}

// forward runs one passed-through request with the call timeout and turns a failure into an MCP error.
// (A nil *R is never returned inside a non-nil mcp.Result.)
func forward[R mcp.Result](g *Gateway, ctx context.Context, method string, call func(context.Context) (R, error)) (mcp.Result, error) {
	g.inflight.Add(1)
	defer g.inflight.Done()
	if err := g.downError(method); err != nil {
		return nil, err
	}
	if g.opts.CallTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.opts.CallTimeout)
		defer cancel()
	}
	if !rawWanted(ctx) {
		res, err := call(ctx)
		if err != nil {
			return nil, g.upstreamError(ctx, method, "", err)
		}
		return res, nil
	}
	ctx, slot := withRawSlot(ctx)
	res, err := call(ctx)
	if err != nil {
		return nil, g.upstreamError(ctx, method, "", err)
	}
	return asRaw(res, slot), nil
}

// errUpstreamGone is what calls get once the upstream connection has ended.
var errUpstreamGone = errors.New("upstream MCP server is gone")

// setUpstreamLevel passes a client's logging/setLevel on to the upstream, as forward does a request.
func (g *Gateway) setUpstreamLevel(ctx context.Context, p *mcp.SetLoggingLevelParams) error {
	g.inflight.Add(1)
	defer g.inflight.Done()
	const method = "logging/setLevel"
	if err := g.downError(method); err != nil {
		return err
	}
	if g.opts.CallTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.opts.CallTimeout)
		defer cancel()
	}
	if err := g.upstream().SetLoggingLevel(ctx, p); err != nil {
		return g.upstreamError(ctx, method, "", err)
	}
	return nil
}
