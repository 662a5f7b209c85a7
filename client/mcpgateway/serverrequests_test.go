//lint:file-ignore SA1019 MCP's sampling, roots and logging are deprecated from protocol 2026-07-28 on, but they are the session protocol's, which the gateway's clients and upstreams speak: it passes them on.

package mcpgateway_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/mcpgateway"
)

// srvReqRig is an upstream whose tools make requests to the client (sampling, elicitation, roots) and log,
// the gateway, and a client that answers them (when it announces the capability) and records what it got.
type srvReqRig struct {
	gw    *mcpgateway.Gateway
	cs    *mcp.ClientSession
	guard *fakeGuard

	cl *mcp.Client

	mu           sync.Mutex
	rootsChanged int      // notifications/roots/list_changed the upstream got
	sampled      []string // the text of the first message of each sampling request the client got
	elicited     []string // the message of each elicitation request the client got
	logs         []string // the data of each log message the client got
}

func newSrvReqRig(t *testing.T, capable bool) *srvReqRig {
	t.Helper()
	ctx := context.Background()
	r := &srvReqRig{guard: &fakeGuard{record: true}}
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{
		Tools: &mcp.ToolCapabilities{}, Logging: &mcp.LoggingCapabilities{}},
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) {
			r.mu.Lock()
			r.rootsChanged++
			r.mu.Unlock()
		}})
	type promptIn struct {
		Prompt string `json:"prompt"`
	}
	answer := func(s string, err error) (*mcp.CallToolResult, any, error) {
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "request failed: " + err.Error()}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil, nil
	}
	mcp.AddTool(up, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, in promptIn) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}}})
		if err != nil {
			return answer("", err)
		}
		return answer("model: "+res.Content.(*mcp.TextContent).Text, nil)
	})
	mcp.AddTool(up, &mcp.Tool{Name: "elicit"}, func(ctx context.Context, req *mcp.CallToolRequest, in promptIn) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: in.Prompt, RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"password": map[string]any{"type": "string"}}}})
		if err != nil {
			return answer("", err)
		}
		return answer(res.Action+": "+canon(res.Content), nil)
	})
	mcp.AddTool(up, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return answer("", err)
		}
		var uris []string
		for _, rt := range res.Roots {
			uris = append(uris, rt.URI)
		}
		return answer(strings.Join(uris, ","), nil)
	})
	mcp.AddTool(up, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *mcp.CallToolRequest, in promptIn) (*mcp.CallToolResult, any, error) {
		return answer("logged", req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "up", Data: in.Prompt}))
	})
	t1, t2 := mcp.NewInMemoryTransports()
	upSess, err := up.Connect(ctx, t2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.gw, err = mcpgateway.Connect(ctx, t1, mcpgateway.Options{}); err != nil {
		t.Fatal(err)
	}
	srv := r.gw.Server(r.guard)
	c1, c2 := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, c2, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			r.mu.Lock()
			r.logs = append(r.logs, canon(req.Params.Data))
			r.mu.Unlock()
		}}
	if capable {
		opts.Capabilities = nil // roots, by default
		opts.CreateMessageHandler = func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			text := req.Params.Messages[0].Content.(*mcp.TextContent).Text
			r.mu.Lock()
			r.sampled = append(r.sampled, text)
			r.mu.Unlock()
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "the answer to " + text}}, nil
		}
		opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			r.mu.Lock()
			r.elicited = append(r.elicited, req.Params.Message)
			r.mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"password": "hunter2"}}, nil
		}
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, opts)
	r.cl = cl
	if capable {
		cl.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
	}
	// A client of the session protocol: from 2026-07-28 on, MCP has no server-initiated requests.
	if r.cs, err = cl.Connect(ctx, c1, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cs.Close()
		_ = ss.Wait()
		_ = r.gw.Close()
		_ = upSess.Close()
	})
	return r
}

var ssn = regexp.MustCompile(`\d{3}-\d{2}-\d{4}`)

// TestServerRequests: the upstream's sampling, elicitation and roots requests reach a client that announced
// the capability, checked as steps of type mcp_server_request at pre (the request) and post (the answer);
// a deny answers the upstream with an error and the client never sees the request.
func TestServerRequests(t *testing.T) {
	denySSN := func(step *guard.Step, stage guard.Stage) error {
		if step.Type == mcpgateway.StepTypeServerRequest && stage == guard.StagePre && ssn.MatchString(canon(step.Input)) {
			return &guard.ControlViolationError{ControlID: 3, ControlName: "no-ssn-to-model", Message: "the prompt carries an SSN"}
		}
		return nil
	}
	denyPassword := func(step *guard.Step, stage guard.Stage) error {
		if step.Name == mcpgateway.StepElicitation && stage == guard.StagePost && strings.Contains(canon(step.Output), "password") {
			return &guard.ControlViolationError{ControlID: 4, ControlName: "no-passwords", Message: "do not hand passwords to tools"}
		}
		return nil
	}
	redactAnswer := func(step *guard.Step, stage guard.Stage) error {
		if step.Name == mcpgateway.StepSampling && stage == guard.StagePost {
			out := step.Output.(map[string]any)
			cp := map[string]any{}
			for k, v := range out {
				cp[k] = v
			}
			cp["content"] = map[string]any{"type": "text", "text": "[REDACTED]"}
			step.Output = cp
		}
		return nil
	}
	tests := []struct {
		name        string
		capable     bool
		decide      func(*guard.Step, guard.Stage) error
		tool        string
		prompt      string
		want        string // substring of the tool's text
		isError     bool
		sampled     int
		elicited    int
		checkedStep string // a step of this name was checked at pre and post
	}{
		{name: "sampling passes", capable: true, tool: "ask", prompt: "what time is it", want: "model: the answer to what time is it",
			sampled: 1, checkedStep: mcpgateway.StepSampling},
		{name: "sampling with an SSN is denied before the client sees it", capable: true, decide: denySSN, tool: "ask",
			prompt: "my SSN is 123-45-6789", want: `no-ssn-to-model`, isError: true},
		{name: "sampling answer redacted at post", capable: true, decide: redactAnswer, tool: "ask", prompt: "hi",
			want: "model: [REDACTED]", sampled: 1},
		{name: "elicitation passes", capable: true, tool: "elicit", prompt: "your password?", want: `accept: {"password":"hunter2"}`,
			elicited: 1, checkedStep: mcpgateway.StepElicitation},
		{name: "elicitation answer denied at post", capable: true, decide: denyPassword, tool: "elicit", prompt: "your password?",
			want: "no-passwords", isError: true, elicited: 1},
		{name: "roots come from the client", capable: true, tool: "roots", want: "file:///work", checkedStep: mcpgateway.StepRoots},
		{name: "no sampling capability: method not found", tool: "ask", prompt: "hi", want: "method not found", isError: true},
		{name: "no elicitation capability", tool: "elicit", prompt: "hi", want: "method not found", isError: true},
		{name: "no roots capability", tool: "roots", want: "method not found", isError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newSrvReqRig(t, tc.capable)
			r.guard.decide = tc.decide
			args := map[string]any{}
			if tc.prompt != "" {
				args["prompt"] = tc.prompt
			}
			res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: args})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(res); !strings.Contains(got, tc.want) || res.IsError != tc.isError {
				t.Fatalf("result %q (isError %v), want %q (isError %v)", got, res.IsError, tc.want, tc.isError)
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if len(r.sampled) != tc.sampled || len(r.elicited) != tc.elicited {
				t.Fatalf("the client got %d sampling and %d elicitation requests, want %d and %d", len(r.sampled), len(r.elicited), tc.sampled, tc.elicited)
			}
			if tc.checkedStep != "" {
				var stages []guard.Stage
				r.guard.mu.Lock()
				for _, s := range r.guard.seen {
					if s.name == tc.checkedStep {
						stages = append(stages, s.stage)
					}
				}
				r.guard.mu.Unlock()
				if len(stages) != 2 || stages[0] != guard.StagePre || stages[1] != guard.StagePost {
					t.Fatalf("step %s checked at %v, want pre and post", tc.checkedStep, stages)
				}
			}
		})
	}
}

// TestServerRequestDeniedError: the upstream gets a JSON-RPC error with code CodeBlocked, the control's
// message and the decision in its data.
func TestServerRequestDeniedError(t *testing.T) {
	r := newSrvReqRig(t, true)
	r.guard.decide = func(step *guard.Step, stage guard.Stage) error {
		if step.Type == mcpgateway.StepTypeServerRequest {
			return &guard.ControlViolationError{ControlID: 3, ControlName: "no-sampling", Message: "not here"}
		}
		return nil
	}
	res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"prompt": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	// The upstream's SDK puts the error's message in err.Error(): the tool relays it.
	if got := text(res); !strings.Contains(got, `blocked by guard control "no-sampling": not here`) {
		t.Fatalf("the upstream got %q", got)
	}
}

// TestLoggingPasses: logging/setLevel reaches the upstream, and its log messages reach the client.
func TestLoggingPasses(t *testing.T) {
	r := newSrvReqRig(t, false)
	if err := r.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "log", Arguments: map[string]any{"prompt": "disk almost full"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the log message", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.logs) == 1 && r.logs[0] == `"disk almost full"`
	})
}

// TestRootsListChangedPasses: a client's notifications/roots/list_changed reaches the upstream, which then
// lists the new roots through the gateway.
func TestRootsListChangedPasses(t *testing.T) {
	r := newSrvReqRig(t, true)
	r.cl.AddRoots(&mcp.Root{URI: "file:///more", Name: "more"})
	waitFor(t, "the upstream to be told the roots changed", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.rootsChanged >= 1
	})
	res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "roots", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(res); got != "file:///more,file:///work" && got != "file:///work,file:///more" {
		t.Fatalf("roots %q, want both of the client's", got)
	}
}
