//lint:file-ignore SA1019 MCP's sampling, roots and logging are deprecated from protocol 2026-07-28 on, but they are the session protocol's, which the gateway's clients and upstreams speak: it passes them on.

package mcpgateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
)

// StepType is the step type of every tool call the gateway checks.
const StepType = "tool"

// Guard decides on the steps of the gateway and keeps the agent's registration in sync with the upstream's
// tools. AgentGuard and LocalGuard are the two implementations.
type Guard interface {
	// CheckStep evaluates one stage of a step: nil to proceed, *guard.ControlViolationError for a deny,
	// *guard.ControlSteerError for a steer; any other error stops the call with an MCP error.
	CheckStep(ctx context.Context, step *guard.Step, stage guard.Stage) error
	// SyncSteps is called with the full list of steps after the upstream's tool list changed.
	SyncSteps(ctx context.Context, steps []guard.StepSchema) error
}

// Options configures a Gateway. The zero value is usable.
type Options struct {
	// CallTimeout bounds each forwarded tools/call (and each passed-through request); 0 means no bound
	// beyond the client's own cancellation. A call that runs out answers with an MCP error.
	CallTimeout time.Duration
	// Logger receives the gateway's logs (never the MCP channel); nil means none.
	Logger *zap.Logger
	// ClientInfo is the implementation the gateway announces to the upstream; default "guard-mcp-gateway".
	ClientInfo *mcp.Implementation
	// Reconnect makes the gateway reconnect to an upstream whose session ended or whose transport refuses
	// requests (a Streamable HTTP server that restarted or went away), with backoff (0.2 s, doubling up to
	// 10 s), instead of ending: meanwhile every request is answered with an MCP error that says the upstream is
	// unreachable and the gateway is reconnecting. Done is then closed by Close only. For a command the
	// upstream's end is final: a process that exited is not started again.
	Reconnect bool
	// ProtocolVersion is the MCP version the gateway asks the upstream for; default DefaultProtocolVersion.
	// The upstream may answer with an older one. Clients speak to the gateway in any version the SDK
	// supports, whatever this is.
	ProtocolVersion string
	// ClientCapabilities are the capabilities the gateway announces to the upstream; nil means all that it
	// passes on to its clients: sampling, elicitation (form) and roots (with list-changed notifications).
	// The upstream's requests of these kinds go to a client session that announced the same capability
	// (the upstream is told "method not found" when none did); see serverrequests.go.
	ClientCapabilities *mcp.ClientCapabilities
	// ToolLabels overrides the session labels the tools' annotations give their steps (annotations.go);
	// nil maps every tool's annotations.
	ToolLabels *ToolLabels
	// SessionID, when set, is context.session_id of the calls of clients without an MCP session id (stdio),
	// instead of the gateway's own "mcp-<random>": give the id the agent's other guarded calls use (its LLM
	// calls through the LLM proxy, its own Protect calls) so that session controls see all of them as one
	// session. At most guard.MaxSessionIDBytes bytes. Over HTTP a request's SessionHeader wins.
	SessionID string
	// ToolPrefix is put before the name of each of the upstream's tools, as clients see them and as guard's
	// steps are named ("filesystem__read_file"); the upstream gets its own names. Aggregate sets it.
	ToolPrefix string
	// Approvals, when set, makes the gateway ask the user of a client with elicitation to decide the
	// approval requests of refused calls (elicit.go); nil: such calls get a tool error naming the request.
	Approvals *ElicitApprovals
}

// DefaultProtocolVersion is the MCP version the gateway asks an upstream for by default: 2025-11-25, the
// last version of the session protocol, which servers of every SDK speak. From 2026-07-28 on every
// request carries the client's version, name and capabilities in its _meta, which the SDK's servers
// decode again on every call; the gateway has no use for that version's additions (it forwards tools,
// resources and prompts), and its relay of tools/call (relay.go) carries session-protocol calls only.
const DefaultProtocolVersion = "2025-11-25"

// Gateway is one connection to an upstream MCP server with the tools it announced. Create it with
// Connect, serve clients with Server, and Close it when done. It is safe for concurrent use.
type Gateway struct {
	opts   Options
	log    *zap.Logger
	client *mcp.Client                       // the gateway's client of the upstream
	up     atomic.Pointer[mcp.ClientSession] // the upstream session (a new one after a reconnection)
	upT    mcp.Transport                     // the upstream's transport, wrapped, for reconnections
	upVer  string                            // the protocol version asked of the upstream
	down   atomic.Pointer[downState]         // set while a reconnecting gateway has no upstream session
	relay  *relay                            // nil when tools/call goes through the SDK's client session (see forwardCall)

	fastServed atomic.Int64 // tools/call served by the fast path of Run (fastpath.go)
	fastLines  atomic.Int64 // of which decoded in one pass (parseCallLine)
	verbatim   atomic.Int64 // of which answered with the upstream's result as it came (decodePlainResult)

	syncMu sync.Mutex // serialises Sync

	mu       sync.Mutex
	tools    []*mcp.Tool                // the upstream's tools, in its order
	rawTools map[string]json.RawMessage // the same as the upstream wrote them, by name (raw.go)
	rawExtra map[string]json.RawMessage // the other fields of the upstream's tools/list (raw.go)
	srv      *mcp.Server                // set once by Server
	gd       Guard                      // set once by Server
	sync     chan struct{}              // a pending tools/list_changed (capacity 1: notifications coalesce)

	firstClient     chan struct{} // closed when the first client session has initialized (serverrequests.go)
	firstClientOnce sync.Once

	progress    sync.Map     // gateway progress token (string) -> progressTarget, while the call runs
	progressSeq atomic.Int64 // numbers the gateway's progress tokens

	inflight sync.WaitGroup // tool calls and passed-through requests being served
	done     chan struct{}  // closed when the upstream connection ended
	doneErr  error          // why it ended (set before done is closed)
	stop     chan struct{}  // closed by Close: ends the sync worker
	closing  sync.Once

	// procSession is the step context of calls without an MCP session id (stdio: the client's one
	// connection is one session): {"session_id": "mcp-<random>"}, shared by every such call (read only).
	procSession map[string]any

	// handlers is the context every request the gateway serves runs under (joined with the request's
	// own); cancelHandlers ends them all, so that a session can close (see Run).
	handlers       context.Context
	cancelHandlers context.CancelFunc
}

// Connect connects to the upstream MCP server over t (mcp.CommandTransport starts the server's process),
// and lists its tools. ctx bounds the connection and the first listing only.
func Connect(ctx context.Context, t mcp.Transport, opts Options) (*Gateway, error) {
	g := &Gateway{opts: opts, log: opts.Logger, sync: make(chan struct{}, 1), done: make(chan struct{}), stop: make(chan struct{}),
		firstClient: make(chan struct{}),
		procSession: map[string]any{"session_id": "mcp-" + uuid.NewString()}}
	if opts.SessionID != "" {
		if len(opts.SessionID) > guard.MaxSessionIDBytes {
			return nil, fmt.Errorf("mcp gateway: the session id is longer than %d bytes", guard.MaxSessionIDBytes)
		}
		g.procSession = map[string]any{"session_id": opts.SessionID}
	}
	g.handlers, g.cancelHandlers = context.WithCancel(context.Background())
	if g.log == nil {
		g.log = zap.NewNop()
	}
	info := opts.ClientInfo
	if info == nil {
		info = &mcp.Implementation{Name: "guard-mcp-gateway", Version: "1"}
	}
	caps := opts.ClientCapabilities
	if caps == nil {
		caps = defaultClientCapabilities()
	}
	c := mcp.NewClient(info, &mcp.ClientOptions{
		// The notification is handled outside the connection's goroutine: listing the tools from inside
		// the handler would wait for an answer the connection cannot read until the handler returns.
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case g.sync <- struct{}{}:
			default: // a sync is already pending; it will see this change too
			}
		},
		// Progress of a forwarded call goes back to the client that made it.
		ProgressNotificationHandler: g.onProgress,
		LoggingMessageHandler:       g.onLog,
		Capabilities:                caps,
	})
	c.AddReceivingMiddleware(g.fromUpstream)
	g.client = c
	var r *relay
	if relayable(t) {
		r = &relay{}
		t = &relayTransport{Transport: t, r: r}
	}
	t = rawTransport{t}
	version := opts.ProtocolVersion
	if version == "" {
		version = DefaultProtocolVersion
	}
	up, err := c.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		g.cancelHandlers()
		return nil, fmt.Errorf("mcp gateway: connect to the upstream MCP server: %w", err)
	}
	g.up.Store(up)
	g.upT, g.upVer = t, version
	if ir := up.InitializeResult(); r != nil && ir != nil && ir.ProtocolVersion < newProtocolVersion {
		g.relay = r
	}
	tools, raw, extra, err := g.listTools(ctx)
	if err != nil {
		g.cancelHandlers()
		_ = up.Close()
		return nil, fmt.Errorf("mcp gateway: list the upstream's tools: %w", err)
	}
	g.tools, g.rawTools, g.rawExtra = tools, raw, extra
	if opts.Reconnect && g.relay == nil {
		go g.reconnectLoop(up)
	} else {
		go func() {
			err := up.Wait()
			g.doneErr = err
			close(g.done)
		}()
	}
	go g.syncLoop()
	return g, nil
}

// upstream returns the current upstream session.
func (g *Gateway) upstream() *mcp.ClientSession { return g.up.Load() }

// Steps returns one step per upstream tool, in the upstream's order: type "tool", the tool's name,
// description, input schema, output schema and session labels (from its annotations, annotations.go).
func (g *Gateway) Steps() []guard.StepSchema {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.labelledSteps(g.tools)
}

// Upstream returns the initialize result of the upstream (its name, version, capabilities, instructions).
func (g *Gateway) Upstream() *mcp.InitializeResult { return g.upstream().InitializeResult() }

// Done is closed when the connection to the upstream has ended (its process exited, it closed the stream,
// or Close was called; with Options.Reconnect, Close only). Err says why.
func (g *Gateway) Done() <-chan struct{} { return g.done }

// Err returns why the upstream connection ended, once Done is closed (nil for a clean close).
func (g *Gateway) Err() error {
	select {
	case <-g.done:
		return g.doneErr
	default:
		return nil
	}
}

// Drain waits until the calls in flight have answered, or ctx is done.
func (g *Gateway) Drain(ctx context.Context) {
	ch := make(chan struct{})
	go func() {
		g.inflight.Wait()
		close(ch)
	}()
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// Close ends the upstream connection: for a command, its stdin is closed and the process is given
// DefaultTerminateDuration to exit before its process group is terminated, then killed (CommandTransport).
// Close is idempotent.
func (g *Gateway) Close() error {
	var err error
	g.closing.Do(func() {
		g.cancelHandlers()
		close(g.stop)
		err = g.upstream().Close()
		<-g.done
	})
	if errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}
