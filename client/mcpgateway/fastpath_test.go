package mcpgateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/mcpgateway"
)

// The client's protocol versions of the tests over pipes: the session protocol, whose plain tools/call
// Run serves on its fast path, and the SDK's latest, whose calls go through the SDK's server session.
const (
	sessionVersion = "2025-11-25"
	latestVersion  = "" // the SDK's default
)

// newPipeRig is newRig over OS pipes with LineTransport on both hops and the client served by Gateway.Run,
// the way `guard mcp` runs; the client asks for version.
func newPipeRig(t testing.TB, version string, opts mcpgateway.Options) *rig {
	t.Helper()
	r, _ := newPipeRigUp(t, version, opts)
	return r
}

// newPipeRigUp is newPipeRig that also returns the upstream's transport, whose streams a test closes to
// make the upstream vanish.
func newPipeRigUp(t testing.TB, version string, opts mcpgateway.Options) (*rig, *mcpgateway.LineTransport) {
	t.Helper()
	ctx := context.Background()
	r := &rig{up: newUpstream(), guard: &fakeGuard{record: true}, changed: make(chan struct{}, 16)}
	gt, ut := pipeTransports(t, "line")
	var err error
	if r.upSess, err = r.up.srv.Connect(ctx, ut, nil); err != nil {
		t.Fatal(err)
	}
	if r.gw, err = mcpgateway.Connect(ctx, gt, opts); err != nil {
		t.Fatal(err)
	}
	r.gw.Server(r.guard)
	ct, st := pipeTransports(t, "line")
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- r.gw.Run(runCtx, st) }()
	cl := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			r.progressMu.Lock()
			r.progress = append(r.progress, *req.Params)
			r.progressMu.Unlock()
		},
	})
	if r.cs, err = cl.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cs.Close()
		select {
		case <-ran: // the gateway saw the client's end of the stream
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after the client closed its side")
			stop()
			<-ran
		}
		stop()
		_ = r.gw.Close()
		_ = r.upSess.Close()
	})
	return r, ut.(*mcpgateway.LineTransport)
}

// TestFastPathAsTheSDK: every kind of tools/call answers the same whether Run serves it on its fast path
// (a client of the session protocol) or through the SDK's server session (a client of the latest
// version), and the fast path does serve the first kind.
func TestFastPathAsTheSDK(t *testing.T) {
	deny := &guard.ControlViolationError{ControlID: 7, ControlName: "no-rm", Message: "destructive command"}
	steer := &guard.ControlSteerError{ControlID: 8, ControlName: "ask-first", SteeringContext: guard.SteeringContext{
		Message: "confirm with the user", RequiredActions: []string{"ask for confirmation", "retry"}}}
	tests := []struct {
		name    string
		params  *mcp.CallToolParams
		decide  func(*guard.Step, guard.Stage) error
		want    string // the result (its JSON) or the error
		reaches bool
		fast    bool // served on the fast path for a session-protocol client
	}{
		{name: "allowed", params: &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}},
			want: `{"content":[{"type":"text","text":"echo: hi"},{"type":"text","text":"second block"}]}`, reaches: true, fast: true},
		{name: "allowed, structured", params: &mcp.CallToolParams{Name: "sum", Arguments: map[string]any{"A": 2, "B": 3}},
			want: `{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}`, reaches: true, fast: true},
		{name: "allowed, with _meta", params: &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "m"}, Meta: mcp.Meta{"trace": "t-1"}},
			want: `{"content":[{"type":"text","text":"echo: m"},{"type":"text","text":"second block"}]}`, reaches: true, fast: true},
		{name: "a tool error result", params: &mcp.CallToolParams{Name: "fails", Arguments: map[string]any{}},
			want: `{"content":[{"type":"text","text":"disk full"}],"isError":true}`, reaches: true, fast: true},
		{name: "no arguments", params: &mcp.CallToolParams{Name: "fails"},
			want: `{"content":[{"type":"text","text":"disk full"}],"isError":true}`, reaches: true, fast: true},
		{name: "deny at pre", params: &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "rm"}},
			decide: func(_ *guard.Step, st guard.Stage) error { return when(st == guard.StagePre, deny) },
			want: `{"_meta":{"guard":{"control_id":7,"control_name":"no-rm","decision":"deny","message":"destructive command","stage":"pre"}},` +
				`"content":[{"type":"text","text":"Tool call blocked by guard control \"no-rm\": destructive command"}],"isError":true}`, fast: true},
		{name: "steer at pre", params: &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}},
			decide: func(_ *guard.Step, st guard.Stage) error { return when(st == guard.StagePre, steer) },
			want: `{"_meta":{"guard":{"control_id":8,"control_name":"ask-first","decision":"steer","message":"confirm with the user","required_actions":["ask for confirmation","retry"],"stage":"pre"}},` +
				`"content":[{"type":"text","text":"Tool call steered by guard control \"ask-first\": confirm with the user\nRequired actions:\n- ask for confirmation\n- retry\nCorrect the call and try again."}],"isError":true}`, fast: true},
		{name: "deny at post", params: &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}},
			decide: func(_ *guard.Step, st guard.Stage) error { return when(st == guard.StagePost, deny) },
			want: `{"_meta":{"guard":{"control_id":7,"control_name":"no-rm","decision":"deny","message":"destructive command","stage":"post"}},` +
				`"content":[{"type":"text","text":"Tool result withheld: it was blocked by guard control \"no-rm\": destructive command"}],"isError":true}`, reaches: true, fast: true},
		{name: "evaluation error", params: &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}},
			decide: func(*guard.Step, guard.Stage) error { return errors.New("engine broke") },
			want:   `error: calling "tools/call": guard could not evaluate the pre stage of tool "echo"; the call was stopped`, fast: true},
		{name: "unknown tool", params: &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}},
			want: `error: calling "tools/call": unknown tool "nope"`},
		{name: "arguments not an object", params: &mcp.CallToolParams{Name: "echo", Arguments: []any{1}},
			want: `error: calling "tools/call": tools/call: arguments must be a JSON object`},
		{name: "progress token", params: func() *mcp.CallToolParams {
			p := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{}}
			p.SetProgressToken("p-1")
			return p
		}(), want: `{"content":[{"type":"text","text":"done"}]}`, reaches: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, version := range []string{sessionVersion, latestVersion} {
				r := newPipeRig(t, version, mcpgateway.Options{})
				r.guard.decide = tc.decide
				got, want := callJSON(r.cs, tc.params), tc.want
				if !strings.HasPrefix(want, "error: ") {
					var v any
					if err := json.Unmarshal([]byte(want), &v); err != nil {
						t.Fatal(err)
					}
					want = canon(v)
				}
				if got != want {
					t.Fatalf("client version %q:\n got %s\nwant %s", version, got, want)
				}
				if reached := r.up.count(tc.params.Name) > 0; reached != tc.reaches {
					t.Fatalf("client version %q: reached the upstream = %v, want %v", version, reached, tc.reaches)
				}
				wantFast := int64(0)
				if tc.fast && version == sessionVersion {
					wantFast = 1
				}
				if n := mcpgateway.FastCalls(r.gw); n != wantFast {
					t.Fatalf("client version %q: %d calls on the fast path, want %d", version, n, wantFast)
				}
				if n := mcpgateway.RelayedCalls(r.gw); tc.reaches && n != 1 {
					t.Fatalf("client version %q: %d calls relayed to the upstream, want 1", version, n)
				}
			}
		})
	}
}

// callJSON is the result of a call as JSON, or "error: " and the error. What the SDK adds to every result
// in protocol version 2026-07-28 (resultType, the server's info in _meta) is left out.
func callJSON(cs *mcp.ClientSession, p *mcp.CallToolParams) string {
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		return "error: " + err.Error()
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(canon(res)), &m); err != nil {
		return "!" + err.Error()
	}
	delete(m, "resultType")
	if meta, ok := m["_meta"].(map[string]any); ok {
		for k := range meta {
			if strings.HasPrefix(k, "io.modelcontextprotocol/") {
				delete(meta, k)
			}
		}
		if len(meta) == 0 {
			delete(m, "_meta")
		}
	}
	return canon(m)
}

// TestFastPathProgress: a call with a progress token (left to the SDK's session) gets its progress.
func TestFastPathProgress(t *testing.T) {
	r := newPipeRig(t, sessionVersion, mcpgateway.Options{})
	params := &mcp.CallToolParams{Name: "progress"}
	params.SetProgressToken("client-7")
	if got := callJSON(r.cs, params); got != `{"content":[{"text":"done","type":"text"}]}` {
		t.Fatal(got)
	}
	waitFor(t, "the progress notifications", func() bool {
		r.progressMu.Lock()
		defer r.progressMu.Unlock()
		return len(r.progress) == 2
	})
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	for i, p := range r.progress {
		if p.ProgressToken != "client-7" || p.Message != fmt.Sprintf("step %d", i+1) {
			t.Fatalf("progress %d = %+v", i, p)
		}
	}
}

// TestFastPathCancellation: a client's cancellation of a fast call, and the gateway's call timeout, reach
// the upstream's handler through the relay; the session goes on.
func TestFastPathCancellation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		wantErr string
	}{
		{"the client cancels", 0, "context canceled"},
		{"the call timeout", 50 * time.Millisecond, `did not answer tools/call "slow" within 50ms`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newPipeRig(t, sessionVersion, mcpgateway.Options{CallTimeout: tc.timeout})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
				done <- err
			}()
			waitFor(t, "the call to reach the upstream", func() bool { return r.up.count("slow") == 1 })
			if tc.timeout == 0 {
				cancel()
			}
			if err := <-done; err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("slow call = %v, want an error with %q", err, tc.wantErr)
			}
			waitFor(t, "the upstream's slow call to be cancelled", func() bool { return r.up.count("slow-cancelled") == 1 })
			if mcpgateway.FastCalls(r.gw) != 1 {
				t.Fatalf("%d calls on the fast path, want 1", mcpgateway.FastCalls(r.gw))
			}
			if got := callJSON(r.cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}}); !strings.Contains(got, "echo: after") {
				t.Fatalf("a call after = %s", got)
			}
		})
	}
}

// TestFastPathUpstreamGone: a fast call in flight when the upstream goes, and one after, get the
// gateway's error.
func TestFastPathUpstreamGone(t *testing.T) {
	r, ut := newPipeRigUp(t, sessionVersion, mcpgateway.Options{})
	done := make(chan string, 1)
	go func() { done <- callJSON(r.cs, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}) }()
	waitFor(t, "the call to reach the upstream", func() bool { return r.up.count("slow") == 1 })
	_ = errors.Join(ut.Reader.Close(), ut.Writer.Close()) // the upstream's process is gone
	if got := <-done; !strings.Contains(got, "upstream MCP server is gone") {
		t.Fatalf("call in flight = %s", got)
	}
	if got := callJSON(r.cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); !strings.Contains(got, "upstream MCP server is gone") {
		t.Fatalf("call after = %s", got)
	}
}

// TestFastPathConcurrentCalls: calls at once on the fast path each get their own answer.
func TestFastPathConcurrentCalls(t *testing.T) {
	r := newPipeRig(t, sessionVersion, mcpgateway.Options{})
	const n = 20
	got := make(chan string, n)
	for i := range n {
		go func() {
			got <- callJSON(r.cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": fmt.Sprint(i)}})
		}()
	}
	seen := map[string]bool{}
	for range n {
		seen[<-got] = true
	}
	for i := range n {
		want := fmt.Sprintf(`{"content":[{"text":"echo: %d","type":"text"},{"text":"second block","type":"text"}]}`, i)
		if !seen[want] {
			t.Fatalf("no answer %s among %v", want, seen)
		}
	}
	if mcpgateway.FastCalls(r.gw) != n || mcpgateway.RelayedCalls(r.gw) != n {
		t.Fatalf("fast %d, relayed %d, want %d", mcpgateway.FastCalls(r.gw), mcpgateway.RelayedCalls(r.gw), n)
	}
}
