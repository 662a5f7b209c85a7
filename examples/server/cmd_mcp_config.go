package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/mcpgateway"
)

// Several upstreams in one gateway (guard mcp --config FILE, docs/mcp.md "One gateway for all your
// servers"), the session id shared with the rest of the agent (--session), the labels report (guard mcp
// labels) and the configuration snippet (guard mcp config-snippet).

// envSessionID gives guard mcp the session id of the agent's other guarded calls (--session).
const envSessionID = "GUARD_SESSION_ID"

// upstreamSpec is one upstream to connect: its name (the configuration's key; "" for the single upstream of
// COMMAND or --upstream) and its transport.
type upstreamSpec struct {
	name      string
	transport mcp.Transport
	reconnect bool // an HTTP upstream: reconnected to when it goes away
}

// mcpUpstreams are the upstreams of the flags: the entries of --config, or the COMMAND, or --upstream.
func mcpUpstreams(env *commandEnv, f *mcpFlags, logger *zap.Logger) ([]upstreamSpec, error) {
	if f.config == "" {
		if len(f.command) > 0 {
			cmd := exec.Command(f.command[0], f.command[1:]...)
			cmd.Stderr = env.stderr // the upstream's own logs
			return []upstreamSpec{{transport: &mcpgateway.CommandTransport{Command: cmd, Logger: logger.Named("mcp_gateway.upstream"),
				Supervisor: supervisorPath(logger)}}}, nil
		}
		// Responses read in bounded memory (mcpgateway.MaxResponseBytes): the SDK reads a JSON one whole.
		return []upstreamSpec{{reconnect: true, transport: &mcp.StreamableClientTransport{Endpoint: f.upstream,
			HTTPClient: mcpgateway.BoundedHTTPClient(nil, 0)}}}, nil
	}
	servers, err := mcpgateway.LoadServersConfig(f.config)
	if err != nil {
		return nil, fmt.Errorf("mcp: --config: %w", err)
	}
	var specs []upstreamSpec
	for _, sc := range servers {
		if len(sc.Ignored) > 0 {
			logger.Info("keys of the configuration entry not used by the gateway", zap.String("server", sc.Name), zap.Strings("keys", sc.Ignored))
		}
		if sc.URL != "" {
			hc := mcpgateway.BoundedHTTPClient(&http.Client{Transport: headerTransport{headers: sc.Headers}}, 0)
			specs = append(specs, upstreamSpec{name: sc.Name, reconnect: true, transport: &mcp.StreamableClientTransport{Endpoint: sc.URL, HTTPClient: hc}})
			continue
		}
		cmd := exec.Command(sc.Command, sc.Args...)
		cmd.Stderr = env.stderr
		cmd.Dir = sc.Cwd
		if len(sc.Env) > 0 {
			cmd.Env = os.Environ()
			keys := make([]string, 0, len(sc.Env))
			for k := range sc.Env {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				cmd.Env = append(cmd.Env, k+"="+sc.Env[k])
			}
		}
		specs = append(specs, upstreamSpec{name: sc.Name, transport: &mcpgateway.CommandTransport{Command: cmd,
			Logger: logger.Named("mcp_gateway.upstream").With(zap.String("server", sc.Name)), Supervisor: supervisorPath(logger)}})
	}
	return specs, nil
}

// headerTransport adds a configuration entry's headers to every request.
type headerTransport struct {
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpFront is what guard mcp serves: the gateway of its one upstream, or the aggregate of several.
type mcpFront struct {
	one *mcpgateway.Gateway
	agg *mcpgateway.Aggregate
}

func (m *mcpFront) Steps() []guard.StepSchema {
	if m.agg != nil {
		return m.agg.Steps()
	}
	return m.one.Steps()
}

func (m *mcpFront) Server(gd mcpgateway.Guard) *mcp.Server {
	if m.agg != nil {
		return m.agg.Server(gd)
	}
	return m.one.Server(gd)
}

func (m *mcpFront) Run(ctx context.Context, t mcp.Transport) error {
	if m.agg != nil {
		return m.agg.Run(ctx, t)
	}
	return m.one.Run(ctx, t)
}

func (m *mcpFront) Done() <-chan struct{} {
	if m.agg != nil {
		return m.agg.Done()
	}
	return m.one.Done()
}

func (m *mcpFront) Drain(ctx context.Context) {
	if m.agg != nil {
		m.agg.Drain(ctx)
		return
	}
	m.one.Drain(ctx)
}

func (m *mcpFront) Err() error {
	if m.agg != nil {
		return m.agg.Err()
	}
	return m.one.Err()
}

func (m *mcpFront) Close() error {
	if m.agg != nil {
		return m.agg.Close()
	}
	return m.one.Close()
}

// gateways are the gateways of the upstreams.
func (m *mcpFront) gateways() []*mcpgateway.Gateway {
	if m.agg == nil {
		return []*mcpgateway.Gateway{m.one}
	}
	var out []*mcpgateway.Gateway
	for _, mb := range m.agg.Members() {
		out = append(out, mb.Gateway)
	}
	return out
}

// upstreamName is the agent's metadata "upstream": the upstream's own name, or the configuration's names.
func (m *mcpFront) upstreamName() string {
	if m.agg != nil {
		var names []string
		for _, mb := range m.agg.Members() {
			names = append(names, mb.Name)
		}
		return strings.Join(names, ",")
	}
	if ir := m.one.Upstream(); ir != nil && ir.ServerInfo != nil {
		return ir.ServerInfo.Name
	}
	return ""
}

// labels is the labels report by server ("" for the single upstream), servers in their order.
func (m *mcpFront) labels() ([]string, map[string][]mcpgateway.ToolLabelsReport) {
	if m.agg == nil {
		return []string{""}, map[string][]mcpgateway.ToolLabelsReport{"": m.one.LabelsReport()}
	}
	var names []string
	for _, mb := range m.agg.Members() {
		names = append(names, mb.Name)
	}
	return names, m.agg.LabelsReport()
}

// connectUpstreams connects every upstream (all at once: npx takes seconds to start) with opts, bounded
// by --connect-timeout; with --config they are served as one (mcpgateway.Aggregate). On an error the ones
// connected are closed.
func connectUpstreams(ctx context.Context, env *commandEnv, f *mcpFlags, specs []upstreamSpec, opts mcpgateway.Options, logger *zap.Logger) (*mcpFront, error) {
	session := f.session
	if session == "" {
		session = env.getenv(envSessionID)
	}
	if len(session) > guard.MaxSessionIDBytes {
		return nil, fmt.Errorf("mcp: the session id (--session or $%s) is longer than %d bytes", envSessionID, guard.MaxSessionIDBytes)
	}
	if session == "" && f.config != "" {
		session = "mcp-" + uuid.NewString() // one session across the upstreams
	}
	opts.SessionID = session
	cctx, cancel := context.WithTimeout(ctx, f.connectLimit)
	defer cancel()
	gs := make([]*mcpgateway.Gateway, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, sp := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := opts
			o.Reconnect = sp.reconnect
			if f.config != "" {
				o.ToolPrefix = mcpgateway.ToolPrefix(sp.name)
				o.Logger = opts.Logger.With(zap.String("server", sp.name))
			}
			g, err := mcpgateway.Connect(cctx, sp.transport, o)
			if err != nil && sp.name != "" {
				err = fmt.Errorf("server %q: %w", sp.name, err)
			}
			gs[i], errs[i] = g, err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, g := range gs {
			if g != nil {
				_ = g.Close()
			}
		}
		return nil, err
	}
	if f.config == "" {
		return &mcpFront{one: gs[0]}, nil
	}
	members := make([]mcpgateway.Member, len(specs))
	for i, sp := range specs {
		members[i] = mcpgateway.Member{Name: sp.name, Gateway: gs[i]}
	}
	agg, err := mcpgateway.NewAggregate(members, logger.Named("mcp_gateway"))
	if err != nil {
		for _, g := range gs {
			_ = g.Close()
		}
		return nil, err
	}
	return &mcpFront{agg: agg}, nil
}

// logLabels logs which labels each tool got and why, and warns when every tool got the default (the
// Rule of Two then cannot tell reads from sends: give a labels file).
func logLabels(front *mcpFront, logger *zap.Logger) {
	names, report := front.labels()
	total, defaults := 0, 0
	for _, n := range names {
		for _, r := range report[n] {
			total++
			if r.Why == mcpgateway.LabelsFromDefault {
				defaults++
			}
			logger.Info("tool labels", zap.String("server", n), zap.String("tool", r.Tool), zap.Strings("labels", r.Labels), zap.String("why", r.Why))
		}
	}
	if total > 0 && defaults == total {
		logger.Warn("every tool got the default labels (untrusted, egress, destructive): no annotations, no well-known names; session controls such as rule-of-two cannot tell reads from sends: give --tool-labels FILE (guard mcp labels shows them)",
			zap.Int("tools", total))
	}
}

// runMCPLabels is `guard mcp labels [flags] (--config FILE | COMMAND... | --upstream URL)`: it connects to
// the upstreams, prints each tool's labels and where they come from, and exits. --agent is not needed.
func runMCPLabels(ctx context.Context, env *commandEnv, args []string) error {
	if !slices.ContainsFunc(args, func(a string) bool { return a == "--agent" || a == "-agent" || strings.HasPrefix(a, "--agent=") }) {
		args = append([]string{"--agent", "labels"}, args...)
	}
	f, err := parseMCPFlags(args, env.stderr)
	if err != nil {
		return err
	}
	logger := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(env.stderr), zap.WarnLevel))
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
	front, err := connectUpstreams(ctx, env, f, specs, mcpgateway.Options{Logger: logger, ToolLabels: toolLabels,
		ClientCapabilities: &mcp.ClientCapabilities{}}, logger)
	if err != nil {
		return err
	}
	defer func() { _ = front.Close() }()
	names, report := front.labels()
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tTOOL\tLABELS\tWHY")
	total, defaults := 0, 0
	for _, n := range names {
		server := n
		if server == "" {
			server = "-"
		}
		for _, r := range report[n] {
			total++
			if r.Why == mcpgateway.LabelsFromDefault {
				defaults++
			}
			labels := strings.Join(r.Labels, ",")
			if labels == "" {
				labels = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", server, r.Tool, labels, r.Why)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if total > 0 && defaults == total {
		fmt.Fprintln(env.stderr, "warning: every tool got the default labels (no annotations, no well-known names): give --tool-labels FILE")
	}
	return nil
}

// runMCPConfigSnippet is `guard mcp config-snippet [gateway flags] --config FILE`: it prints the
// mcpServers configuration that runs every server of FILE through one guard gateway with those flags, to
// paste into the client's configuration in place of the servers. Paths are made absolute.
func runMCPConfigSnippet(env *commandEnv, args []string) error {
	f, err := parseMCPFlags(args, env.stderr)
	if err != nil {
		return err
	}
	if f.config == "" {
		return errors.New("mcp config-snippet: --config FILE is required (the configuration whose servers the gateway serves)")
	}
	if _, err := mcpgateway.LoadServersConfig(f.config); err != nil {
		return fmt.Errorf("mcp config-snippet: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	out := []string{"mcp"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		out = append(out, a)
		for _, pf := range []string{"--config", "-config", "--controls", "-controls", "--tool-labels", "-tool-labels"} {
			if a == pf && i+1 < len(args) {
				i++
				abs, err := filepath.Abs(args[i])
				if err != nil {
					return err
				}
				out = append(out, abs)
			} else if strings.HasPrefix(a, pf+"=") {
				abs, err := filepath.Abs(strings.TrimPrefix(a, pf+"="))
				if err != nil {
					return err
				}
				out[len(out)-1] = pf + "=" + abs
			}
		}
	}
	type entry struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	snippet := map[string]any{"mcpServers": map[string]entry{"guard": {Command: exe, Args: out}}}
	b, err := json.MarshalIndent(snippet, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(env.stdout, string(b))
	return err
}
