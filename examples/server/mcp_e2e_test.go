package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The end-to-end tests of `guard mcp`: the guard binary as a gateway in front of examples/mcpserver (a
// real MCP server built with the official SDK), driven by the SDK's client.

var (
	mcpBuildOnce sync.Once
	mcpBinPath   string
	mcpBuildErr  error
)

// buildMCPServer builds examples/mcpserver next to the guard binary (TestMain removes both).
func buildMCPServer(t *testing.T) string {
	t.Helper()
	dir := filepath.Dir(buildServer(t))
	mcpBuildOnce.Do(func() {
		mcpBinPath = filepath.Join(dir, "mcpserver")
		out, err := exec.Command("go", "build", "-o", mcpBinPath, "../mcpserver").CombinedOutput()
		if err != nil {
			mcpBuildErr = fmt.Errorf("go build ../mcpserver: %v\n%s", err, out)
		}
	})
	if mcpBuildErr != nil {
		t.Fatal(mcpBuildErr)
	}
	return mcpBinPath
}

// gatewayProc is a `guard mcp` process with the SDK's client session on its stdio.
type gatewayProc struct {
	t         *testing.T
	cs        *mcp.ClientSession
	cmd       *exec.Cmd
	stderr    *syncBuffer
	toolsDiff chan struct{} // one value per notifications/tools/list_changed
	closed    bool
	closeErr  error
}

// startGateway starts `guard mcp ARGS...` (with no GUARD_URL or GUARD_API_KEY from the environment) and
// connects the SDK's client to it over stdio.
func startGateway(t *testing.T, args ...string) *gatewayProc {
	t.Helper()
	return startGatewayEnv(t, nil, args...)
}

// startGatewayEnv is startGateway with env (KEY=value) over the test's environment.
func startGatewayEnv(t *testing.T, env []string, args ...string) *gatewayProc {
	t.Helper()
	return startGatewaySession(t, nil, env, args...)
}

// startGatewaySession is startGatewayEnv with the client's session options (its protocol version).
func startGatewaySession(t *testing.T, session *mcp.ClientSessionOptions, env []string, args ...string) *gatewayProc {
	t.Helper()
	return startGatewayClient(t, "e2e-client", nil, session, env, args...)
}

// startGatewayClient starts `guard mcp ARGS...` and connects a client named name with opts (nil: none) and
// session options; tool-list changes are reported on the gatewayProc's toolsDiff unless opts handles them.
func startGatewayClient(t *testing.T, name string, opts *mcp.ClientOptions, session *mcp.ClientSessionOptions, env []string, args ...string) *gatewayProc {
	t.Helper()
	cmd := exec.Command(buildServer(t), append([]string{"mcp"}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(append(os.Environ(), "GUARD_URL=", "GUARD_API_KEY=", "GUARD_OBSERVABILITY_ENABLED="), env...)
	g := &gatewayProc{t: t, cmd: cmd, stderr: &syncBuffer{}, toolsDiff: make(chan struct{}, 16)}
	cmd.Stderr = g.stderr
	o := mcp.ClientOptions{}
	if opts != nil {
		o = *opts
	}
	if o.ToolListChangedHandler == nil {
		o.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case g.toolsDiff <- struct{}{}:
			default:
			}
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, &o)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, session)
	if err != nil {
		t.Fatalf("connect to guard mcp: %v\n%s", err, g.stderr)
	}
	g.cs = cs
	t.Cleanup(func() {
		if !g.closed {
			_ = g.close()
		}
	})
	return g
}

// waitClosed waits until the gateway closes its side of the MCP channel. Past limit it fails the test with
// the gateway's goroutines (SIGQUIT makes a Go program print them on stderr), so that a hang says where.
func (g *gatewayProc) waitClosed(limit time.Duration) {
	g.t.Helper()
	waited := make(chan struct{})
	go func() {
		_ = g.cs.Wait()
		close(waited)
	}()
	select {
	case <-waited:
	case <-time.After(limit):
		_ = g.cmd.Process.Signal(syscall.SIGQUIT)
		_ = g.cs.Wait() // the process exits on SIGQUIT
		g.t.Fatalf("the gateway did not close its side within %s; its stderr:\n%s", limit, g.stderr)
	}
}

// close closes the client's side (stdin of the gateway) and returns how the gateway exited.
func (g *gatewayProc) close() error {
	if !g.closed {
		g.closed = true
		g.closeErr = g.cs.Close()
	}
	return g.closeErr
}

// call calls a tool and fails the test on an MCP error.
func (g *gatewayProc) call(name string, args map[string]any) *mcp.CallToolResult {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		g.t.Fatalf("tools/call %s: %v\n%s", name, err, g.stderr)
	}
	return res
}

// resultText is the text content of a result, joined.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// upstreamCalls reads the count file of examples/mcpserver: the tools that ran, in order.
func upstreamCalls(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mcpControl creates a control on the server and links it to agent; it returns the control's id.
func mcpControl(p *proc, agent, name string, data map[string]any) int64 {
	p.t.Helper()
	var ctl struct {
		ID int64 `json:"control_id"`
	}
	p.callInto(http.StatusOK, http.MethodPut, "/api/v1/controls", map[string]any{"name": name, "data": data}, &ctl)
	p.callInto(http.StatusOK, http.MethodPost, fmt.Sprintf("/api/v1/agents/%s/controls/%d", agent, ctl.ID), nil, nil)
	return ctl.ID
}

// toolControl is the data of a control on one tool at one stage: a regex on path.
func toolControl(tool, stage, path, pattern string, action map[string]any) map[string]any {
	return map[string]any{
		"scope":     map[string]any{"step_types": []string{"tool"}, "step_names": []string{tool}, "stages": []string{stage}},
		"condition": map[string]any{"selector": map[string]any{"path": path}, "evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": pattern}}},
		"action":    action,
	}
}

func TestMCPGatewayEndToEnd(t *testing.T) {
	upstream := buildMCPServer(t)
	p := startServer(t, map[string]string{"OBSERVABILITY_ENABLED": "true", "OBSERVABILITY_FLUSH_INTERVAL_SECONDS": "1"}, "serve", "--migrate")
	const agent = "mcp-e2e"

	// The agent exists (with no steps) so that its controls can be linked before the gateway starts.
	p.callInto(http.StatusOK, http.MethodPost, "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": agent}, "steps": []any{}}, nil)
	mcpControl(p, agent, "no-rm-rf", toolControl("echo", "pre", "input.text", `rm -rf`, map[string]any{"decision": "deny"}))
	mcpControl(p, agent, "no-secrets-in-echo", toolControl("echo", "pre", "input.text", `(?i)password`, map[string]any{
		"decision": "steer", "steering_context": map[string]any{"message": "do not send credentials to tools",
			"required_actions": []string{"remove the password", "ask the user for a token instead"}}}))
	mcpControl(p, agent, "no-ssn-out", toolControl("lookup", "post", "output", `\d{3}-\d{2}-\d{4}`, map[string]any{"decision": "deny"}))
	mcpControl(p, agent, "big-sums", toolControl("add", "post", "output.sum", `^\d{4,}$`, map[string]any{"decision": "deny"}))

	count := filepath.Join(t.TempDir(), "calls")
	g := startGateway(t, "--agent", agent, "--server", p.base, "--refresh", "0", "--", upstream, "--count-file", count)

	// The client sees the upstream's tools, and the agent's steps are those tools with their schemas.
	lt, err := g.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"echo", "add", "lookup", "slow", "crash", "garbage", "add_tool"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list through the gateway = %v, want %s in it", names, want)
		}
	}
	steps := agentSteps(p, agent)
	echo, ok := steps["echo"]
	if !ok || len(steps) != len(names) {
		t.Fatalf("agent steps = %v, want one per tool %v", steps, names)
	}
	if echo.Type != "tool" || !strings.Contains(string(echo.InputSchema), `"text"`) {
		t.Fatalf("step echo = %+v, want type tool with the tool's input schema", echo)
	}

	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		isError  bool
		text     []string // substrings of the text content
		reaches  bool     // the call reaches the upstream
		decision string   // _meta.guard.decision
	}{
		{name: "denied at pre", tool: "echo", args: map[string]any{"text": "now rm -rf /"}, isError: true,
			text: []string{`guard control "no-rm-rf"`, "blocked"}, decision: "deny"},
		{name: "steered at pre", tool: "echo", args: map[string]any{"text": "my Password is hunter2"}, isError: true,
			text: []string{`guard control "no-secrets-in-echo"`, "do not send credentials to tools", "- remove the password", "- ask the user for a token instead"}, decision: "steer"},
		{name: "allowed", tool: "echo", args: map[string]any{"text": "hello"}, text: []string{"echo: hello"}, reaches: true},
		{name: "allowed, structured", tool: "add", args: map[string]any{"a": 2, "b": 3}, text: []string{`"sum":5`}, reaches: true},
		{name: "denied at post, text output", tool: "lookup", args: map[string]any{"id": "42"}, isError: true,
			text: []string{"withheld", `guard control "no-ssn-out"`}, reaches: true, decision: "deny"},
		{name: "denied at post, structured output", tool: "add", args: map[string]any{"a": 1000, "b": 234}, isError: true,
			text: []string{"withheld", `guard control "big-sums"`}, reaches: true, decision: "deny"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(upstreamCalls(t, count))
			res := g.call(tc.tool, tc.args)
			got := resultText(res)
			if res.IsError != tc.isError {
				t.Fatalf("isError = %v, want %v: %s", res.IsError, tc.isError, got)
			}
			for _, s := range tc.text {
				if !strings.Contains(got, s) {
					t.Fatalf("result text %q does not contain %q", got, s)
				}
			}
			if strings.Contains(got, "123-45-6789") {
				t.Fatalf("the withheld output reached the client: %q", got)
			}
			calls := upstreamCalls(t, count)
			if reached := len(calls) > before; reached != tc.reaches {
				t.Fatalf("the call reached the upstream: %v, want %v (upstream calls %v)", reached, tc.reaches, calls)
			}
			if tc.decision != "" {
				meta, _ := res.Meta[`guard`].(map[string]any)
				if meta["decision"] != tc.decision {
					t.Fatalf("_meta.guard = %v, want decision %s", res.Meta, tc.decision)
				}
			}
		})
	}

	// Prompts and resources pass through untouched.
	pr, err := g.cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil || len(pr.Messages) != 1 || pr.Messages[0].Content.(*mcp.TextContent).Text != "Say hello to Ada" {
		t.Fatalf("prompts/get through the gateway = %+v, %v", pr, err)
	}
	rr, err := g.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "mem://readme"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "the readme of the test server" {
		t.Fatalf("resources/read through the gateway = %+v, %v", rr, err)
	}

	// A tool added upstream: the client is told, and the agent is registered again with the new step.
	if res := g.call("add_tool", map[string]any{"name": "shout"}); res.IsError {
		t.Fatalf("add_tool: %s", resultText(res))
	}
	select {
	case <-g.toolsDiff:
	case <-time.After(30 * time.Second):
		t.Fatalf("no tools/list_changed reached the client\n%s", g.stderr)
	}
	waitFor(t, "the new step on the server", func() bool { _, ok := agentSteps(p, agent)["shout"]; return ok })
	if res := g.call("shout", map[string]any{"text": "hey"}); res.IsError || resultText(res) != "echo: hey" {
		t.Fatalf("the new tool through the gateway: %+v", res)
	}

	// The client closes its side: the gateway exits 0 (after sending its events) and its upstream is gone.
	if err := g.close(); err != nil {
		t.Fatalf("gateway exit: %v\n%s", err, g.stderr)
	}
	if strings.Contains(g.stderr.String(), `"level":"error"`) {
		t.Fatalf("errors logged:\n%s", g.stderr)
	}

	// The events of the in-process evaluations are recorded on the server.
	want := map[string]string{"no-rm-rf/pre/deny": "", "no-secrets-in-echo/pre/steer": "", "no-ssn-out/post/deny": "", "big-sums/post/deny": ""}
	waitFor(t, "the gateway's events on the server", func() bool {
		for _, e := range mcpEvents(p, agent) {
			if e.Matched && e.Source == "sdk" && e.StepType == "tool" {
				delete(want, e.Control+"/"+e.Stage+"/"+e.Action)
			}
		}
		return len(want) == 0
	})

	// --remote-eval: the server's controls are evaluated by POST /evaluation, and the server records the
	// events itself (source "server").
	g = startGateway(t, "--agent", agent, "--server", p.base, "--refresh", "0", "--remote-eval", "--", upstream, "--count-file", count)
	if res := g.call("echo", map[string]any{"text": "rm -rf /tmp"}); !res.IsError || !strings.Contains(resultText(res), `"no-rm-rf"`) {
		t.Fatalf("denied call with --remote-eval: %+v", res)
	}
	if err := g.close(); err != nil {
		t.Fatalf("gateway exit: %v\n%s", err, g.stderr)
	}
	waitFor(t, "the server's own event of the remote evaluation", func() bool {
		for _, e := range mcpEvents(p, agent) {
			if e.Matched && e.Source == "server" && e.Control == "no-rm-rf" {
				return true
			}
		}
		return false
	})
}

// agentSteps returns the agent's steps on the server by name, with their input schema as JSON.
func agentSteps(p *proc, agent string) map[string]struct {
	Type        string
	InputSchema json.RawMessage
} {
	p.t.Helper()
	var d struct {
		Steps []struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"steps"`
	}
	p.callInto(http.StatusOK, http.MethodGet, "/api/v1/agents/"+agent, nil, &d)
	out := map[string]struct {
		Type        string
		InputSchema json.RawMessage
	}{}
	for _, s := range d.Steps {
		out[s.Name] = struct {
			Type        string
			InputSchema json.RawMessage
		}{s.Type, s.InputSchema}
	}
	return out
}

type mcpEvent struct {
	Control  string `json:"control_name"`
	Stage    string `json:"check_stage"`
	Action   string `json:"action"`
	Matched  bool   `json:"matched"`
	StepType string `json:"step_type"`
	StepName string `json:"step_name"`
	Source   string `json:"source"`
}

func mcpEvents(p *proc, agent string) []mcpEvent {
	p.t.Helper()
	var page struct {
		Events []mcpEvent `json:"events"`
	}
	p.callInto(http.StatusOK, http.MethodPost, "/api/v1/observability/events/query", map[string]any{"agent_name": agent, "limit": 1000}, &page)
	return page.Events
}

func TestMCPGatewayControlsFileNoServer(t *testing.T) {
	upstream := buildMCPServer(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "controls.yaml")
	if err := os.WriteFile(file, []byte(`controls:
  - name: no-rm-rf
    data:
      scope: {step_types: [tool], step_names: [echo], stages: [pre]}
      condition: {selector: {path: input.text}, evaluator: {name: regex, config: {pattern: "rm -rf"}}}
      action: {decision: deny}
  - name: no-ssn-out
    data:
      execution: sdk
      scope: {step_types: [tool], stages: [post]}
      condition: {selector: {path: output}, evaluator: {name: regex, config: {pattern: '\d{3}-\d{2}-\d{4}'}}}
      action: {decision: deny}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(dir, "calls")
	g := startGateway(t, "--agent", "offline", "--controls", file, "--", upstream, "--count-file", count)

	if res := g.call("echo", map[string]any{"text": "rm -rf ~"}); !res.IsError || !strings.Contains(resultText(res), `"no-rm-rf"`) {
		t.Fatalf("denied call: %+v", res)
	}
	if calls := upstreamCalls(t, count); len(calls) != 0 {
		t.Fatalf("a denied call reached the upstream: %v", calls)
	}
	if res := g.call("echo", map[string]any{"text": "hi"}); res.IsError || resultText(res) != "echo: hi" {
		t.Fatalf("allowed call: %+v", res)
	}
	if res := g.call("lookup", map[string]any{"id": "1"}); !res.IsError || !strings.Contains(resultText(res), `"no-ssn-out"`) {
		t.Fatalf("post denial: %+v", res)
	}
	if err := g.close(); err != nil {
		t.Fatalf("gateway exit: %v\n%s", err, g.stderr)
	}
	// No server was contacted: the client library (which would warn about an unreachable server) never ran.
	if s := g.stderr.String(); strings.Contains(s, "unreachable") || !strings.Contains(s, "controls from the file, no server") {
		t.Fatalf("stderr:\n%s", s)
	}

	// With --server too, the file is the fallback of a server that cannot be reached: the gateway starts
	// from it (fail-open on infrastructure, closed on policy).
	g = startGateway(t, "--agent", "offline", "--server", unreachable(t), "--controls", file, "--refresh", "0", "--", upstream, "--count-file", count)
	if res := g.call("echo", map[string]any{"text": "rm -rf ~"}); !res.IsError || !strings.Contains(resultText(res), `"no-rm-rf"`) {
		t.Fatalf("denied call from the fallback file: %+v", res)
	}
	if err := g.close(); err != nil {
		t.Fatalf("gateway exit: %v\n%s", err, g.stderr)
	}
	if s := g.stderr.String(); !strings.Contains(s, "starting from the controls file") {
		t.Fatalf("stderr does not say the server was unreachable:\n%s", s)
	}

	// $GUARD_URL names a server just as --server does.
	g = startGatewayEnv(t, []string{"GUARD_URL=" + unreachable(t)}, "--agent", "offline", "--controls", file, "--refresh", "0", "--", upstream)
	if err := g.close(); err != nil {
		t.Fatalf("gateway exit: %v\n%s", err, g.stderr)
	}
	if s := g.stderr.String(); !strings.Contains(s, "starting from the controls file") {
		t.Fatalf("with $GUARD_URL the file is not the fallback of the server:\n%s", s)
	}
}

// TestMCPGatewaySessionProtocolClient: a client of the session protocol (2025-11-25, what MCP clients
// speak today), whose plain tools/call `guard mcp` serves on its fast path and relays to the upstream
// itself, gets the same decisions: a denied call never reaches the upstream, an allowed one returns its
// result, a post-stage denial withholds the result, and a call with a progress token (left to the SDK)
// works too.
func TestMCPGatewaySessionProtocolClient(t *testing.T) {
	upstream := buildMCPServer(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "controls.yaml")
	if err := os.WriteFile(file, []byte(`controls:
  - name: no-rm-rf
    data:
      scope: {step_types: [tool], step_names: [echo], stages: [pre]}
      condition: {selector: {path: input.text}, evaluator: {name: regex, config: {pattern: "rm -rf"}}}
      action: {decision: deny}
  - name: no-ssn-out
    data:
      scope: {step_types: [tool], stages: [post]}
      condition: {selector: {path: output}, evaluator: {name: regex, config: {pattern: '\d{3}-\d{2}-\d{4}'}}}
      action: {decision: deny}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(dir, "calls")
	g := startGatewaySession(t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, nil,
		"--agent", "offline", "--controls", file, "--", upstream, "--count-file", count)
	if v := g.cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("negotiated %s", v)
	}
	if res := g.call("echo", map[string]any{"text": "rm -rf ~"}); !res.IsError || !strings.Contains(resultText(res), `"no-rm-rf"`) {
		t.Fatalf("denied call: %+v", res)
	}
	if calls := upstreamCalls(t, count); len(calls) != 0 {
		t.Fatalf("a denied call reached the upstream: %v", calls)
	}
	for i := range 3 {
		text := fmt.Sprintf("hi %d", i)
		if res := g.call("echo", map[string]any{"text": text}); res.IsError || resultText(res) != "echo: "+text {
			t.Fatalf("allowed call: %+v", res)
		}
	}
	if res := g.call("lookup", map[string]any{"id": "1"}); !res.IsError || !strings.Contains(resultText(res), `"no-ssn-out"`) {
		t.Fatalf("post denial: %+v", res)
	}
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "with progress"}}
	params.SetProgressToken("p-1")
	if res, err := g.cs.CallTool(context.Background(), params); err != nil || resultText(res) != "echo: with progress" {
		t.Fatalf("call with a progress token: %+v, %v", res, err)
	}
	if calls := upstreamCalls(t, count); len(calls) != 5 {
		t.Fatalf("upstream calls %v, want the 3 allowed echoes, the lookup and the call with progress", calls)
	}
	if err := g.close(); err != nil {
		t.Fatalf("gateway exit: %v\n%s", err, g.stderr)
	}
}

// unreachable returns the URL of a loopback port nothing listens on.
func unreachable(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	_ = ln.Close()
	return u
}

func TestMCPGatewayBadUpstreams(t *testing.T) {
	upstream := buildMCPServer(t)
	file := filepath.Join(t.TempDir(), "controls.yaml")
	if err := os.WriteFile(file, []byte("controls: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("slow tool: the call timeout answers, the gateway goes on", func(t *testing.T) {
		g := startGateway(t, "--agent", "bad", "--controls", file, "--call-timeout", "300ms", "--", upstream)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 60}})
		if err == nil || !strings.Contains(err.Error(), "did not answer") || !strings.Contains(err.Error(), "300ms") {
			t.Fatalf("slow call: %v, want the call timeout's MCP error", err)
		}
		if res := g.call("echo", map[string]any{"text": "still here"}); resultText(res) != "echo: still here" {
			t.Fatalf("after a timeout: %+v", res)
		}
		if err := g.close(); err != nil {
			t.Fatalf("gateway exit: %v\n%s", err, g.stderr)
		}
	})

	t.Run("garbage: a stray line on the upstream's stdout is logged and skipped, the session goes on", func(t *testing.T) {
		g := startGateway(t, "--agent", "bad", "--controls", file, "--", upstream)
		if res := g.call("garbage", map[string]any{}); res.IsError || resultText(res) != "sent" {
			t.Fatalf("garbage: %+v", res)
		}
		if res := g.call("echo", map[string]any{"text": "still here"}); resultText(res) != "echo: still here" {
			t.Fatalf("after a stray line: %+v", res)
		}
		if err := g.close(); err != nil {
			t.Fatalf("gateway exit: %v\n%s", err, g.stderr)
		}
		if s := g.stderr.String(); !strings.Contains(s, "not JSON-RPC; skipped") || !strings.Contains(s, "this is not JSON-RPC") {
			t.Fatalf("stderr does not show the skipped line:\n%s", s)
		}
	})

	for _, tool := range []string{"crash"} {
		t.Run(tool+": an MCP error, then the gateway exits and its upstream is gone", func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			g := startGateway(t, "--agent", "bad", "--controls", file, "--", upstream, "--pid-file", pidFile)
			pid := readPID(t, pidFile)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
			if err == nil || !strings.Contains(err.Error(), "upstream MCP server is gone") {
				t.Fatalf("%s: %v, want an MCP error saying the upstream is gone\n%s", tool, err, g.stderr)
			}
			// The gateway exits by itself, with status 1 and a clear message.
			g.waitClosed(30 * time.Second)
			err = g.close()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Fatalf("gateway exit = %v, want status 1\n%s", err, g.stderr)
			}
			if !strings.Contains(g.stderr.String(), "upstream MCP server is gone") {
				t.Fatalf("stderr does not say why:\n%s", g.stderr)
			}
			waitFor(t, "the upstream process to be gone", func() bool { return syscall.Kill(pid, 0) != nil })
		})
	}

	t.Run("the client closes its side: the upstream process is stopped", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		g := startGateway(t, "--agent", "bad", "--controls", file, "--", upstream, "--pid-file", pidFile)
		pid := readPID(t, pidFile)
		if err := g.close(); err != nil {
			t.Fatalf("gateway exit: %v\n%s", err, g.stderr)
		}
		waitFor(t, "the upstream process to be gone", func() bool { return syscall.Kill(pid, 0) != nil })
	})

	t.Run("SIGTERM: the gateway exits 0 and stops its upstream", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		g := startGateway(t, "--agent", "bad", "--controls", file, "--", upstream, "--pid-file", pidFile)
		pid := readPID(t, pidFile)
		if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		g.waitClosed(30 * time.Second) // the gateway closes its side
		if err := g.close(); err != nil {
			t.Fatalf("gateway exit after SIGTERM: %v\n%s", err, g.stderr)
		}
		waitFor(t, "the upstream process to be gone", func() bool { return syscall.Kill(pid, 0) != nil })
	})

	t.Run("an upstream that does not start", func(t *testing.T) {
		out, err := runBin(buildServer(t), nil, "mcp", "--agent", "bad", "--controls", file, "--", filepath.Join(t.TempDir(), "no-such-server"))
		if err == nil || !strings.Contains(out, "connect to the upstream MCP server") {
			t.Fatalf("guard mcp with a missing command: %v\n%s", err, out)
		}
	})
}

// readPID waits for examples/mcpserver's pid file.
func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waitFor(t, "the upstream's pid file", func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

func TestMCPGatewayFlags(t *testing.T) {
	bin := buildServer(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--", "x"}, "--agent is required"},
		{[]string{"mcp", "--agent", "a"}, "no upstream"},
		{[]string{"mcp", "--agent", "a", "--upstream", "http://127.0.0.1:1/mcp", "--", "x"}, "not both"},
		{[]string{"mcp", "--agent", "a", "--conflict-mode", "merge", "--", "x"}, "--conflict-mode"},
		{[]string{"mcp", "--agent", "a", "--call-timeout", "-1s", "--", "x"}, "must not be negative"},
		{[]string{"mcp", "--agent", "a", "--no-controls", "maybe", "x"}, "--no-controls must be"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, err := runBin(bin, nil, tc.args...)
			if err == nil || !strings.Contains(out, tc.want) {
				t.Fatalf("%v: %v\n%s", tc.args, err, out)
			}
		})
	}
}

func TestMCPGatewayStreamableHTTP(t *testing.T) {
	upstreamBin := buildMCPServer(t)
	dir := t.TempDir()
	count := filepath.Join(dir, "calls")
	up := startListening(t, upstreamBin, "--http", "127.0.0.1:0", "--count-file", count)
	file := filepath.Join(dir, "controls.yaml")
	if err := os.WriteFile(file, []byte(`controls:
  - name: no-rm-rf
    data:
      scope: {step_names: [echo]}
      condition: {selector: {path: input.text}, evaluator: {name: regex, config: {pattern: "rm -rf"}}}
      action: {decision: deny}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	gw := startListening(t, buildServer(t), "mcp", "--agent", "http-gw", "--controls", file, "--upstream", up, "--listen", "127.0.0.1:0")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "rm -rf /"}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), `"no-rm-rf"`) {
		t.Fatalf("denied call over HTTP: %+v, %v", res, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || resultText(res) != "echo: hi" {
		t.Fatalf("allowed call over HTTP: %+v, %v", res, err)
	}
	if calls := upstreamCalls(t, count); !slices.Equal(calls, []string{"echo"}) {
		t.Fatalf("upstream calls = %v, want only the allowed echo", calls)
	}
}

// startListening starts a process that prints "listening on URL" on stdout and returns the URL; the
// process is stopped at the end of the test.
func startListening(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GUARD_URL=", "GUARD_API_KEY=")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				addr <- a
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case a := <-addr:
		return a
	case <-exited:
		t.Fatalf("%s exited before listening\n%s", bin, stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not print its address\n%s", bin, stderr)
	}
	return ""
}
