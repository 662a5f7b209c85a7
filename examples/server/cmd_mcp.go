package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
	"github.com/guardrail-control/guard/client/mcpgateway"
	"github.com/guardrail-control/guard/sessionredis"
)

const mcpUsage = `guard mcp --agent NAME [--server URL | --controls FILE | --template NAME [--set KEY=VALUE]...] [flags] [--] COMMAND [ARGS...]
       guard mcp --agent NAME [--server URL | --controls FILE | --template NAME [--set KEY=VALUE]...] [flags] --upstream URL [--listen ADDR]
       guard mcp --agent NAME [...] [flags] --config MCP_SERVERS_JSON [--listen ADDR]
       guard mcp labels [flags] (--config FILE | --upstream URL | [--] COMMAND [ARGS...])
       guard mcp config-snippet --agent NAME [flags] --config FILE`

func init() {
	register(&command{name: "mcp", summary: "run an MCP gateway: check every tool call of an MCP server against the agent's controls",
		usage: mcpUsage, run: runMCP})
}

// mcpFlags are the settings of `guard mcp`.
type mcpFlags struct {
	agent         string
	server        string
	controls      string
	upstream      string
	listen        string
	conflict      string
	callTimeout   time.Duration
	refresh       time.Duration
	remoteEval    bool
	connectLimit  time.Duration
	noControls    string
	templates     templateNames
	sets          settings
	toolLabels    string
	rendered      []guard.Control // the controls of the templates, rendered before the upstream starts
	askTimeout    time.Duration
	clientCaps    string // --client-capabilities, as given ("" when not)
	config        string // --config: an mcpServers file whose servers are served as one
	session       string // --session: the guard session id of the calls (default $GUARD_SESSION_ID)
	sessionStore  string // --session-store: redis://... where the in-process evaluations keep session state
	sessionPrefix string // $GUARD_SESSION_PREFIX: the prefix of its keys
	command       []string
}

// The values of --no-controls: what the gateway does when neither the server nor a controls file gives it
// controls.
const (
	noControlsAllow  = "allow"  // start, check nothing until the server is reached (fail-open; the default)
	noControlsDeny   = "deny"   // start, deny every call until the server is reached
	noControlsRefuse = "refuse" // do not start
)

func parseMCPFlags(args []string, stderr io.Writer) (*mcpFlags, error) {
	f := &mcpFlags{}
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.agent, "agent", "", "the agent's name (required)")
	fs.StringVar(&f.server, "server", "", "URL of the guard server (default $GUARD_URL, then http://localhost:8000); the API key is read from $GUARD_API_KEY")
	fs.StringVar(&f.controls, "controls", "", "controls file (YAML); without --server (and $GUARD_URL): the only source of controls, no server is contacted; with a server: used when it is unreachable at start")
	fs.StringVar(&f.upstream, "upstream", "", "URL of an upstream MCP server over Streamable HTTP (instead of a COMMAND)")
	fs.StringVar(&f.listen, "listen", "", "serve MCP over Streamable HTTP on this address (e.g. 127.0.0.1:8931) instead of stdio")
	fs.StringVar(&f.conflict, "conflict-mode", string(guard.ConflictOverwrite), "initAgent conflict mode: overwrite or strict")
	fs.DurationVar(&f.callTimeout, "call-timeout", 60*time.Second, "bound on each forwarded request to the upstream (0: none)")
	fs.DurationVar(&f.refresh, "refresh", client.DefaultRefreshInterval, "how often the controls are refreshed from the server (0: never)")
	fs.BoolVar(&f.remoteEval, "remote-eval", false, "evaluate the server's controls by POST /evaluation on each call instead of in-process")
	fs.DurationVar(&f.connectLimit, "connect-timeout", 60*time.Second, "bound on starting the upstream and listing its tools")
	fs.DurationVar(&f.askTimeout, "ask-timeout", mcpgateway.DefaultElicitTimeout, "with $"+envMCPApproverKey+": how long a refused call waits for the user's answer in the MCP client")
	fs.StringVar(&f.noControls, "no-controls", noControlsAllow, "when neither the server nor a controls file gives controls at start: allow (calls go unchecked until the server is reached), deny (every call is denied until then) or refuse (exit with an error)")
	fs.Var(&f.templates, "template", "a control template to evaluate in the gateway, without a server (repeatable; guard template list shows them), e.g. rule-of-two")
	fs.Var(&f.sets, "set", "a parameter of the --template(s): KEY=VALUE, as guard template render takes it (repeatable)")
	fs.StringVar(&f.config, "config", "", "an mcpServers configuration file (Claude Desktop, Cursor, VS Code): serve all its servers as one, tools named SERVER__TOOL (instead of a COMMAND or --upstream)")
	fs.StringVar(&f.session, "session", "", "the guard session id of every call (default $"+envSessionID+"; over HTTP a request's "+mcpgateway.SessionHeader+" header wins): the id the agent's other guarded calls use")
	fs.StringVar(&f.sessionStore, "session-store", "", "redis://host:port[/db] (or rediss://): keep the session state of the gateway's evaluations there, shared with the agent's other processes and guard's replicas (keys prefixed by $GUARD_SESSION_PREFIX, default guard:); default in memory")
	fs.StringVar(&f.clientCaps, "client-capabilities", "", "the capabilities announced to the upstream, comma-separated: sampling, elicitation, roots (default: over stdio those of the client's initialize; with --listen none)")
	fs.StringVar(&f.toolLabels, "tool-labels", "", "YAML or JSON file of session labels by tool name, replacing those the tools' annotations give (docs/mcp.md)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n", mcpUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	f.command = fs.Args()
	switch {
	case f.agent == "":
		fs.Usage()
		return nil, errors.New("mcp: --agent is required")
	case f.config != "" && (len(f.command) > 0 || f.upstream != ""):
		return nil, errors.New("mcp: --config gives the upstreams: no COMMAND or --upstream with it")
	case len(f.command) > 0 && f.upstream != "":
		return nil, errors.New("mcp: give either a COMMAND after -- or --upstream URL, not both")
	case len(f.command) == 0 && f.upstream == "" && f.config == "":
		fs.Usage()
		return nil, errors.New("mcp: no upstream: give the MCP server's COMMAND after --, --upstream URL or --config FILE")
	case f.conflict != string(guard.ConflictOverwrite) && f.conflict != string(guard.ConflictStrict):
		return nil, fmt.Errorf("mcp: --conflict-mode must be %q or %q", guard.ConflictOverwrite, guard.ConflictStrict)
	case f.noControls != noControlsAllow && f.noControls != noControlsDeny && f.noControls != noControlsRefuse:
		return nil, fmt.Errorf("mcp: --no-controls must be %q, %q or %q", noControlsAllow, noControlsDeny, noControlsRefuse)
	case len(f.templates) > 0 && f.server != "":
		return nil, errors.New("mcp: --template evaluates in the gateway, without a server: drop --server, or render the template for the server's agent (guard template render NAME | guard apply -)")
	case len(f.sets) > 0 && len(f.templates) == 0:
		return nil, errors.New("mcp: --set gives parameters of a --template")
	case f.callTimeout < 0 || f.refresh < 0 || f.connectLimit <= 0 || f.askTimeout <= 0:
		return nil, errors.New("mcp: --call-timeout and --refresh must not be negative, --connect-timeout and --ask-timeout must be positive")
	}
	if _, err := guard.NormalizeAgentName(f.agent); err != nil {
		return nil, fmt.Errorf("mcp: --agent: %w", err)
	}
	if f.sessionStore != "" && !strings.HasPrefix(f.sessionStore, "redis://") && !strings.HasPrefix(f.sessionStore, "rediss://") {
		return nil, errors.New("mcp: --session-store must be a URL redis://host:port[/db] or rediss://host:port[/db]")
	}
	if f.clientCaps != "" {
		if _, err := mcpgateway.ParseClientCapabilities(strings.Split(f.clientCaps, ",")); err != nil {
			return nil, fmt.Errorf("mcp: --client-capabilities: %w", err)
		}
	}
	return f, nil
}

// runMCP is `guard mcp`. It returns when the client closes its side (stdio), on SIGINT/SIGTERM, or with
// an error when the upstream goes away. `guard mcp labels ...` and `guard mcp config-snippet ...` are
// subcommands (cmd_mcp_config.go).
func runMCP(ctx context.Context, env *commandEnv, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "labels":
			return runMCPLabels(ctx, env, args[1:])
		case "config-snippet":
			return runMCPConfigSnippet(env, args[1:])
		}
	}
	f, err := parseMCPFlags(args, env.stderr)
	if err != nil {
		return err
	}
	// A client that closes its end of our stdout must not kill the gateway by SIGPIPE before it stops its
	// upstream: the write fails instead (EPIPE), which ends the session and stops the upstream.
	signal.Ignore(syscall.SIGPIPE)
	// stdout is the MCP channel in stdio mode: every log goes to stderr.
	logger := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(env.stderr), zap.InfoLevel))
	defer func() { _ = logger.Sync() }()

	specs, err := mcpUpstreams(env, f, logger)
	if err != nil {
		return err
	}
	var toolLabels *mcpgateway.ToolLabels
	if f.toolLabels != "" {
		if toolLabels, err = mcpgateway.LoadToolLabels(f.toolLabels); err != nil {
			return fmt.Errorf("mcp: --tool-labels: %w", err)
		}
	}
	if len(f.templates) > 0 {
		if f.rendered, err = mcpTemplateControls(ctx, f.templates, f.sets, logger.Named("mcp_gateway.template")); err != nil {
			return err
		}
	}

	// The upstream is told the client's capabilities, not more (clientcaps.go): over stdio the client's
	// initialize is read first, and served once the upstream is up.
	var clientIn io.Reader = env.stdin
	var caps *mcp.ClientCapabilities
	switch {
	case f.clientCaps != "":
		caps, _ = mcpgateway.ParseClientCapabilities(strings.Split(f.clientCaps, ",")) // checked by parseMCPFlags
	case f.listen != "":
		caps = &mcp.ClientCapabilities{}
	default:
		type first struct {
			line []byte
			rest io.Reader
			err  error
		}
		got := make(chan first, 1)
		go func() {
			line, rest, err := mcpgateway.ReadFirstMessage(env.stdin, 0)
			got <- first{line, rest, err}
		}()
		select {
		case fm := <-got:
			if fm.err != nil {
				return fmt.Errorf("mcp: reading the client's initialize: %w", fm.err)
			}
			caps, clientIn = mcpgateway.CapabilitiesOfInitialize(fm.line), fm.rest
		case <-ctx.Done():
			return nil // a signal before the client spoke
		}
	}

	front, err := connectUpstreams(ctx, env, f, specs, mcpgateway.Options{CallTimeout: f.callTimeout, Logger: logger.Named("mcp_gateway"),
		ClientInfo: &mcp.Implementation{Name: "guard-mcp-gateway", Version: version}, ToolLabels: toolLabels, ClientCapabilities: caps}, logger)
	if err != nil {
		return err
	}
	defer func() {
		if err := front.Close(); err != nil {
			logger.Debug("upstream closed", zap.Error(err))
		}
	}()
	logLabels(front, logger)

	f.sessionPrefix = env.getenv("GUARD_SESSION_PREFIX")
	if f.server == "" && len(f.templates) == 0 { // --template: no server, whatever $GUARD_URL says
		f.server = env.getenv(client.EnvURL)
	}
	gd, closeGuard, err := mcpGuard(ctx, f, front.Steps(), front.upstreamName(), logger)
	if err != nil {
		return err
	}
	defer closeGuard()
	if err := askApprovals(env, f, front.gateways(), gd, logger); err != nil {
		return err
	}
	src := client.SourceFile
	if cs, ok := gd.(mcpgateway.ControlSourcer); ok {
		src = cs.ControlSource()
	}
	if src == client.SourceNone {
		switch f.noControls {
		case noControlsRefuse:
			return errors.New("mcp: no controls: the guard server is unreachable and there is no --controls file; not starting (--no-controls refuse)")
		case noControlsDeny:
			logger.Warn("no controls: every call is denied until the guard server is reached (--no-controls deny)")
			if ag, ok := gd.(*mcpgateway.AgentGuard); ok {
				gd = mcpgateway.DenyWithoutControls{Guard: ag}
			}
		default:
			logger.Warn("no controls: calls go unchecked until the guard server is reached (--no-controls allow); clients are told in the server instructions")
		}
	}
	srv := front.Server(gd)
	logger.Info("mcp gateway ready", zap.String("agent", f.agent), zap.Int("tools", len(front.Steps())), zap.Int("upstreams", len(specs)),
		zap.String("controls_source", src))

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	if f.listen == "" {
		go func() { served <- front.Run(runCtx, stdioTransport(env, clientIn)) }()
	} else {
		if err := serveMCPHTTP(runCtx, f.listen, srv, env.stdout, served); err != nil {
			return err
		}
	}
	select {
	case err := <-served:
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			return fmt.Errorf("mcp: client connection: %w", err)
		}
		return nil // the client closed its side, or a signal
	case <-front.Done():
		// Calls in flight have their error already (the connection is closed); let them be written.
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		front.Drain(dctx)
		dcancel()
		stop()
		select {
		case <-served:
		case <-time.After(5 * time.Second):
		}
		why := "it closed the connection"
		if err := front.Err(); err != nil {
			why = err.Error()
		}
		logger.Error("upstream MCP server is gone; the gateway stops", zap.String("reason", why))
		return fmt.Errorf("mcp: upstream MCP server is gone (%s)", why)
	}
}

// mcpGuard builds the Guard: a local engine over the controls file when there is no server (no --server and
// no $GUARD_URL), else an agent of the guard server registered with the upstream's tools as steps.
func mcpGuard(ctx context.Context, f *mcpFlags, steps []guard.StepSchema, upstream string, logger *zap.Logger) (mcpgateway.Guard, func(), error) {
	var sessions guard.SessionStore
	closeSessions := func() {}
	if f.sessionStore != "" {
		prefix := f.sessionPrefix
		if prefix == "" {
			prefix = "guard:"
		}
		st, err := sessionredis.Open(ctx, f.sessionStore, sessionredis.Options{Prefix: prefix})
		if err != nil {
			return nil, nil, fmt.Errorf("mcp: --session-store: %w", err)
		}
		logger.Info("session state is shared in Redis", zap.String("prefix", prefix))
		sessions, closeSessions = st, func() { _ = st.Close() }
	}
	if (f.controls != "" || len(f.templates) > 0) && f.server == "" {
		var controls []guard.Control
		if f.controls != "" {
			var err error
			if controls, err = client.LoadControlsFile(f.controls, nil); err != nil {
				return nil, nil, err
			}
		}
		var next int64 = 1 // the templates' controls are numbered after the file's
		for _, c := range controls {
			next = max(next, c.ID+1)
		}
		for i, c := range f.rendered {
			c.ID = next + int64(i)
			controls = append(controls, c)
		}
		lg, err := mcpgateway.NewLocalGuardSessions(controls, nil, sessions, logger.Named("mcp_gateway.local"))
		if err != nil {
			closeSessions()
			return nil, nil, err
		}
		// The steps' session labels (from the tools' annotations) apply from the first call.
		if err := lg.SyncSteps(ctx, steps); err != nil {
			closeSessions()
			return nil, nil, err
		}
		msg := "controls from the file, no server"
		if len(f.templates) > 0 {
			msg = "controls from the templates (and the file, if any), no server"
		}
		logger.Info(msg, zap.String("controls_file", f.controls), zap.Strings("templates", f.templates), zap.Int("controls", len(controls)))
		return lg, closeSessions, nil
	}
	refresh := f.refresh
	if refresh == 0 {
		refresh = client.NoRefresh
	}
	info := client.AgentInfo{Name: f.agent, Description: "MCP gateway (guard mcp)",
		Metadata: map[string]any{"gateway": "mcp", "upstream": upstream}}
	a, err := client.Init(ctx, client.Config{
		AgentName: info.Name, Description: info.Description, Metadata: info.Metadata,
		ServerURL: f.server, ControlsFile: f.controls, Steps: steps, ConflictMode: guard.ConflictMode(f.conflict),
		LocalServerControls: !f.remoteEval, RefreshInterval: refresh, Logger: logger, SessionStore: sessions,
	})
	if err != nil {
		closeSessions()
		return nil, nil, fmt.Errorf("mcp: register agent %q: %w", f.agent, err)
	}
	info.Name = a.Name()
	return &mcpgateway.AgentGuard{Agent: a, Info: info, ConflictMode: guard.ConflictMode(f.conflict)}, func() { _ = a.Close(); closeSessions() }, nil
}

// stdioTransport is the client's side in stdio mode: in (the process's stdin, after the message read
// first) and stdout. When stdin can be closed (it is the process's own), stopping the session closes it,
// which ends the read in progress.
func stdioTransport(env *commandEnv, in io.Reader) mcp.Transport {
	var r io.ReadCloser = io.NopCloser(in)
	if c, ok := env.stdin.(io.Closer); ok {
		r = readCloser{in, c}
	}
	return &mcpgateway.LineTransport{Reader: r, Writer: nopWriteCloser{env.stdout}}
}

type readCloser struct {
	io.Reader
	io.Closer
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveMCPHTTP serves srv over Streamable HTTP on addr until ctx is done; it prints the address on out.
// served gets the end of the HTTP server.
func serveMCPHTTP(ctx context.Context, addr string, srv *mcp.Server, out io.Writer, served chan<- error) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp: --listen: %w", err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil),
		ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "listening on http://%s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	go func() {
		err := hs.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		served <- err
	}()
	return nil
}

// supervisorPath is the watchdog of the upstreams (this binary: main calls mcpgateway.RunSupervisorIfAsked),
// or "" when the binary cannot be found (the upstream is then started without it, which is logged).
func supervisorPath(logger *zap.Logger) string {
	exe, err := os.Executable()
	if err != nil {
		logger.Warn("the upstream runs without its watchdog: its children may outlive a killed gateway", zap.Error(err))
		return ""
	}
	return exe
}
