package mcpgateway

import (
	"context"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
)

// AgentGuard is the Guard of an agent of the guard server (from client.Init): calls are checked by
// Agent.CheckStep, so the agent's refresh, fail-open snapshot, in-process evaluation
// (Config.LocalServerControls: no network round trip per call) and events all apply. A change of the
// upstream's tools registers the agent again (initAgent) with the new steps.
type AgentGuard struct {
	Agent *client.Agent
	// Info is the agent as registered again on a tool change (name, description, version, metadata);
	// Info.Name defaults to the agent's name.
	Info client.AgentInfo
	// ConflictMode of that registration; default guard.ConflictOverwrite.
	ConflictMode guard.ConflictMode
}

// CheckStep implements Guard.
func (g *AgentGuard) CheckStep(ctx context.Context, step *guard.Step, stage guard.Stage) error {
	return g.Agent.CheckStep(ctx, step, stage)
}

// SyncSteps implements Guard: POST /agents/initAgent with the new steps. With conflict mode strict a
// changed input schema is refused by the server; the error says so.
func (g *AgentGuard) SyncSteps(ctx context.Context, steps []guard.StepSchema) error {
	// The in-process engines take the new labels at once, whatever the registration's outcome.
	g.Agent.SetStepLabels(steps)
	info := g.Info
	if info.Name == "" {
		info.Name = g.Agent.Name()
	}
	mode := g.ConflictMode
	if mode == "" {
		mode = guard.ConflictOverwrite
	}
	_, err := g.Agent.HTTPClient().InitAgent(ctx, client.InitAgentRequest{Agent: info, Steps: steps, ConflictMode: mode})
	return err
}
