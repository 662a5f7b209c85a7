package mcpgateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/mcpgateway"
)

// TestRedactingGuard: a Guard that replaces the step's payload (as client.Agent.CheckStep does for a
// redacting control) rewrites the arguments the upstream gets at pre and the result the client gets at
// post, its text and its structured content.
func TestRedactingGuard(t *testing.T) {
	tests := []struct {
		name       string
		tool       string
		args       map[string]any
		redact     func(step *guard.Step, stage guard.Stage)
		wantText   string
		wantStruct any
	}{
		{name: "arguments at pre", tool: "echo", args: map[string]any{"text": "ssn 123-45-6789"},
			redact: func(step *guard.Step, stage guard.Stage) {
				if stage == guard.StagePre {
					step.Input = map[string]any{"text": "ssn [REDACTED]"}
				}
			},
			wantText: "echo: ssn [REDACTED]|second block"},
		{name: "text blocks at post become one", tool: "echo", args: map[string]any{"text": "key sk-1"},
			redact: func(step *guard.Step, stage guard.Stage) {
				if stage == guard.StagePost {
					step.Output = strings.ReplaceAll(step.Output.(string), "sk-1", "[REDACTED]")
				}
			},
			wantText: "echo: key [REDACTED]\nsecond block"},
		{name: "structured content and its text at post", tool: "sum", args: map[string]any{"A": 2, "B": 3},
			redact: func(step *guard.Step, stage guard.Stage) {
				if stage == guard.StagePost {
					step.Output = map[string]any{"sum": "[REDACTED]"}
				}
			},
			wantText: `{"sum":"[REDACTED]"}`, wantStruct: map[string]any{"sum": "[REDACTED]"}},
		{name: "a guard that leaves the step alone changes nothing", tool: "echo", args: map[string]any{"text": "hi"},
			redact: func(*guard.Step, guard.Stage) {}, wantText: "echo: hi|second block"},
	}
	for _, tc := range tests {
		// Through the SDK's server session, and through Gateway.Run's fast path (as `guard mcp` serves).
		for _, path := range []string{"sdk", "fast"} {
			t.Run(tc.name+"/"+path, func(t *testing.T) {
				var r *rig
				if path == "sdk" {
					r = newRig(t, mcpgateway.Options{})
				} else {
					r = newPipeRig(t, sessionVersion, mcpgateway.Options{})
				}
				r.guard.decide = func(step *guard.Step, stage guard.Stage) error {
					tc.redact(step, stage)
					return nil
				}
				res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError || text(res) != tc.wantText {
					t.Fatalf("result text %q (isError %v), want %q", text(res), res.IsError, tc.wantText)
				}
				if tc.wantStruct != nil && canon(res.StructuredContent) != canon(tc.wantStruct) {
					t.Fatalf("structuredContent %v, want %v", res.StructuredContent, tc.wantStruct)
				}
				if fast := mcpgateway.FastCalls(r.gw); path == "fast" && fast != 1 {
					t.Fatalf("%d calls on the fast path, want 1", fast)
				}
			})
		}
	}
}

func TestRedactedResult(t *testing.T) {
	img := &mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}
	res := &mcp.CallToolResult{Content: []mcp.Content{img, &mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}}
	got, err := mcpgateway.RedactedResult(res, "[R]\nb")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Content) != 2 || got.Content[0] != img || got.Content[1].(*mcp.TextContent).Text != "[R]\nb" {
		t.Errorf("content %+v", got.Content)
	}
	if len(res.Content) != 3 || res.Content[1].(*mcp.TextContent).Text != "a" {
		t.Errorf("the original result changed: %+v", res.Content)
	}
}

// TestLocalGuardRedacts: with a controls file (no server), a redacting control replaces the step output.
func TestLocalGuardRedacts(t *testing.T) {
	ctl := guard.Control{ID: 1, Name: "hide", Data: guard.ControlData{Enabled: true,
		Condition: guard.Condition{Selector: &guard.Selector{Path: "output"}, Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": `sk-\w+`}}},
		Action:    guard.Action{Decision: guard.DecisionLog, Redact: &guard.Redaction{Replacement: "***"}}}}
	g, err := mcpgateway.NewLocalGuard([]guard.Control{ctl}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	step := guard.Step{Type: mcpgateway.StepType, Name: "t", Input: map[string]any{}, Output: "key sk-abc1 here"}
	if err := g.CheckStep(context.Background(), &step, guard.StagePost); err != nil {
		t.Fatal(err)
	}
	if step.Output != "key *** here" {
		t.Fatalf("output %q", step.Output)
	}
}
