package mcpgateway_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/mcpgateway"
)

// benchControls are three regex controls on the echo tool, at pre and post, that do not match the
// benchmark's call: the cost of an allowed call.
func benchControls() []guard.Control {
	mk := func(id int64, name, path, pattern string, stage guard.Stage) guard.Control {
		return guard.Control{ID: id, Name: name, Data: guard.ControlData{
			Enabled: true, Execution: guard.ExecutionServer,
			Scope: guard.Scope{StepTypes: []string{"tool"}, StepNames: []string{"echo"}, Stages: []guard.Stage{stage}},
			Condition: guard.Condition{Selector: &guard.Selector{Path: path},
				Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": pattern}}},
			Action: guard.Action{Decision: guard.DecisionDeny},
		}}
	}
	return []guard.Control{
		mk(1, "no-rm", "input.text", `rm\s+-rf`, guard.StagePre),
		mk(2, "no-ssn-in", "input", `\d{3}-\d{2}-\d{4}`, guard.StagePre),
		mk(3, "no-ssn-out", "output", `\d{3}-\d{2}-\d{4}`, guard.StagePost),
	}
}

// BenchmarkToolCall measures one allowed tools/call end to end over in-memory transports: straight to the
// upstream, and through the gateway (one more MCP hop plus the pre and post checks). The gateway's
// overhead per call is the difference.
func BenchmarkToolCall(b *testing.B) {
	args := map[string]any{"text": "list the files in the current directory"}
	run := func(b *testing.B, cs *mcp.ClientSession) {
		b.Helper()
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
			if err != nil || res.IsError {
				b.Fatalf("%+v %v", res, err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		u := newUpstream()
		t1, t2 := mcp.NewInMemoryTransports()
		ss, err := u.srv.Connect(context.Background(), t2, nil)
		if err != nil {
			b.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), t1, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = cs.Close(); _ = ss.Wait() }()
		run(b, cs)
	})
	b.Run("gateway", func(b *testing.B) {
		r := newRig(b, mcpgateway.Options{})
		lg, err := mcpgateway.NewLocalGuard(benchControls(), nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		r.guard.decide = func(step *guard.Step, stage guard.Stage) error {
			return lg.CheckStep(context.Background(), step, stage)
		}
		r.guard.record = false
		run(b, r.cs)
	})
}
