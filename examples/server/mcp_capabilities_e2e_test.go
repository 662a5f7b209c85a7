//lint:file-ignore SA1019 sampling, elicitation and roots are the session protocol's, which these clients speak.

package main

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPGatewayClientCapabilities: the upstream is initialised with the capabilities the client announced,
// not more: server-everything lists its sampling, elicitation and roots tools only to a client that has
// them, and a client lists through the gateway exactly the tools it lists directly, whichever it announced
// (the MCP Inspector announces none of them).
func TestMCPGatewayClientCapabilities(t *testing.T) {
	bin := mcpReferenceServer(t, "mcp-server-everything")
	sampling := func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "x"}}, nil
	}
	elicit := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	for _, tc := range []struct {
		name string
		opts func() *mcp.ClientOptions
	}{
		{"none (the Inspector's)", func() *mcp.ClientOptions { return &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}} }},
		{"sampling only", func() *mcp.ClientOptions {
			return &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}, CreateMessageHandler: sampling}
		}},
		{"sampling, elicitation and roots", func() *mcp.ClientOptions {
			return &mcp.ClientOptions{CreateMessageHandler: sampling, ElicitationHandler: elicit}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools := map[string][]string{}
			for _, via := range []string{"direct", "gateway"} {
				cmd := exec.Command(bin)
				if via == "gateway" {
					cmd = gatewayCmd(t, bin)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "caps", Version: "1"}, tc.opts()).Connect(ctx,
					&mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					cancel()
					t.Fatalf("%s: %v", via, err)
				}
				res, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatalf("%s: tools/list: %v", via, err)
				}
				for _, tool := range res.Tools {
					tools[via] = append(tools[via], tool.Name)
				}
				_ = cs.Close()
				cancel()
			}
			if !slices.Equal(tools["direct"], tools["gateway"]) {
				t.Fatalf("tools through the gateway differ from the direct ones:\ndirect:  %s\ngateway: %s",
					strings.Join(tools["direct"], " "), strings.Join(tools["gateway"], " "))
			}
			if len(tools["direct"]) == 0 {
				t.Fatal("no tools")
			}
		})
	}
}
