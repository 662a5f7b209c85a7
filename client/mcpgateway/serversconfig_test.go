package mcpgateway_test

import (
	"strings"
	"testing"

	"github.com/guardrail-control/guard/client/mcpgateway"
)

// TestParseServersConfig: the mcpServers file of Claude Desktop, Cursor and VS Code: keys compared exactly,
// duplicates refused at any depth, a client's own keys ignored and reported, entries in the file's order.
func TestParseServersConfig(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // the entries as name:command|url:args:env:ignored, or the error's text
		wantErr  bool
	}{
		{"Claude Desktop", `{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "pkg", "/home"]}, "web": {"url": "https://tools.example/mcp", "headers": {"Authorization": "Bearer x"}}}}`,
			"fs:npx:[-y pkg /home]:map[]:[] web:https://tools.example/mcp:[]:map[]:[]", false},
		{"entries keep the file's order", `{"mcpServers": {"b": {"command": "b"}, "a": {"command": "a"}, "c": {"command": "c"}}}`,
			"b:b:[]:map[]:[] a:a:[]:map[]:[] c:c:[]:map[]:[]", false},
		{"VS Code", `{"inputs": [], "servers": {"mem": {"type": "stdio", "command": "mcp-server-memory", "env": {"A": "1"}}}}`,
			"mem:mcp-server-memory:[]:map[A:1]:[]", false},
		{"a client's own keys are ignored, disabled entries left out", `{"mcpServers": {"x": {"command": "x", "autoApprove": [], "timeout": 60}, "y": {"command": "y", "disabled": true}}}`,
			"x:x:[]:map[]:[autoApprove timeout]", false},
		{"keys compared exactly", `{"mcpServers": {"x": {"Command": "x"}}}`, `needs a "command" or a "url"`, true},
		{"MCPServers is not mcpServers", `{"MCPServers": {"x": {"command": "x"}}}`, `no "mcpServers"`, true},
		{"a server twice", `{"mcpServers": {"x": {"command": "x"}, "x": {"command": "y"}}}`, "x: the key is given twice", true},
		{"a key twice in an entry", `{"mcpServers": {"x": {"command": "x", "command": "y"}}}`, "command: the key is given twice", true},
		{"a key twice in env", `{"mcpServers": {"x": {"command": "x", "env": {"A": "1", "A": "2"}}}}`, "env: A: the key is given twice", true},
		{"both a command and a url", `{"mcpServers": {"x": {"command": "x", "url": "http://h/mcp"}}}`, `both a "command" and a "url"`, true},
		{"sse", `{"mcpServers": {"x": {"type": "sse", "url": "http://h/sse"}}}`, `"sse"`, true},
		{"args of the wrong type", `{"mcpServers": {"x": {"command": "x", "args": "a b"}}}`, "mcpServers.x: args: must be a list of strings", true},
		{"env of the wrong type", `{"mcpServers": {"x": {"command": "x", "env": {"A": 1}}}}`, "env: A: must be a string", true},
		{"a url that is not http", `{"mcpServers": {"x": {"url": "file:///etc/passwd"}}}`, "url: must be http", true},
		{"both maps", `{"mcpServers": {}, "servers": {}}`, `both "mcpServers" and "servers"`, true},
		{"no server", `{"mcpServers": {}}`, "no server", true},
		{"not JSON", `{"mcpServers": `, "EOF", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mcpgateway.ParseServersConfig([]byte(tc.in))
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error = %v, want one with %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, s := range got {
				target := s.Command + s.URL
				parts = append(parts, strings.Join([]string{s.Name, target, fmtList(s.Args), fmtMap(s.Env), fmtList(s.Ignored)}, ":"))
			}
			if g := strings.Join(parts, " "); g != tc.want {
				t.Fatalf("got  %s\nwant %s", g, tc.want)
			}
		})
	}
}

func fmtList(l []string) string { return "[" + strings.Join(l, " ") + "]" }

func fmtMap(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+":"+v)
	}
	return "map[" + strings.Join(parts, " ") + "]"
}

// TestToolPrefix: server names become tool prefixes of the characters tool names allow.
func TestToolPrefix(t *testing.T) {
	for in, want := range map[string]string{"filesystem": "filesystem__", "my server.v2": "my_server_v2__", "": "server__", "ünï": "_n___"} {
		if got := mcpgateway.ToolPrefix(in); got != want {
			t.Errorf("ToolPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}
