package main

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/guardrail-control/guard/client"
	"github.com/guardrail-control/guard/client/mcpgateway"
)

// envMCPApproverKey holds the key guard mcp decides approval requests with when the user of the MCP client
// answers its question (docs/approvals.md, "MCP gateway"): an admin key, or better a named key with
// "approve": true limited to the gateway's agent. Unset (the default), the gateway asks nobody: a call
// refused for approval gets a tool error naming the request, to be decided in the dashboard or the CLI.
const envMCPApproverKey = "GUARD_MCP_APPROVER_KEY"

// askApprovals turns on asking the user (mcpgateway.ElicitApprovals) when $GUARD_MCP_APPROVER_KEY is set
// and the gateway checks calls with an agent of a guard server. It must run before the gateways' Server.
func askApprovals(env *commandEnv, f *mcpFlags, gs []*mcpgateway.Gateway, gd mcpgateway.Guard, logger *zap.Logger) error {
	key := env.getenv(envMCPApproverKey)
	if key == "" {
		return nil
	}
	ag, ok := gd.(*mcpgateway.AgentGuard)
	if !ok {
		logger.Warn("$" + envMCPApproverKey + " is set but there is no guard server (--controls only): approvals need one; nobody is asked")
		return nil
	}
	hc, err := client.NewHTTPClient(ag.Agent.HTTPClient().BaseURL(), key)
	if err != nil {
		return fmt.Errorf("mcp: $%s: %w", envMCPApproverKey, err)
	}
	for _, g := range gs {
		g.SetApprovals(&mcpgateway.ElicitApprovals{Decider: mcpgateway.HTTPDecider{Client: hc}, Timeout: f.askTimeout})
	}
	logger.Info("approval requests are asked of the user of MCP clients with elicitation, and decided with the key of $"+envMCPApproverKey,
		zap.Duration("ask_timeout", f.askTimeout))
	return nil
}
