package mcpgateway

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
)

// ControlSourcer is a Guard that can say where its controls come from: client.SourceServer,
// client.SourceFile or client.SourceNone (no controls at all: the server was unreachable and there was no
// controls file). AgentGuard, LocalGuard and DenyWithoutControls are.
type ControlSourcer interface {
	ControlSource() string
}

// ControlSource implements ControlSourcer.
func (g *AgentGuard) ControlSource() string { return g.Agent.Source() }

// ControlSource implements ControlSourcer: a controls file.
func (g *LocalGuard) ControlSource() string { return client.SourceFile }

// DenyWithoutControls is a Guard that denies every step while its Guard has no controls
// (ControlSource() == client.SourceNone) and defers to it once it has (the agent's refresh reached the
// server): `guard mcp --no-controls deny`, for unattended use where a call no control checked must not run.
type DenyWithoutControls struct {
	Guard interface {
		Guard
		ControlSourcer
	}
}

// NoControlsName is the control name of the denials of DenyWithoutControls.
const NoControlsName = "guard-no-controls"

// CheckStep implements Guard.
func (d DenyWithoutControls) CheckStep(ctx context.Context, step *guard.Step, stage guard.Stage) error {
	if d.Guard.ControlSource() == client.SourceNone {
		return &guard.ControlViolationError{ControlName: NoControlsName,
			Message: "guard has no controls (its server is unreachable and there is no controls file), so every call is denied until it has"}
	}
	return d.Guard.CheckStep(ctx, step, stage)
}

// SyncSteps implements Guard.
func (d DenyWithoutControls) SyncSteps(ctx context.Context, steps []guard.StepSchema) error {
	return d.Guard.SyncSteps(ctx, steps)
}

// ControlSource implements ControlSourcer.
func (d DenyWithoutControls) ControlSource() string { return d.Guard.ControlSource() }

// noControlsNote starts the instructions a client gets while the gateway has no controls: clients show the
// server's instructions (or hand them to the model), not the gateway's log.
const noControlsNote = "guard MCP gateway: no controls are in force (the guard server is unreachable and there is no controls file); see the gateway's log.\n\n"

// announceSource is the receiving middleware that tells each client where the gateway's controls come
// from, when its Guard can say (ControlSourcer): _meta.guard.controls_source of the initialize result (and
// of server/discover's, from protocol version 2026-07-28 on): "server", "file" or "none"; with "none" also
// a first paragraph of its instructions.
func (g *Gateway) announceSource(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		g.mu.Lock()
		cs, ok := g.gd.(ControlSourcer)
		g.mu.Unlock()
		if !ok {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			if r != nil {
				cp := *r
				cp.Meta, cp.Instructions = withSource(r.Meta, r.Instructions, cs.ControlSource())
				return &cp, nil
			}
		case *mcp.DiscoverResult:
			if r != nil {
				cp := *r
				cp.Meta, cp.Instructions = withSource(r.Meta, r.Instructions, cs.ControlSource())
				return &cp, nil
			}
		}
		return res, err
	}
}

// withSource is a copy of meta with the control source under MetaKey, and the instructions for it.
func withSource(meta mcp.Meta, instructions, src string) (mcp.Meta, string) {
	out := mcp.Meta{}
	for k, v := range meta {
		out[k] = v
	}
	out[MetaKey] = map[string]any{"controls_source": src}
	if src == client.SourceNone {
		instructions = noControlsNote + instructions
	}
	return out, instructions
}
