package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startHTTPUpstream starts examples/mcpserver over Streamable HTTP on addr ("127.0.0.1:0" for a free port)
// and returns its endpoint and a function that kills it.
func startHTTPUpstream(t *testing.T, addr string) (string, func()) {
	t.Helper()
	cmd := exec.Command(buildMCPServer(t), "--http", addr)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	kill := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	t.Cleanup(kill)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("mcpserver --http: %v\n%s", err, stderr)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	endpoint, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		t.Fatalf("mcpserver --http printed %q", line)
	}
	return endpoint, kill
}

// TestMCPGatewayHTTPUpstreamReconnects: an HTTP upstream that goes away is retried with backoff; meanwhile
// the client is told that it is unreachable and that the gateway is reconnecting; once it is back, calls
// work again in the same client session.
func TestMCPGatewayHTTPUpstreamReconnects(t *testing.T) {
	file := filepath.Join(t.TempDir(), "controls.yaml")
	if err := os.WriteFile(file, []byte("controls: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	endpoint, kill := startHTTPUpstream(t, "127.0.0.1:0")
	g := startGateway(t, "--agent", "reconnect", "--controls", file, "--upstream", endpoint)
	if res := g.call("echo", map[string]any{"text": "before"}); resultText(res) != "echo: before" {
		t.Fatalf("echo: %+v", res)
	}

	kill()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "while down"}})
	if err == nil || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), "reconnecting") {
		t.Fatalf("a call while the upstream is down: %v, want an error saying it is unreachable and the gateway reconnects\n%s", err, g.stderr)
	}

	host := strings.TrimPrefix(strings.TrimSuffix(endpoint, "/mcp"), "http://")
	startHTTPUpstream(t, host)
	waitFor(t, "calls to work again once the upstream is back", func() bool {
		res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}})
		return err == nil && resultText(res) == "echo: after"
	})
	if err := g.close(); err != nil {
		t.Fatalf("gateway exit: %v\n%s", err, g.stderr)
	}
}
