//lint:file-ignore SA1019 MCP's sampling, roots and logging are the session protocol's, which the gateway's clients and upstreams speak: it passes them on.

package mcpgateway

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
)

// One gateway, many upstreams. An Aggregate serves the tools, prompts and resources of several upstream
// servers (each a Gateway, connected on its own) to its clients as one server, each tool call checked by
// one Guard: one client session is one guard session across all of them, so that session controls (the
// Rule of Two above all) see every server's steps in their order.
//
// Names. Every tool and prompt is served as <server>__<name> (ToolPrefix): the upstream's own name after
// the server's name (its key in the configuration, with every character other than a letter, a digit, '_'
// or '-' replaced by '_') and two underscores; guard's steps carry the same names. Always, not only where
// two servers' names collide: a server that adds a tool never renames another's, and controls and labels
// name one tool for good. Resources keep their URIs (they are addresses): resources/read goes to the
// server that listed the URI, else to each server with resources in turn until one has it.
//
// Routing: a tools/call or prompts/get goes to the server of its prefix, with the upstream's own name.
// list_changed: a change of any upstream's tools is served at once (the clients get
// notifications/tools/list_changed) and the Guard gets the whole new list of steps.

// ServerSeparator separates the server's name from the upstream's own name of a tool or a prompt.
const ServerSeparator = "__"

// Member is one upstream of an Aggregate: its name (the key of the configuration) and its gateway,
// connected with Options.ToolPrefix = ToolPrefix(Name).
type Member struct {
	Name    string
	Gateway *Gateway
}

var unsafeNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ToolPrefix is the prefix of the tools and prompts of the server called name in an Aggregate.
func ToolPrefix(name string) string {
	p := unsafeNameChars.ReplaceAllString(name, "_")
	if p == "" {
		p = "server"
	}
	return p + ServerSeparator
}

// Aggregate is one MCP server in front of several upstreams. Create it with NewAggregate, serve clients
// with Server and Run (stdio) or mcp.NewStreamableHTTPHandler, and Close it when done.
type Aggregate struct {
	members []Member
	log     *zap.Logger

	mu    sync.Mutex
	srv   *mcp.Server
	gd    Guard
	steps map[int][]guard.StepSchema // by member index, as each last synchronised
	owner map[string]int             // resource URI -> member that listed it

	done chan struct{} // closed once every upstream connection has ended
}

// NewAggregate makes one server of members, whose gateways were connected with the ToolPrefix of their
// names. Two members of the same prefix are an error.
func NewAggregate(members []Member, logger *zap.Logger) (*Aggregate, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	seen := map[string]string{}
	for _, m := range members {
		p := ToolPrefix(m.Name)
		if other, dup := seen[p]; dup {
			return nil, fmt.Errorf("mcp gateway: servers %q and %q get the same tool prefix %q: rename one", other, m.Name, p)
		}
		seen[p] = m.Name
		if m.Gateway.opts.ToolPrefix != p {
			return nil, fmt.Errorf("mcp gateway: server %q: its gateway must be connected with ToolPrefix %q", m.Name, p)
		}
	}
	a := &Aggregate{members: members, log: logger, steps: map[int][]guard.StepSchema{}, owner: map[string]int{}, done: make(chan struct{})}
	go func() {
		for _, m := range members {
			<-m.Gateway.Done()
		}
		close(a.done)
	}()
	return a, nil
}

// Members returns the upstreams, in their order.
func (a *Aggregate) Members() []Member { return a.members }

// Steps returns the steps of every upstream's tools, in the members' order.
func (a *Aggregate) Steps() []guard.StepSchema {
	var out []guard.StepSchema
	for _, m := range a.members {
		out = append(out, m.Gateway.Steps()...)
	}
	return out
}

// Done is closed when every upstream connection has ended.
func (a *Aggregate) Done() <-chan struct{} { return a.done }

// Close closes every upstream connection (Gateway.Close), all at once.
func (a *Aggregate) Close() error {
	errs := make([]error, len(a.members))
	var wg sync.WaitGroup
	for i, m := range a.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Gateway.Close(); err != nil {
				errs[i] = fmt.Errorf("%s: %w", m.Name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// memberGuard is the Guard of one member: checks go to the aggregate's Guard; a member's new steps are
// handed to it with every other member's.
type memberGuard struct {
	a   *Aggregate
	idx int
}

func (m memberGuard) CheckStep(ctx context.Context, step *guard.Step, stage guard.Stage) error {
	return m.a.gd.CheckStep(ctx, step, stage)
}

func (m memberGuard) SyncSteps(ctx context.Context, steps []guard.StepSchema) error {
	m.a.mu.Lock()
	m.a.steps[m.idx] = steps
	var all []guard.StepSchema
	for i := range m.a.members {
		all = append(all, m.a.steps[i]...)
	}
	m.a.mu.Unlock()
	return m.a.gd.SyncSteps(ctx, all)
}

// ControlSource implements ControlSourcer when the aggregate's Guard does.
func (m memberGuard) ControlSource() string {
	if cs, ok := m.a.gd.(ControlSourcer); ok {
		return cs.ControlSource()
	}
	return ""
}

// Server returns the one server of all the upstreams, each call checked by gd; built on the first call.
func (a *Aggregate) Server(gd Guard) *mcp.Server {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.srv != nil {
		return a.srv
	}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	var instructions []string
	for i, m := range a.members {
		a.steps[i] = m.Gateway.Steps()
		ir := m.Gateway.Upstream()
		if ir == nil || ir.Capabilities == nil {
			continue
		}
		if ir.Capabilities.Prompts != nil {
			caps.Prompts = &mcp.PromptCapabilities{}
		}
		if ir.Capabilities.Resources != nil {
			caps.Resources = &mcp.ResourceCapabilities{}
		}
		if ir.Capabilities.Completions != nil {
			caps.Completions = &mcp.CompletionCapabilities{}
		}
		if ir.Capabilities.Logging != nil {
			caps.Logging = &mcp.LoggingCapabilities{}
		}
		if ir.Instructions != "" {
			instructions = append(instructions, fmt.Sprintf("Server %q (tools and prompts named %s...): %s", m.Name, ToolPrefix(m.Name), ir.Instructions))
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "guard-mcp-gateway", Version: "1"}, &mcp.ServerOptions{
		Instructions: strings.Join(instructions, "\n\n"), Capabilities: caps,
		RootsListChangedHandler: func(ctx context.Context, r *mcp.RootsListChangedRequest) {
			for _, m := range a.members {
				m.Gateway.onRootsChanged(ctx, r)
			}
		},
		InitializedHandler: func(ctx context.Context, r *mcp.InitializedRequest) {
			for _, m := range a.members {
				m.Gateway.clientInitialized(ctx, r)
			}
		},
	})
	a.srv, a.gd = srv, gd
	for i, m := range a.members {
		m.Gateway.attach(srv, memberGuard{a: a, idx: i})
	}
	srv.AddReceivingMiddleware(a.route, a.announceSource)
	return srv
}

// member returns the member whose prefix starts name (the longest, should one prefix start another:
// servers "a" and "a__b"), and the upstream's own name; nil when none.
func (a *Aggregate) member(name string) (*Member, string) {
	best := -1
	for i := range a.members {
		if p := a.members[i].Gateway.opts.ToolPrefix; strings.HasPrefix(name, p) && (best < 0 || len(p) > len(a.members[best].Gateway.opts.ToolPrefix)) {
			best = i
		}
	}
	if best < 0 {
		return nil, ""
	}
	return &a.members[best], name[len(a.members[best].Gateway.opts.ToolPrefix):]
}

// has reports whether the member's upstream announced a capability (which says which).
func has(m Member, which func(*mcp.ServerCapabilities) bool) bool {
	ir := m.Gateway.Upstream()
	return ir != nil && ir.Capabilities != nil && which(ir.Capabilities)
}

// route is the receiving middleware of the aggregate's server: it sends each request to its upstream, and
// gathers the lists of all of them.
func (a *Aggregate) route(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctx = withHeaderSession(ctx, req)
		switch r := req.(type) {
		case *mcp.CallToolRequest:
			if r.Params == nil {
				return next(ctx, method, req)
			}
			m, name := a.member(r.Params.Name)
			if m == nil {
				return next(ctx, method, req) // the SDK's "unknown tool"
			}
			ctx, release := m.Gateway.handlerContext(ctx) // ended by Run on a cancelled context, and by Close
			defer release()
			if !m.Gateway.serves(name) {
				// A tool the upstream did not list: checked and forwarded, so that the client gets that
				// upstream's own answer (see Gateway's passThrough).
				res, err := m.Gateway.callTool(ctx, r.Session, name, r.Params)
				if err == nil && res == nil {
					return nil, nil
				}
				return res, err
			}
			return next(ctx, method, req)
		case *mcp.ListPromptsRequest:
			out := &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{}}
			for _, m := range a.members {
				if !has(m, func(c *mcp.ServerCapabilities) bool { return c.Prompts != nil }) {
					continue
				}
				err := eachPage(ctx, m, method, func(ctx context.Context, cursor string) (string, error) {
					res, err := m.Gateway.upstream().ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
					if err != nil {
						return "", err
					}
					for _, p := range res.Prompts {
						cp := *p
						cp.Name = m.Gateway.exposed(p.Name)
						out.Prompts = append(out.Prompts, &cp)
					}
					return res.NextCursor, nil
				})
				a.logListFailure(m, method, err)
			}
			return out, nil
		case *mcp.GetPromptRequest:
			if r.Params != nil {
				if m, name := a.member(r.Params.Name); m != nil {
					p := *r.Params
					p.Name = name
					return forward(m.Gateway, ctx, method, func(ctx context.Context) (*mcp.GetPromptResult, error) {
						return m.Gateway.upstream().GetPrompt(ctx, &p)
					})
				}
			}
			return next(ctx, method, req)
		case *mcp.ListResourcesRequest:
			out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
			for i, m := range a.members {
				if !has(m, func(c *mcp.ServerCapabilities) bool { return c.Resources != nil }) {
					continue
				}
				err := eachPage(ctx, m, method, func(ctx context.Context, cursor string) (string, error) {
					res, err := m.Gateway.upstream().ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
					if err != nil {
						return "", err
					}
					a.mu.Lock()
					for _, rs := range res.Resources {
						if _, taken := a.owner[rs.URI]; !taken {
							a.owner[rs.URI] = i
						}
					}
					a.mu.Unlock()
					out.Resources = append(out.Resources, res.Resources...)
					return res.NextCursor, nil
				})
				a.logListFailure(m, method, err)
			}
			return out, nil
		case *mcp.ListResourceTemplatesRequest:
			out := &mcp.ListResourceTemplatesResult{ResourceTemplates: []*mcp.ResourceTemplate{}}
			for _, m := range a.members {
				if !has(m, func(c *mcp.ServerCapabilities) bool { return c.Resources != nil }) {
					continue
				}
				err := eachPage(ctx, m, method, func(ctx context.Context, cursor string) (string, error) {
					res, err := m.Gateway.upstream().ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
					if err != nil {
						return "", err
					}
					out.ResourceTemplates = append(out.ResourceTemplates, res.ResourceTemplates...)
					return res.NextCursor, nil
				})
				a.logListFailure(m, method, err)
			}
			return out, nil
		case *mcp.ReadResourceRequest:
			if r.Params == nil {
				return next(ctx, method, req)
			}
			return a.tryMembers(ctx, method, r.Params.URI, func(c *mcp.ServerCapabilities) bool { return c.Resources != nil },
				func(ctx context.Context, m Member) (mcp.Result, error) {
					return forward(m.Gateway, ctx, method, func(ctx context.Context) (*mcp.ReadResourceResult, error) {
						return m.Gateway.upstream().ReadResource(ctx, r.Params)
					})
				})
		case *mcp.CompleteRequest:
			if r.Params == nil || r.Params.Ref == nil {
				return next(ctx, method, req)
			}
			if r.Params.Ref.Type == "ref/prompt" {
				if m, name := a.member(r.Params.Ref.Name); m != nil {
					p, ref := *r.Params, *r.Params.Ref
					ref.Name, p.Ref = name, &ref
					return forward(m.Gateway, ctx, method, func(ctx context.Context) (*mcp.CompleteResult, error) {
						return m.Gateway.upstream().Complete(ctx, &p)
					})
				}
				return next(ctx, method, req)
			}
			return a.tryMembers(ctx, method, r.Params.Ref.URI, func(c *mcp.ServerCapabilities) bool { return c.Completions != nil },
				func(ctx context.Context, m Member) (mcp.Result, error) {
					return forward(m.Gateway, ctx, method, func(ctx context.Context) (*mcp.CompleteResult, error) {
						return m.Gateway.upstream().Complete(ctx, r.Params)
					})
				})
		case *mcp.ServerRequest[*mcp.SetLoggingLevelParams]:
			var errs []error
			for _, m := range a.members {
				if has(m, func(c *mcp.ServerCapabilities) bool { return c.Logging != nil }) {
					if err := m.Gateway.setUpstreamLevel(ctx, r.Params); err != nil {
						errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
					}
				}
			}
			if err := errors.Join(errs...); err != nil {
				a.log.Warn("logging/setLevel failed on an upstream", zap.Error(err))
			}
			return next(ctx, method, req)
		}
		return next(ctx, method, req)
	}
}

// maxListPages bounds the pages read of one upstream's list.
const maxListPages = 1000

// eachPage reads every page of one member's list (page returns the next cursor), bounded by the call
// timeout.
func eachPage(ctx context.Context, m Member, method string, page func(context.Context, string) (string, error)) error {
	if err := m.Gateway.downError(method); err != nil {
		return err
	}
	if t := m.Gateway.opts.CallTimeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	cursor := ""
	for range maxListPages {
		next, err := page(ctx, cursor)
		if err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		cursor = next
	}
	return fmt.Errorf("more than %d pages", maxListPages)
}

// logListFailure logs a member whose list could not be read: the others' are served.
func (a *Aggregate) logListFailure(m Member, method string, err error) {
	if err != nil {
		a.log.Warn("an upstream's list is left out", zap.String("server", m.Name), zap.String("method", method), zap.Error(err))
	}
}

// tryMembers sends a request about uri to the member that listed it, else to each member with the
// capability in turn until one answers without an error (the last error otherwise).
func (a *Aggregate) tryMembers(ctx context.Context, method, uri string, capable func(*mcp.ServerCapabilities) bool,
	send func(context.Context, Member) (mcp.Result, error)) (mcp.Result, error) {
	a.mu.Lock()
	i, known := a.owner[uri]
	a.mu.Unlock()
	if known {
		return send(ctx, a.members[i])
	}
	var last error = fmt.Errorf("%s: no upstream server has %q", method, uri)
	for _, m := range a.members {
		if !has(m, capable) {
			continue
		}
		res, err := send(ctx, m)
		if err == nil {
			return res, nil
		}
		last = err
	}
	return nil, last
}

// announceSource is Gateway.announceSource for the aggregate's Guard.
func (a *Aggregate) announceSource(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		a.mu.Lock()
		cs, ok := a.gd.(ControlSourcer)
		a.mu.Unlock()
		if !ok {
			return res, err
		}
		if r, ok := res.(*mcp.InitializeResult); ok && r != nil {
			cp := *r
			cp.Meta, cp.Instructions = withSource(r.Meta, r.Instructions, cs.ControlSource())
			return &cp, nil
		}
		return res, err
	}
}

// Run serves one client session over t (stdio), until the client closes its side (nil) or ctx is done
// (ctx's error), as Gateway.Run does: on ctx done the requests in flight are ended first. (The fast path
// of Gateway.Run is for one upstream: here every request goes through the SDK's server session.)
func (a *Aggregate) Run(ctx context.Context, t mcp.Transport) error {
	a.mu.Lock()
	srv := a.srv
	a.mu.Unlock()
	if srv == nil {
		return ErrNoServer
	}
	ss, err := srv.Connect(context.WithoutCancel(ctx), t, nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err := <-ended:
		return err
	case <-ctx.Done():
		for _, m := range a.members {
			m.Gateway.cancelHandlers()
		}
		_ = ss.Close()
		<-ended
		return ctx.Err()
	}
}

// Drain waits until every upstream's calls in flight have answered, or ctx is done.
func (a *Aggregate) Drain(ctx context.Context) {
	for _, m := range a.members {
		m.Gateway.Drain(ctx)
	}
}

// Err returns why the upstream connections ended, once Done is closed.
func (a *Aggregate) Err() error {
	var errs []error
	for _, m := range a.members {
		if err := m.Gateway.Err(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
		}
	}
	return errors.Join(errs...)
}

// LabelsReport is Gateway.LabelsReport of every upstream, by server name.
func (a *Aggregate) LabelsReport() map[string][]ToolLabelsReport {
	out := make(map[string][]ToolLabelsReport, len(a.members))
	for _, m := range a.members {
		out[m.Name] = m.Gateway.LabelsReport()
	}
	return out
}
