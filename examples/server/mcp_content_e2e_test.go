package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPGatewayContentBlocks: through `guard mcp` with a controls file, a post-stage redaction reaches the
// text of an embedded resource as well as the text blocks, every block in its place; a control on
// context.unchecked_content refuses results that carry what the gateway cannot read.
func TestMCPGatewayContentBlocks(t *testing.T) {
	upstream := buildMCPServer(t)
	dir := t.TempDir()
	redact := filepath.Join(dir, "redact.yaml")
	if err := os.WriteFile(redact, []byte(`controls:
  - name: redact-ssn
    data:
      scope: {step_types: [tool], stages: [post]}
      condition: {selector: {path: output}, evaluator: {name: regex, config: {pattern: '\d{3}-\d{2}-\d{4}'}}}
      action: {decision: log, redact: {replacement: "[SSN]"}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--agent", "content", "--controls", redact, upstream)
	res := g.call("mixed", map[string]any{})
	var kinds []string
	for _, c := range res.Content {
		switch x := c.(type) {
		case *mcp.TextContent:
			kinds = append(kinds, "text:"+x.Text)
		case *mcp.ImageContent:
			kinds = append(kinds, "image")
		case *mcp.EmbeddedResource:
			kinds = append(kinds, "resource:"+x.Resource.URI+":"+x.Resource.Text)
		}
	}
	want := []string{"text:customer Ada, SSN [SSN]", "image", "resource:mem://customer/1:record: SSN [SSN]", "text:end of record"}
	if strings.Join(kinds, " | ") != strings.Join(want, " | ") {
		t.Fatalf("blocks:\n%s\nwant:\n%s", strings.Join(kinds, "\n"), strings.Join(want, "\n"))
	}
	_ = g.close()

	refuse := filepath.Join(dir, "refuse.yaml")
	if err := os.WriteFile(refuse, []byte(`controls:
  - name: no-unchecked-content
    data:
      scope: {step_types: [tool], stages: [post]}
      condition: {selector: {path: context.unchecked_content}, evaluator: {name: regex, config: {pattern: "image|audio|blob"}}}
      action: {decision: deny, metadata: {reason: "this agent may not receive images"}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	g = startGateway(t, "--agent", "content", "--controls", refuse, upstream)
	res = g.call("mixed", map[string]any{})
	if !res.IsError || !strings.Contains(resultText(res), "this agent may not receive images") {
		t.Fatalf("a result with an image under no-unchecked-content: %+v", res)
	}
	if res := g.call("echo", map[string]any{"text": "plain"}); res.IsError || resultText(res) != "echo: plain" {
		t.Fatalf("a text result under no-unchecked-content: %+v", res)
	}
	_ = g.close()
}
