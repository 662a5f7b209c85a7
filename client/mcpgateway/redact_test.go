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
		{name: "text blocks at post keep their blocks", tool: "echo", args: map[string]any{"text": "key sk-1"},
			redact: func(step *guard.Step, stage guard.Stage) {
				if stage == guard.StagePost {
					step.Output = strings.ReplaceAll(step.Output.(string), "sk-1", "[REDACTED]")
				}
			},
			wantText: "echo: key [REDACTED]|second block"},
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

// TestRedactedResult: every block whose text was checked gets its redacted part, in place; images and other
// blocks stay where they were; a redaction that changed the line breaks leaves nothing unredacted.
func TestRedactedResult(t *testing.T) {
	img := &mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}
	res := func(text string) *mcp.EmbeddedResource {
		return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://r", MIMEType: "text/plain", Text: text}}
	}
	txt := func(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }
	tests := []struct {
		name    string
		content []mcp.Content
		output  string
		want    []string // per block: its text, or "image"
	}{
		{"image first, two text blocks", []mcp.Content{img, txt("a 1"), txt("b")}, "a [R]\nb", []string{"image", "a [R]", "b"}},
		{"text, image, resource, text", []mcp.Content{txt("x 1"), img, res("r 1"), txt("end")}, "x [R]\nr [R]\nend",
			[]string{"x [R]", "image", "r [R]", "end"}},
		{"a block of several lines", []mcp.Content{txt("l1\nl2 1"), res("r 1")}, "l1\nl2 [R]\nr [R]", []string{"l1\nl2 [R]", "r [R]"}},
		{"line breaks changed: all in the first, the rest emptied", []mcp.Content{txt("a 1"), img, res("b 1")}, "[R]",
			[]string{"[R]", "image", ""}},
		{"no text at all", []mcp.Content{img}, "[R]", []string{"image", "[R]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := &mcp.CallToolResult{Content: tc.content}
			before, _ := orig.MarshalJSON()
			got, err := mcpgateway.RedactedResult(orig, tc.output)
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, c := range got.Content {
				switch x := c.(type) {
				case *mcp.ImageContent:
					texts = append(texts, "image")
				case *mcp.TextContent:
					texts = append(texts, x.Text)
				case *mcp.EmbeddedResource:
					texts = append(texts, x.Resource.Text)
					if x.Resource.URI != "mem://r" || x.Resource.MIMEType != "text/plain" {
						t.Errorf("resource lost its fields: %+v", x.Resource)
					}
				}
			}
			if strings.Join(texts, "|") != strings.Join(tc.want, "|") {
				t.Errorf("blocks %q, want %q", texts, tc.want)
			}
			if after, _ := orig.MarshalJSON(); string(after) != string(before) {
				t.Errorf("the original result changed: %s", after)
			}
		})
	}
}

// TestStepOutputContentBlocks: the text of embedded resources is checked with the text blocks, in order;
// what cannot be read is named in the step's context.
func TestStepOutputContentBlocks(t *testing.T) {
	img := &mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}
	tests := []struct {
		name      string
		res       *mcp.CallToolResult
		want      any
		unchecked []any
	}{
		{"text only", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}}}, "a", nil},
		{"embedded text resource between text blocks", &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "a"}, img, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "u", Text: "ssn 123-45-6789"}},
			&mcp.TextContent{Text: "b"}}}, "a\nssn 123-45-6789\nb", []any{"image"}},
		{"blob, audio, link", &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "u", Blob: []byte{1}}}, &mcp.AudioContent{Data: []byte{1}, MIMEType: "audio/wav"},
			&mcp.ResourceLink{URI: "file:///x", Name: "x"}, img, img}}, "", []any{"blob", "audio", "resource_link", "image"}},
		{"structured content: an embedded resource is not part of the output", &mcp.CallToolResult{StructuredContent: map[string]any{"a": 1.0},
			Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "u", Text: "t"}}}}, map[string]any{"a": 1.0}, []any{"resource"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mcpgateway.StepOutput(tc.res)
			if err != nil || canon(got) != canon(tc.want) {
				t.Fatalf("StepOutput = %v, %v; want %v", got, err, tc.want)
			}
			if u := mcpgateway.UncheckedContent(tc.res); canon(u) != canon(tc.unchecked) {
				t.Fatalf("UncheckedContent = %v, want %v", u, tc.unchecked)
			}
		})
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
