package mcpgateway_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
	"github.com/guardrail-control/guard/client/mcpgateway"
)

func TestMain(m *testing.M) {
	mcpgateway.RunSupervisorIfAsked() // the test binary is the watchdog of supervise_test.go's upstreams
	runFakeGatewayIfAsked()
	goleak.VerifyTestMain(m)
}

// fakeGuard decides with decide and records what it saw.
type fakeGuard struct {
	mu      sync.Mutex
	decide  func(step *guard.Step, stage guard.Stage) error
	seen    []seenStep
	synced  [][]guard.StepSchema
	record  bool  // keep what CheckStep saw (off in benchmarks)
	syncErr error // what SyncSteps returns
}

type seenStep struct {
	stage  guard.Stage
	name   string
	input  any
	output any
}

func (f *fakeGuard) CheckStep(_ context.Context, step *guard.Step, stage guard.Stage) error {
	f.mu.Lock()
	if f.record {
		f.seen = append(f.seen, seenStep{stage, step.Name, step.Input, step.Output})
	}
	d := f.decide
	f.mu.Unlock()
	if d == nil {
		return nil
	}
	return d(step, stage)
}

func (f *fakeGuard) SyncSteps(_ context.Context, steps []guard.StepSchema) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced = append(f.synced, steps)
	return f.syncErr
}

func (f *fakeGuard) lastSeen() seenStep {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[len(f.seen)-1]
}

// upstream is an in-process MCP server with a call counter.
type upstream struct {
	srv   *mcp.Server
	mu    sync.Mutex
	calls map[string]int
}

func (u *upstream) count(name string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[name]
}

func newUpstream() *upstream {
	u := &upstream{srv: mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil), calls: map[string]int{}}
	hit := func(name string) {
		u.mu.Lock()
		u.calls[name]++
		u.mu.Unlock()
	}
	type textIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(u.srv, &mcp.Tool{Name: "echo", Description: "echoes"}, func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		hit("echo")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}, &mcp.TextContent{Text: "second block"}}}, nil, nil
	})
	type sumOut struct {
		Sum int `json:"sum"`
	}
	mcp.AddTool(u.srv, &mcp.Tool{Name: "sum"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct{ A, B int }) (*mcp.CallToolResult, sumOut, error) {
		hit("sum")
		return nil, sumOut{in.A + in.B}, nil
	})
	mcp.AddTool(u.srv, &mcp.Tool{Name: "fails"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		hit("fails")
		return nil, nil, errors.New("disk full")
	})
	mcp.AddTool(u.srv, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		hit("slow")
		<-ctx.Done()
		hit("slow-cancelled")
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(u.srv, &mcp.Tool{Name: "progress"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		hit("progress")
		if tok := req.Params.GetProgressToken(); tok != nil {
			for i := 1; i <= 2; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 2,
					Message: fmt.Sprintf("step %d", i)})
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	u.srv.AddPrompt(&mcp.Prompt{Name: "hello"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi there"}}}}, nil
	})
	u.srv.AddResource(&mcp.Resource{URI: "mem://a", Name: "a"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "resource a"}}}, nil
	})
	u.srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://t/{id}", Name: "t"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "template " + r.Params.URI}}}, nil
	})
	return u
}

// rig is an upstream, a gateway in front of it and a client, all in-process.
type rig struct {
	up      *upstream
	upSess  *mcp.ServerSession
	gw      *mcpgateway.Gateway
	cs      *mcp.ClientSession
	guard   *fakeGuard
	changed chan struct{}

	progressMu sync.Mutex
	progress   []mcp.ProgressNotificationParams // received by the client, in order
}

func newRig(t testing.TB, opts mcpgateway.Options) *rig {
	t.Helper()
	ctx := context.Background()
	r := &rig{up: newUpstream(), guard: &fakeGuard{record: true}, changed: make(chan struct{}, 16)}
	t1, t2 := mcp.NewInMemoryTransports()
	var err error
	if r.upSess, err = r.up.srv.Connect(ctx, t2, nil); err != nil {
		t.Fatal(err)
	}
	if r.gw, err = mcpgateway.Connect(ctx, t1, opts); err != nil {
		t.Fatal(err)
	}
	srv := r.gw.Server(r.guard)
	c1, c2 := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, c2, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case r.changed <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			r.progressMu.Lock()
			r.progress = append(r.progress, *req.Params)
			r.progressMu.Unlock()
		},
	})
	if r.cs, err = cl.Connect(ctx, c1, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cs.Close()
		_ = ss.Wait()
		_ = r.gw.Close()
		_ = r.upSess.Close()
	})
	return r
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "|")
}

func TestSteps(t *testing.T) {
	r := newRig(t, mcpgateway.Options{})
	steps := r.gw.Steps()
	byName := map[string]guard.StepSchema{}
	for _, s := range steps {
		byName[s.Name] = s
	}
	if len(steps) != 5 {
		t.Fatalf("steps = %+v, want the 5 tools", steps)
	}
	echo := byName["echo"]
	props, _ := echo.InputSchema["properties"].(map[string]any)
	if echo.Type != "tool" || echo.Description != "echoes" || props["text"] == nil {
		t.Fatalf("echo step = %+v, want type tool, the description and the input schema", echo)
	}
	if byName["sum"].OutputSchema == nil {
		t.Fatalf("sum step has no output schema: %+v", byName["sum"])
	}
}

func TestToolCall(t *testing.T) {
	deny := &guard.ControlViolationError{ControlID: 7, ControlName: "no-rm", Message: "destructive command"}
	steer := &guard.ControlSteerError{ControlID: 8, ControlName: "ask-first", SteeringContext: guard.SteeringContext{
		Message: "confirm with the user", RequiredActions: []string{"ask for confirmation", "retry"}}}
	tests := []struct {
		name       string
		tool       string
		args       map[string]any
		decide     func(*guard.Step, guard.Stage) error
		wantErr    string   // an MCP error containing this
		isError    bool     // a tool error result
		texts      []string // substrings of the text
		reaches    bool
		wantOutput any // the step output at post (when reached)
		decision   string
	}{
		{name: "allowed, text joined", tool: "echo", args: map[string]any{"text": "hi"},
			texts: []string{"echo: hi|second block"}, reaches: true, wantOutput: "echo: hi\nsecond block"},
		{name: "allowed, structured", tool: "sum", args: map[string]any{"A": 2, "B": 3},
			texts: []string{`{"sum":5}`}, reaches: true, wantOutput: map[string]any{"sum": float64(5)}},
		{name: "a tool error result is checked too", tool: "fails", args: map[string]any{},
			isError: true, texts: []string{"disk full"}, reaches: true, wantOutput: "disk full"},
		{name: "deny at pre", tool: "echo", args: map[string]any{"text": "rm"},
			decide:  func(_ *guard.Step, st guard.Stage) error { return when(st == guard.StagePre, deny) },
			isError: true, texts: []string{`Tool call blocked by guard control "no-rm": destructive command`}, decision: "deny"},
		{name: "steer at pre", tool: "echo", args: map[string]any{"text": "x"},
			decide:  func(_ *guard.Step, st guard.Stage) error { return when(st == guard.StagePre, steer) },
			isError: true, texts: []string{`steered by guard control "ask-first": confirm with the user`, "Required actions:\n- ask for confirmation\n- retry"}, decision: "steer"},
		{name: "deny at post", tool: "echo", args: map[string]any{"text": "x"},
			decide:  func(_ *guard.Step, st guard.Stage) error { return when(st == guard.StagePost, deny) },
			isError: true, texts: []string{`Tool result withheld: it was blocked by guard control "no-rm"`}, reaches: true, decision: "deny"},
		{name: "steer at post", tool: "echo", args: map[string]any{"text": "x"},
			decide:  func(_ *guard.Step, st guard.Stage) error { return when(st == guard.StagePost, steer) },
			isError: true, texts: []string{`Tool result withheld: guard control "ask-first" steers this call`}, reaches: true, decision: "steer"},
		{name: "evaluation error: an MCP error, not forwarded", tool: "echo", args: map[string]any{"text": "x"},
			decide:  func(*guard.Step, guard.Stage) error { return errors.New("engine broke") },
			wantErr: "guard could not evaluate the pre stage"},
		{name: "unknown tool", tool: "nope", args: map[string]any{}, wantErr: "unknown tool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, mcpgateway.Options{})
			r.guard.decide = tc.decide
			res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("CallTool = %+v, %v; want an MCP error with %q", res, err, tc.wantErr)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError != tc.isError {
					t.Fatalf("isError = %v, want %v (%s)", res.IsError, tc.isError, text(res))
				}
				for _, s := range tc.texts {
					if !strings.Contains(text(res), s) {
						t.Fatalf("text %q does not contain %q", text(res), s)
					}
				}
				if tc.decision != "" {
					meta, _ := res.Meta[mcpgateway.MetaKey].(map[string]any)
					if meta["decision"] != tc.decision || meta["control_name"] == "" {
						t.Fatalf("_meta = %v, want decision %s", res.Meta, tc.decision)
					}
				}
			}
			if got := r.up.count(tc.tool) > 0; got != tc.reaches {
				t.Fatalf("reached the upstream = %v, want %v", got, tc.reaches)
			}
			if tc.tool == "nope" {
				return
			}
			first := r.guard.seen[0]
			if first.stage != guard.StagePre || first.name != tc.tool || canon(first.input) != canon(normalise(tc.args)) {
				t.Fatalf("pre step = %+v, want the arguments of %s", first, tc.tool)
			}
			if tc.wantOutput != nil {
				last := r.guard.lastSeen()
				if last.stage != guard.StagePost || canon(last.output) != canon(tc.wantOutput) {
					t.Fatalf("post step output = %#v, want %#v", last.output, tc.wantOutput)
				}
			}
		})
	}
}

func when(b bool, err error) error {
	if b {
		return err
	}
	return nil
}

func TestToolListChanged(t *testing.T) {
	r := newRig(t, mcpgateway.Options{})
	mcp.AddTool(r.up.srv, &mcp.Tool{Name: "late"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
	})
	r.up.srv.RemoveTools("fails")
	waitFor(t, "the client's tools to change", func() bool {
		lt, err := r.cs.ListTools(context.Background(), nil)
		if err != nil {
			return false
		}
		names := map[string]bool{}
		for _, tl := range lt.Tools {
			names[tl.Name] = true
		}
		return names["late"] && !names["fails"]
	})
	select {
	case <-r.changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed reached the client")
	}
	waitFor(t, "the steps to be synchronised", func() bool {
		r.guard.mu.Lock()
		defer r.guard.mu.Unlock()
		if len(r.guard.synced) == 0 {
			return false
		}
		last := r.guard.synced[len(r.guard.synced)-1]
		has := map[string]bool{}
		for _, s := range last {
			has[s.Name] = true
		}
		return has["late"] && !has["fails"]
	})
	res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "late"})
	if err != nil || text(res) != "late" {
		t.Fatalf("the new tool: %+v, %v", res, err)
	}
}

func TestSyncRefusedByTheGuard(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	r := newRig(t, mcpgateway.Options{Logger: zap.New(core)})
	r.guard.mu.Lock()
	r.guard.syncErr = errors.New("409 strict-mode conflict")
	r.guard.mu.Unlock()
	mcp.AddTool(r.up.srv, &mcp.Tool{Name: "late"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
	})
	waitFor(t, "the refused registration to be logged", func() bool {
		for _, e := range logs.All() {
			if err, ok := e.ContextMap()["error"].(string); ok && strings.Contains(err, "register the new steps: 409 strict-mode conflict") {
				return true
			}
		}
		return false
	})
	// The new tool is served (and checked) all the same.
	res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "late"})
	if err != nil || text(res) != "late" {
		t.Fatalf("the new tool after a refused registration: %+v, %v", res, err)
	}
	if last := r.guard.lastSeen(); last.name != "late" {
		t.Fatalf("the new tool was not checked: %+v", last)
	}
}

func TestPassThrough(t *testing.T) {
	r := newRig(t, mcpgateway.Options{})
	ctx := context.Background()
	caps := r.cs.InitializeResult().Capabilities
	if caps.Prompts == nil || caps.Resources == nil || caps.Resources.Subscribe || caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("capabilities = %+v", caps)
	}
	pr, err := r.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "hello"})
	if err != nil || pr.Messages[0].Content.(*mcp.TextContent).Text != "hi there" {
		t.Fatalf("prompts/get = %+v, %v", pr, err)
	}
	lp, err := r.cs.ListPrompts(ctx, nil)
	if err != nil || len(lp.Prompts) != 1 || lp.Prompts[0].Name != "hello" {
		t.Fatalf("prompts/list = %+v, %v", lp, err)
	}
	lr, err := r.cs.ListResources(ctx, nil)
	if err != nil || len(lr.Resources) != 1 || lr.Resources[0].URI != "mem://a" {
		t.Fatalf("resources/list = %+v, %v", lr, err)
	}
	lrt, err := r.cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(lrt.ResourceTemplates) != 1 {
		t.Fatalf("resources/templates/list = %+v, %v", lrt, err)
	}
	rr, err := r.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://t/9"})
	if err != nil || rr.Contents[0].Text != "template mem://t/9" {
		t.Fatalf("resources/read = %+v, %v", rr, err)
	}
	if _, err := r.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://missing"}); err == nil {
		t.Fatal("reading a missing resource succeeded")
	}
	if len(r.guard.seen) != 0 {
		t.Fatalf("passed-through requests were checked: %+v", r.guard.seen)
	}
}

func TestCallTimeout(t *testing.T) {
	r := newRig(t, mcpgateway.Options{CallTimeout: 50 * time.Millisecond})
	_, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow"})
	if err == nil || !strings.Contains(err.Error(), "did not answer tools/call \"slow\" within 50ms") {
		t.Fatalf("slow call = %v", err)
	}
	// The upstream was told: its handler's context was cancelled.
	waitFor(t, "the upstream's slow call to be cancelled", func() bool { return r.up.count("slow-cancelled") == 1 })
	res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}})
	if err != nil || !strings.HasPrefix(text(res), "echo: after") {
		t.Fatalf("a call after the timeout = %+v, %v", res, err)
	}
}

func TestProgress(t *testing.T) {
	r := newRig(t, mcpgateway.Options{})
	params := &mcp.CallToolParams{Name: "progress"}
	params.SetProgressToken("client-7")
	res, err := r.cs.CallTool(context.Background(), params)
	if err != nil || text(res) != "done" {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	waitFor(t, "the progress notifications", func() bool {
		r.progressMu.Lock()
		defer r.progressMu.Unlock()
		return len(r.progress) == 2
	})
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	for i, p := range r.progress {
		if p.ProgressToken != "client-7" || p.Progress != float64(i+1) || p.Message != fmt.Sprintf("step %d", i+1) {
			t.Fatalf("progress %d = %+v, want the client's token and the upstream's progress", i, p)
		}
	}
}

func TestClientCancellation(t *testing.T) {
	r := newRig(t, mcpgateway.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
		done <- err
	}()
	waitFor(t, "the call to reach the upstream", func() bool { return r.up.count("slow") == 1 })
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	// The client's cancellation went through the gateway to the upstream's handler.
	waitFor(t, "the upstream's slow call to be cancelled", func() bool { return r.up.count("slow-cancelled") == 1 })
}

func TestUpstreamGone(t *testing.T) {
	r := newRig(t, mcpgateway.Options{})
	_ = r.upSess.Close()
	select {
	case <-r.gw.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after the upstream closed")
	}
	_, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "upstream MCP server is gone") {
		t.Fatalf("call after the upstream closed = %v", err)
	}
	if _, err := r.cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "hello"}); err == nil || !strings.Contains(err.Error(), "upstream MCP server is gone") {
		t.Fatalf("prompts/get after the upstream closed = %v", err)
	}
}

func TestStepOutput(t *testing.T) {
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want any
	}{
		{"nil", nil, ""},
		{"no content", &mcp.CallToolResult{}, ""},
		{"one text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}}}, "a"},
		{"texts joined, images skipped", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}}, &mcp.TextContent{Text: "b"}}}, "a\nb"},
		{"structured wins", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}},
			StructuredContent: map[string]any{"x": 1.0}}, map[string]any{"x": 1.0}},
		{"structured struct", &mcp.CallToolResult{StructuredContent: struct {
			N int `json:"n"`
		}{2}}, map[string]any{"n": 2.0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mcpgateway.StepOutput(tc.res)
			if err != nil || canon(got) != canon(tc.want) {
				t.Fatalf("StepOutput = %#v, %v; want %#v", got, err, tc.want)
			}
		})
	}
}

func TestBlockedResult(t *testing.T) {
	if mcpgateway.BlockedResult(guard.StagePre, errors.New("other")) != nil {
		t.Fatal("a non-policy error made a blocked result")
	}
	res := mcpgateway.BlockedResult(guard.StagePre, &guard.ControlViolationError{ControlName: "c"})
	if !res.IsError || text(res) != `Tool call blocked by guard control "c".` {
		t.Fatalf("deny without a message: %q", text(res))
	}
}

// TestBlockedResultNamesTheApproval: a call refused for approval says which request a person may approve
// and that the same call then runs; a rejection says so.
func TestBlockedResultNamesTheApproval(t *testing.T) {
	deny := &guard.ControlViolationError{ControlName: "refund-over-limit", Message: "Refund of 1000 or more"}
	for _, tt := range []struct {
		name string
		err  error
		want []string
	}{
		{"required", &client.ApprovalRequiredError{Approval: guard.ApprovalRequest{ID: "r-1", URL: "/api/v1/approvals/r-1"}, Status: guard.ApprovalRequired, Err: deny},
			[]string{`Tool call blocked by guard control "refund-over-limit": Refund of 1000 or more`, "approval request r-1 (/api/v1/approvals/r-1", "call the tool again with the same arguments"}},
		{"rejected", &client.ApprovalRequiredError{Approval: guard.ApprovalRequest{ID: "r-2"}, Status: guard.ApprovalRejected, Comment: "no", Err: deny},
			[]string{"blocked by guard control", "Approval request r-2 was rejected: no."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := mcpgateway.BlockedResult(guard.StagePre, tt.err)
			if res == nil || !res.IsError {
				t.Fatalf("result %+v", res)
			}
			got := text(res)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("text %q lacks %q", got, w)
				}
			}
			meta := res.Meta["guard"].(map[string]any)
			if meta["approval_id"] == nil || meta["decision"] != "deny" {
				t.Errorf("meta %v", meta)
			}
		})
	}
}
