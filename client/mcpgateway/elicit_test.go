package mcpgateway_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
	"github.com/guardrail-control/guard/client/mcpgateway"
)

// fakeDecider records the decisions the gateway makes for its user.
type fakeDecider struct {
	mu        sync.Mutex
	decisions []string // "approve: comment" / "reject: comment"
	fail      error
}

func (d *fakeDecider) DecideApproval(_ context.Context, id string, approve bool, comment string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return d.fail
	}
	verb := "reject"
	if approve {
		verb = "approve"
	}
	d.decisions = append(d.decisions, verb+" "+id+": "+comment)
	return nil
}

func (d *fakeDecider) list() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.decisions...)
}

// TestElicitApproval: through the SDK's server session (the path of Streamable HTTP and of calls the fast path
// leaves), in the session protocol (elicitation/create) and in 2026-07-28 (an input request in the result),
// the user's answer decides: accept records an approval and the call runs once; decline records a rejection
// and nothing runs; cancel records nothing and nothing runs; without a decider, or when recording fails,
// nobody is asked or nothing runs.
func TestElicitApproval(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} {
		for _, tc := range []struct {
			name      string
			answer    string
			decider   bool
			fail      error
			runs      bool
			asked     bool
			decisions []string
			text      string
		}{
			{"accept", "accept", true, nil, true, true, []string{"approve req-1: Allowed once in the MCP client (asking-client)"}, "echo: delete it"},
			{"decline", "decline", true, nil, false, true, []string{"reject req-1: Declined in the MCP client (asking-client)"}, "Approval request req-1 was rejected: Declined in the MCP client"},
			{"cancel", "cancel", true, nil, false, true, nil, "A person may approve this exact call: approval request req-1"},
			{"no decider", "accept", false, nil, false, false, nil, "A person may approve this exact call: approval request req-1"},
			{"the decision cannot be recorded", "accept", true, errors.New("403"), false, true, nil, "A person may approve this exact call"},
		} {
			t.Run(version+" "+tc.name, func(t *testing.T) {
				dec := &fakeDecider{fail: tc.fail}
				opts := mcpgateway.Options{}
				if tc.decider {
					opts.Approvals = &mcpgateway.ElicitApprovals{Decider: dec}
				}
				r := newRig(t, opts)
				r.guard.decide = func(step *guard.Step, stage guard.Stage) error {
					if stage != guard.StagePre {
						return nil
					}
					if ds := dec.list(); len(ds) > 0 && strings.HasPrefix(ds[0], "approve") {
						return nil // the grant
					}
					return &client.ApprovalRequiredError{Approval: guard.ApprovalRequest{ID: "req-1", ControlName: "deleting", Message: "needs a person"},
						Status: guard.ApprovalRequired, Err: &guard.ControlViolationError{ControlName: "deleting", Message: "needs a person"}}
				}
				var mu sync.Mutex
				var questions []string
				cl := mcp.NewClient(&mcp.Implementation{Name: "asking-client", Version: "1"}, &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						mu.Lock()
						questions = append(questions, req.Params.Message)
						mu.Unlock()
						return &mcp.ElicitResult{Action: tc.answer}, nil
					}})
				cs := connectClient(t, r, cl, version)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "delete it"}})
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError == tc.runs || !strings.Contains(text(res), tc.text) {
					t.Fatalf("result (isError %v): %s", res.IsError, text(res))
				}
				if n := r.up.count("echo"); n != map[bool]int{true: 1}[tc.runs] {
					t.Fatalf("the upstream ran %d times", n)
				}
				mu.Lock()
				asked := len(questions)
				mu.Unlock()
				if asked != map[bool]int{true: 1}[tc.asked] {
					t.Fatalf("asked %d times: %v", asked, questions)
				}
				if tc.asked && !strings.Contains(questions[0], "`echo` with {\"text\":\"delete it\"}") {
					t.Fatalf("question %q", questions[0])
				}
				if got := dec.list(); strings.Join(got, "\n") != strings.Join(tc.decisions, "\n") {
					t.Fatalf("decisions %q, want %q", got, tc.decisions)
				}
			})
		}
	}
}

// connectClient connects cl to the rig's gateway through the SDK's server session, in protocol version
// (the SDK's default when "").
func connectClient(t *testing.T, r *rig, cl *mcp.Client, version string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	c1, c2 := mcp.NewInMemoryTransports()
	ss, err := r.gw.Server(r.guard).Connect(ctx, c2, nil)
	if err != nil {
		t.Fatal(err)
	}
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := cl.Connect(ctx, c1, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}
