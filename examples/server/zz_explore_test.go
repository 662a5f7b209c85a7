package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestZZExplore(t *testing.T) {
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "x", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hi"}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) { b, _ := json.Marshal(r.Params); t.Logf("LOG %s", b) },
	})
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command("/root/.cache/guard-mcp-servers/2026.8.31/node_modules/.bin/mcp-server-everything")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	b, _ := json.Marshal(cs.InitializeResult())
	t.Logf("INIT %s", b)
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		b, _ := json.Marshal(tl)
		t.Logf("TOOL %s", b)
	}
}
