package mcpgateway_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/mcpgateway"
)

// TestToolCallsShareASession: the calls of one client session carry one context.session_id, so that a
// session control (here a tool loop: more than 2 calls of a tool) sees them together.
func TestToolCallsShareASession(t *testing.T) {
	d, err := guard.ParseControlData([]byte(`{"enabled": true, "scope": {"stages": ["pre"]},
	  "condition": {"selector": {"path": "session.count"}, "evaluator": {"name": "threshold", "config": {"gt": 2}}},
	  "action": {"decision": "deny"}}`))
	if err != nil {
		t.Fatal(err)
	}
	lg, err := mcpgateway.NewLocalGuard([]guard.Control{{ID: 1, Name: "tool-loop", Data: d}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, mcpgateway.Options{})
	var mu sync.Mutex
	ids := map[any]bool{}
	r.guard.decide = func(step *guard.Step, stage guard.Stage) error {
		mu.Lock()
		ids[step.Context["session_id"]] = true
		mu.Unlock()
		return lg.CheckStep(context.Background(), step, stage)
	}
	for i := 1; i <= 3; i++ {
		res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError != (i == 3) {
			t.Fatalf("call %d: isError %v (%s)", i, res.IsError, text(res))
		}
		if i == 3 && !strings.Contains(text(res), "session.count = 3") {
			t.Fatalf("call 3: %s", text(res))
		}
	}
	if len(ids) != 1 {
		t.Fatalf("session ids %v", ids)
	}
	for id := range ids {
		if s, _ := id.(string); !strings.HasPrefix(s, "mcp-") {
			t.Fatalf("session id %v", id)
		}
	}
}
