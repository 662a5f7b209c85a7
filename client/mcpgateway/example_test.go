package mcpgateway_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/mcpgateway"
)

// A gateway in front of an MCP server, with one control from a controls file (no guard server): a
// denied call is answered with a tool error and never reaches the server.
func Example() {
	ctx := context.Background()

	// The upstream: any MCP server; here one in-process with a "shell" tool.
	up := mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "shell", Description: "runs a command"},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Cmd string `json:"cmd"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + in.Cmd}}}, nil, nil
		})
	t1, t2 := mcp.NewInMemoryTransports()
	upSession, _ := up.Connect(ctx, t2, nil)
	defer upSession.Close()

	g, err := mcpgateway.Connect(ctx, t1, mcpgateway.Options{})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	for _, s := range g.Steps() {
		fmt.Printf("step %s %s\n", s.Type, s.Name)
	}

	gd, _ := mcpgateway.NewLocalGuard([]guard.Control{{ID: 1, Name: "no-rm-rf", Data: guard.ControlData{
		Enabled: true, Scope: guard.Scope{StepNames: []string{"shell"}, Stages: []guard.Stage{guard.StagePre}},
		Condition: guard.Condition{Selector: &guard.Selector{Path: "input.cmd"},
			Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": `rm\s+-rf`}}},
		Action: guard.Action{Decision: guard.DecisionDeny},
	}}}, nil, nil)

	// The client side: here an in-memory client; guard mcp serves the same server on stdio or HTTP.
	c1, c2 := mcp.NewInMemoryTransports()
	if _, err := g.Server(gd).Connect(ctx, c2, nil); err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, c1, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()

	for _, cmd := range []string{"ls", "rm -rf /"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"cmd": cmd}})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: isError=%v %s\n", cmd, res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// step tool shell
	// ls: isError=false ran ls
	// rm -rf /: isError=true Tool call blocked by guard control "no-rm-rf": pattern matched
}
