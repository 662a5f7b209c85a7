//lint:file-ignore SA1019 MCP's sampling, roots and logging are deprecated from protocol 2026-07-28 on, but they are the session protocol's, which the gateway's clients and upstreams speak: it passes them on.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The end-to-end tests of `guard mcp` with MCP software nobody on this project wrote: the reference servers
// of the MCP project (npm packages @modelcontextprotocol/server-everything, server-filesystem and
// server-memory, installed by .ci/mcp-servers.sh), driven by the Go SDK's client answering sampling,
// elicitation and roots. Every answer through the gateway is compared with the same session made
// directly to the server.

// mcpReferenceServer returns the path of a reference server's executable (mcp-server-everything, ...):
// the test is skipped when $GUARD_TEST_MCP_SERVERS is not set, and fails when it is (or under CI=true)
// and the executable is missing.
func mcpReferenceServer(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("GUARD_TEST_MCP_SERVERS")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("GUARD_TEST_MCP_SERVERS is not set under CI=true: .ci/mcp-servers.sh installs the reference MCP servers")
		}
		t.Skip("GUARD_TEST_MCP_SERVERS is not set: source .ci/mcp-servers.sh to install the reference MCP servers (npm)")
	}
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("reference MCP server %s: %v (GUARD_TEST_MCP_SERVERS=%s)", name, err, dir)
	}
	return bin
}

// wireAnswer is one response the client read, as the server wrote it.
type wireAnswer struct {
	method string
	result json.RawMessage
	err    *jsonrpc.Error
}

// wireRec records what the client reads: responses (by the method of their request), the server's
// requests and its notifications.
type wireRec struct {
	mu       sync.Mutex
	methods  map[jsonrpc.ID]string
	answers  []wireAnswer
	requests []*jsonrpc.Request // the server's requests (sampling, elicitation, roots)
	notes    []*jsonrpc.Request // the server's notifications
}

func (r *wireRec) last(method string) wireAnswer {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.answers) - 1; i >= 0; i-- {
		if r.answers[i].method == method {
			return r.answers[i]
		}
	}
	return wireAnswer{}
}

func (r *wireRec) count(method string) (n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.notes {
		if m.Method == method {
			n++
		}
	}
	return n
}

type recTransport struct {
	mcp.Transport
	rec *wireRec
}

func (t recTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recConn{Connection: c, rec: t.rec}, nil
}

type recConn struct {
	mcp.Connection
	rec *wireRec
}

func (c *recConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.rec.mu.Lock()
		c.rec.methods[req.ID] = req.Method
		c.rec.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *recConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	c.rec.mu.Lock()
	defer c.rec.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Response:
		a := wireAnswer{method: c.rec.methods[m.ID], result: m.Result}
		if m.Error != nil {
			a.err, _ = m.Error.(*jsonrpc.Error)
			if a.err == nil {
				a.err = &jsonrpc.Error{Message: m.Error.Error()}
			}
		}
		c.rec.answers = append(c.rec.answers, a)
	case *jsonrpc.Request:
		if m.IsCall() {
			c.rec.requests = append(c.rec.requests, m)
		} else {
			c.rec.notes = append(c.rec.notes, m)
		}
	}
	return msg, err
}

// refClient is a Go SDK client session that answers sampling, elicitation and roots, with what it read.
type refClient struct {
	cs  *mcp.ClientSession
	rec *wireRec

	mu       sync.Mutex
	sampled  []string // the params of each sampling request the handler answered
	elicited []string // the params of each elicitation request
}

// connectRef connects a client answering sampling (with "sampled: <the prompt>"), elicitation (accepting
// with a value for every property asked) and roots (roots) over t.
func connectRef(t *testing.T, tr mcp.Transport, roots ...*mcp.Root) *refClient {
	t.Helper()
	rc := &refClient{rec: &wireRec{methods: map[jsonrpc.ID]string{}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-reference-client", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			b, _ := json.Marshal(req.Params)
			rc.mu.Lock()
			rc.sampled = append(rc.sampled, string(b))
			rc.mu.Unlock()
			prompt := ""
			if len(req.Params.Messages) > 0 {
				if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
					prompt = tc.Text
				}
			}
			return &mcp.CreateMessageResult{Role: "assistant", Model: "e2e-model", StopReason: "endTurn",
				Content: &mcp.TextContent{Text: "sampled: " + prompt}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			// An elicitation without a mode is a form (MCP's default): the gateway's SDK sends it with
			// mode "form" (docs/mcp.md), so the two are recorded alike.
			p := *req.Params
			if p.Mode == "" {
				p.Mode = "form"
			}
			b, _ := json.Marshal(&p)
			rc.mu.Lock()
			rc.elicited = append(rc.elicited, string(b))
			rc.mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: fillSchema(req.Params.RequestedSchema)}, nil
		},
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) {},
	})
	c.AddRoots(roots...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The session protocol (what MCP clients speak today): server-initiated requests exist in it only.
	cs, err := c.Connect(ctx, recTransport{Transport: tr, rec: rc.rec}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	rc.cs = cs
	t.Cleanup(func() { _ = cs.Close() })
	return rc
}

// fillSchema is an answer to an elicitation's requested schema: each property's default, else its first
// enum value, else a value of its type.
func fillSchema(schema any) map[string]any {
	var s struct {
		Properties map[string]struct {
			Type    string `json:"type"`
			Default any    `json:"default"`
			Enum    []any  `json:"enum"`
			OneOf   []struct {
				Const any `json:"const"`
			} `json:"oneOf"`
			Format string `json:"format"`
			Items  struct {
				Enum  []any `json:"enum"`
				AnyOf []struct {
					Const any `json:"const"`
				} `json:"anyOf"`
			} `json:"items"`
		} `json:"properties"`
	}
	b, _ := json.Marshal(schema)
	_ = json.Unmarshal(b, &s)
	out := map[string]any{}
	for name, p := range s.Properties {
		switch {
		case p.Default != nil:
			out[name] = p.Default
		case len(p.Enum) > 0:
			out[name] = p.Enum[0]
		case len(p.OneOf) > 0:
			out[name] = p.OneOf[0].Const
		case p.Type == "array" && len(p.Items.Enum) > 0:
			out[name] = []any{p.Items.Enum[0]}
		case p.Type == "array" && len(p.Items.AnyOf) > 0:
			out[name] = []any{p.Items.AnyOf[0].Const}
		case p.Type == "boolean":
			out[name] = true
		case p.Type == "number" || p.Type == "integer":
			out[name] = 1
		case p.Format == "email":
			out[name] = "ada@example.com"
		case p.Format == "date":
			out[name] = "2026-01-02"
		case p.Format == "date-time":
			out[name] = "2026-01-02T03:04:05Z"
		case p.Format == "uri":
			out[name] = "https://example.com"
		default:
			out[name] = "e2e"
		}
	}
	return out
}

// refStep is one exchange of a scripted session; it returns the method whose answer is compared.
type refStep struct {
	name string
	do   func(ctx context.Context, cs *mcp.ClientSession) (method string)
}

func callStep(tool string, args map[string]any) refStep {
	return refStep{name: "tools/call " + tool, do: func(ctx context.Context, cs *mcp.ClientSession) string {
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		return "tools/call"
	}}
}

// clockTimes are the times the servers write into their answers (server-everything's dynamic resources say
// when they were made): two sessions a second apart differ in them only.
var clockTimes = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?|\d{1,2}:\d{2}:\d{2}( [AP]M)?`)

// normJSON is raw decoded, with clock times replaced, for comparing JSON values; nil for none.
func normJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	raw = clockTimes.ReplaceAll(raw, []byte("<time>"))
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "!" + err.Error()
	}
	return v
}

func sameAnswer(a, b wireAnswer) bool {
	if (a.err == nil) != (b.err == nil) {
		return false
	}
	if a.err != nil {
		return a.err.Code == b.err.Code && a.err.Message == b.err.Message
	}
	return reflect.DeepEqual(normJSON(a.result), normJSON(b.result))
}

func (a wireAnswer) String() string {
	if a.err != nil {
		return fmt.Sprintf("error %d %q", a.err.Code, a.err.Message)
	}
	return string(a.result)
}

// compareSessions runs the steps on both sessions and compares each answer, then the requests the client
// got.
func compareSessions(t *testing.T, direct, gw *refClient, steps []refStep) {
	t.Helper()
	for _, s := range steps {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		m := s.do(ctx, direct.cs)
		d := direct.rec.last(m)
		s.do(ctx, gw.cs)
		g := gw.rec.last(m)
		cancel()
		if d.method == "" || g.method == "" {
			t.Errorf("%s: no answer (direct %v, gateway %v)", s.name, d, g)
			continue
		}
		if !sameAnswer(d, g) {
			t.Errorf("%s differs:\ndirect:  %s\ngateway: %s", s.name, d, g)
		}
	}
	direct.mu.Lock()
	gw.mu.Lock()
	defer direct.mu.Unlock()
	defer gw.mu.Unlock()
	if !reflect.DeepEqual(direct.sampled, gw.sampled) {
		t.Errorf("sampling requests differ:\ndirect:  %v\ngateway: %v", direct.sampled, gw.sampled)
	}
	if !reflect.DeepEqual(direct.elicited, gw.elicited) {
		t.Errorf("elicitation requests differ:\ndirect:  %v\ngateway: %v", direct.elicited, gw.elicited)
	}
}

// refControls is the controls file of the reference tests: a deny of sampling requests that carry an SSN,
// with the author's message for the model in action.metadata.reason.
const refControls = `controls:
  - name: no-ssn-to-the-model
    data:
      scope: {step_types: [mcp_server_request], step_names: [sampling/createMessage], stages: [pre]}
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: '\d{3}-\d{2}-\d{4}'}}}
      action: {decision: deny, metadata: {reason: "a sampling prompt must not carry an SSN"}}
`

// gatewayCmd is `guard mcp` in front of the upstream command, with the controls of refControls.
func gatewayCmd(t *testing.T, upstream ...string) *exec.Cmd {
	t.Helper()
	file := filepath.Join(t.TempDir(), "controls.yaml")
	if err := os.WriteFile(file, []byte(refControls), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(buildServer(t), append([]string{"mcp", "--agent", "reference", "--controls", file, "--"}, upstream...)...)
	cmd.Env = append(os.Environ(), "GUARD_URL=", "GUARD_API_KEY=")
	cmd.Stderr = &syncBuffer{}
	return cmd
}

// TestMCPGatewayReferenceEverything: server-everything through the gateway answers as it does directly:
// the initialize result, every tool with all its fields, results of every kind of content, the sampling,
// elicitation and roots requests it makes (the client answers them), its errors, prompts, resources,
// completions and log notifications.
func TestMCPGatewayReferenceEverything(t *testing.T) {
	bin := mcpReferenceServer(t, "mcp-server-everything")
	root := &mcp.Root{URI: "file://" + t.TempDir(), Name: "work"}
	direct := connectRef(t, &mcp.CommandTransport{Command: exec.Command(bin), TerminateDuration: time.Second}, root)
	gwCmd := gatewayCmd(t, bin)
	gw := connectRef(t, &mcp.CommandTransport{Command: gwCmd, TerminateDuration: 5 * time.Second}, root)

	di, gi := direct.cs.InitializeResult(), gw.cs.InitializeResult()
	if !reflect.DeepEqual(di.ServerInfo, gi.ServerInfo) || di.Instructions != gi.Instructions || di.ProtocolVersion != gi.ProtocolVersion {
		t.Errorf("initialize differs:\ndirect:  %+v %q\ngateway: %+v %q", di.ServerInfo, di.ProtocolVersion, gi.ServerInfo, gi.ProtocolVersion)
	}
	if src := canonJSON(gi.Meta["guard"]); src != `{"controls_source":"file"}` {
		t.Errorf("initialize _meta.guard = %s, want the control source", src)
	}

	steps := []refStep{
		{name: "tools/list", do: func(ctx context.Context, cs *mcp.ClientSession) string {
			_, _ = cs.ListTools(ctx, nil)
			return "tools/list"
		}},
		callStep("echo", map[string]any{"message": "hello"}),
		callStep("get-sum", map[string]any{"a": 2, "b": 3}),
		callStep("get-tiny-image", map[string]any{}),
		callStep("get-annotated-message", map[string]any{"messageType": "success", "includeImage": true}),
		callStep("get-resource-reference", map[string]any{}),
		callStep("get-resource-links", map[string]any{"count": 2}),
		callStep("get-structured-content", map[string]any{"location": "Chicago"}),
		callStep("trigger-sampling-request", map[string]any{"prompt": "Say hi", "maxTokens": 5}),
		callStep("trigger-elicitation-request", map[string]any{}),
		callStep("get-roots-list", map[string]any{}),
		callStep("no-such-tool", map[string]any{}),
		callStep("simulate-research-query", map[string]any{"topic": "tasks"}), // execution.taskSupport "required"
		callStep("echo", map[string]any{}),
		callStep("get-sum", map[string]any{"a": "two"}),
		{name: "prompts/list", do: func(ctx context.Context, cs *mcp.ClientSession) string {
			_, _ = cs.ListPrompts(ctx, nil)
			return "prompts/list"
		}},
		{name: "prompts/get", do: func(ctx context.Context, cs *mcp.ClientSession) string {
			_, _ = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "simple-prompt"})
			return "prompts/get"
		}},
		{name: "resources/list", do: func(ctx context.Context, cs *mcp.ClientSession) string {
			_, _ = cs.ListResources(ctx, nil)
			return "resources/list"
		}},
		{name: "resources/templates/list", do: func(ctx context.Context, cs *mcp.ClientSession) string {
			_, _ = cs.ListResourceTemplates(ctx, nil)
			return "resources/templates/list"
		}},
		{name: "resources/read", do: func(ctx context.Context, cs *mcp.ClientSession) string {
			_, _ = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/static/document/architecture.md"})
			return "resources/read"
		}},
		{name: "completion/complete", do: func(ctx context.Context, cs *mcp.ClientSession) string {
			_, _ = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "args-prompt"},
				Argument: mcp.CompleteParamsArgument{Name: "city", Value: "B"}})
			return "completion/complete"
		}},
		{name: "logging/setLevel", do: func(ctx context.Context, cs *mcp.ClientSession) string {
			_ = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
			return "logging/setLevel"
		}},
	}
	compareSessions(t, direct, gw, steps)
	if len(gw.sampled) != 1 || len(gw.elicited) != 1 {
		t.Errorf("the client answered %d sampling and %d elicitation requests through the gateway, want 1 and 1", len(gw.sampled), len(gw.elicited))
	}

	// Progress notifications of a call with a progress token: the same ones, with the client's own token.
	progress := map[*refClient]string{}
	for _, rc := range []*refClient{direct, gw} {
		rc.rec.mu.Lock()
		rc.rec.notes = nil
		rc.rec.mu.Unlock()
		res := rc.call(t, "trigger-long-running-operation", map[string]any{"duration": 0.2, "steps": 2}, "progress-1")
		if res.IsError {
			t.Fatalf("trigger-long-running-operation: %+v", res)
		}
		waitFor(t, "the progress notifications", func() bool { return rc.rec.count("notifications/progress") == 2 })
		rc.rec.mu.Lock()
		for _, n := range rc.rec.notes {
			if n.Method == "notifications/progress" {
				progress[rc] += string(n.Params) + "\n"
			}
		}
		rc.rec.mu.Unlock()
	}
	if !reflect.DeepEqual(normLines(progress[direct]), normLines(progress[gw])) {
		t.Errorf("progress notifications differ:\ndirect:  %s\ngateway: %s", progress[direct], progress[gw])
	}

	// Log notifications: the server's simulated logging sends them at random levels and times; both
	// sessions get some, of the same shape. (Only those after logging/setLevel: before it, the gateway's
	// SDK holds them back, as docs/mcp.md says.)
	for _, rc := range []*refClient{direct, gw} {
		rc.rec.mu.Lock()
		rc.rec.notes = nil
		rc.rec.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if _, err := rc.cs.CallTool(ctx, &mcp.CallToolParams{Name: "toggle-simulated-logging", Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	waitFor(t, "log notifications on both sessions", func() bool {
		return direct.rec.count("notifications/message") >= 2 && gw.rec.count("notifications/message") >= 2
	})
	if d, g := logShape(direct.rec), logShape(gw.rec); d != g {
		t.Errorf("log notifications differ in shape: direct %s, gateway %s\ndirect: %s\ngateway: %s", d, g, logLines(direct.rec), logLines(gw.rec))
	}
}

// logShape is the keys of the params of the log notifications, all together.
func logShape(r *wireRec) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := map[string]bool{}
	for _, n := range r.notes {
		if n.Method == "notifications/message" {
			var m map[string]any
			_ = json.Unmarshal(n.Params, &m)
			for k := range m {
				keys[k] = true
			}
		}
	}
	return fmt.Sprint(slices.Sorted(maps.Keys(keys)))
}

func canonJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func logLines(r *wireRec) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b []string
	for _, n := range r.notes {
		b = append(b, n.Method+" "+string(n.Params))
	}
	return fmt.Sprint(b)
}

// TestMCPGatewayReferenceFilesystemRoots: server-filesystem started without directories (roots mode, how
// desktop clients use it) gets its allowed directories from the client's roots through the gateway, and
// answers as it does directly.
func TestMCPGatewayReferenceFilesystemRoots(t *testing.T) {
	bin := mcpReferenceServer(t, "mcp-server-filesystem")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello from the roots"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := &mcp.Root{URI: "file://" + dir, Name: "work"}
	direct := connectRef(t, &mcp.CommandTransport{Command: exec.Command(bin), TerminateDuration: time.Second}, root)
	gw := connectRef(t, &mcp.CommandTransport{Command: gatewayCmd(t, bin), TerminateDuration: 5 * time.Second}, root)

	// The server asks for the roots once initialized; its allowed directories follow.
	allowed := func(rc *refClient) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := rc.cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_allowed_directories", Arguments: map[string]any{}})
		return err == nil && !res.IsError && strings.Contains(refText(res), dir)
	}
	waitFor(t, "the directory of the client's roots to be allowed, directly", func() bool { return allowed(direct) })
	waitFor(t, "the directory of the client's roots to be allowed, through the gateway", func() bool { return allowed(gw) })

	compareSessions(t, direct, gw, []refStep{
		{name: "tools/list", do: func(ctx context.Context, cs *mcp.ClientSession) string {
			_, _ = cs.ListTools(ctx, nil)
			return "tools/list"
		}},
		callStep("list_allowed_directories", map[string]any{}),
		callStep("read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")}),
		callStep("list_directory", map[string]any{"path": dir}),
		callStep("read_text_file", map[string]any{"path": "/etc/hostname"}),
		callStep("get_file_info", map[string]any{"path": filepath.Join(dir, "missing.txt")}),
	})
	res := gw.call(t, "read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")})
	if res.IsError || !strings.Contains(refText(res), "hello from the roots") {
		t.Fatalf("read through the gateway: %+v", res)
	}
}

// TestMCPGatewayReferenceMemory: server-memory (its graph in a file of the test's) answers as it does
// directly.
func TestMCPGatewayReferenceMemory(t *testing.T) {
	bin := mcpReferenceServer(t, "mcp-server-memory")
	dcmd := exec.Command(bin)
	dcmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "direct.jsonl"))
	direct := connectRef(t, &mcp.CommandTransport{Command: dcmd, TerminateDuration: time.Second})
	gcmd := gatewayCmd(t, bin)
	gcmd.Env = append(gcmd.Env, "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "gateway.jsonl"))
	gw := connectRef(t, &mcp.CommandTransport{Command: gcmd, TerminateDuration: 5 * time.Second})
	compareSessions(t, direct, gw, []refStep{
		{name: "tools/list", do: func(ctx context.Context, cs *mcp.ClientSession) string {
			_, _ = cs.ListTools(ctx, nil)
			return "tools/list"
		}},
		callStep("create_entities", map[string]any{"entities": []any{map[string]any{"name": "Ada", "entityType": "person",
			"observations": []any{"wrote the first program"}}}}),
		callStep("read_graph", map[string]any{}),
		callStep("search_nodes", map[string]any{"query": "program"}),
		callStep("create_entities", map[string]any{"entities": "not a list"}),
	})
}

// TestMCPGatewayReferenceSamplingDenied: a control on the sampling step denies server-everything's
// sampling request whose prompt carries an SSN: the client never sees it, and the control author's message
// (action.metadata.reason) reaches the server, which puts it in its tool result for the model.
func TestMCPGatewayReferenceSamplingDenied(t *testing.T) {
	bin := mcpReferenceServer(t, "mcp-server-everything")
	gw := connectRef(t, &mcp.CommandTransport{Command: gatewayCmd(t, bin), TerminateDuration: 5 * time.Second})
	res := gw.call(t, "trigger-sampling-request", map[string]any{"prompt": "my SSN is 123-45-6789", "maxTokens": 5})
	gw.mu.Lock()
	sampled := len(gw.sampled)
	gw.mu.Unlock()
	if sampled != 0 {
		t.Fatalf("the client got %d sampling requests, want none", sampled)
	}
	if text := refText(res); !res.IsError || !strings.Contains(text, "a sampling prompt must not carry an SSN") {
		t.Fatalf("result %q (isError %v), want the server's error with the control's message", text, res.IsError)
	}
	// Without an SSN the same request reaches the client.
	res = gw.call(t, "trigger-sampling-request", map[string]any{"prompt": "say hi", "maxTokens": 5})
	if text := refText(res); !strings.Contains(text, "sampled: ") || !strings.Contains(text, "say hi") {
		t.Fatalf("allowed sampling: %q", refText(res))
	}
}

// call calls a tool (with a progress token when one is given) and fails the test on an MCP error.
func (rc *refClient) call(t *testing.T, tool string, args map[string]any, progressToken ...string) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if len(progressToken) > 0 {
		p.Meta = mcp.Meta{"progressToken": progressToken[0]}
	}
	res, err := rc.cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// refText is the text of a result's text blocks, joined with newlines.
func refText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// normLines is each line of s decoded as JSON.
func normLines(s string) []any {
	var out []any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, normJSON(json.RawMessage(l)))
	}
	return out
}
