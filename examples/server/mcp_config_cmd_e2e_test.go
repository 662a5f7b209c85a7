package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMCPConfigSnippet: guard mcp config-snippet prints the mcpServers entry that runs the file's servers
// through one gateway with the flags given, paths absolute; a bad file is refused with the field.
func TestMCPConfigSnippet(t *testing.T) {
	bin := buildServer(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mcp.json"), []byte(`{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "x"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mcp", "config-snippet", "--agent", "desktop", "--template", "rule-of-two", "--config", "mcp.json")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("config-snippet: %v %s", err, out)
	}
	var got struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	e := got.MCPServers["guard"]
	want := []string{"mcp", "--agent", "desktop", "--template", "rule-of-two", "--config", filepath.Join(dir, "mcp.json")}
	if len(got.MCPServers) != 1 || e.Command != bin || !slices.Equal(e.Args, want) {
		t.Fatalf("snippet %s\nwant command %s args %v", out, bin, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "dup.json"), []byte(`{"mcpServers": {"fs": {"command": "a", "command": "b"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runBin(bin, nil, "mcp", "config-snippet", "--agent", "d", "--config", filepath.Join(dir, "dup.json")); err == nil ||
		!strings.Contains(out, "mcpServers.fs: command: the key is given twice") {
		t.Fatalf("a key given twice: %v %s", err, out)
	}
}

// TestMCPLabelsCommand: guard mcp labels prints each tool's labels and where they come from, and warns
// when every tool got the default.
func TestMCPLabelsCommand(t *testing.T) {
	upstream := buildMCPServer(t)
	out, err := runBin(buildServer(t), []string{"GUARD_URL="}, "mcp", "labels", "--", upstream, "--annotated")
	if err != nil {
		t.Fatalf("labels: %v\n%s", err, out)
	}
	for _, want := range []string{"fetch_page", "untrusted", "annotations", "echo", "untrusted,egress,destructive", "default"} {
		if !strings.Contains(out, want) {
			t.Fatalf("labels output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "every tool got the default") {
		t.Fatalf("a warning with annotated tools:\n%s", out)
	}
	out, err = runBin(buildServer(t), []string{"GUARD_URL="}, "mcp", "labels", "--", upstream)
	if err != nil || !strings.Contains(out, "every tool got the default labels") {
		t.Fatalf("labels of a server without annotations: %v\n%s", err, out)
	}
}
