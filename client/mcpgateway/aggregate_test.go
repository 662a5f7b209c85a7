package mcpgateway_test

import (
	"context"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/mcpgateway"
)

// aggRig is two in-process upstreams ("one", "two": the same tools) behind one Aggregate and a client.
type aggRig struct {
	ups   []*upstream
	agg   *mcpgateway.Aggregate
	cs    *mcp.ClientSession
	guard *fakeGuard
}

func newAggRig(t *testing.T) *aggRig {
	t.Helper()
	ctx := context.Background()
	r := &aggRig{guard: &fakeGuard{record: true}}
	var members []mcpgateway.Member
	for _, name := range []string{"one", "two"} {
		u := newUpstream()
		t1, t2 := mcp.NewInMemoryTransports()
		us, err := u.srv.Connect(ctx, t2, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := mcpgateway.Connect(ctx, t1, mcpgateway.Options{ToolPrefix: mcpgateway.ToolPrefix(name), SessionID: "agent-run-1"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = us.Close() })
		r.ups = append(r.ups, u)
		members = append(members, mcpgateway.Member{Name: name, Gateway: g})
	}
	var err error
	if r.agg, err = mcpgateway.NewAggregate(members, nil); err != nil {
		t.Fatal(err)
	}
	srv := r.agg.Server(r.guard)
	c1, c2 := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	runCtx, stop := context.WithCancel(ctx)
	go func() { served <- r.agg.Run(runCtx, c2) }()
	_ = srv
	if r.cs, err = mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, c1, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cs.Close()
		stop()
		<-served
		_ = r.agg.Close()
	})
	return r
}

// TestAggregate: tools of both upstreams under their server's prefix, each call routed to its upstream
// under its own name and checked as a step of the exposed name in the one session, prompts gathered and
// routed, the Guard given every upstream's steps.
func TestAggregate(t *testing.T) {
	r := newAggRig(t)
	ctx := context.Background()
	lt, err := r.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"one__echo", "two__echo", "one__sum", "two__slow"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools %v lack %s", names, want)
		}
	}
	res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: "two__echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || res.IsError || text(res) != "echo: x|second block" {
		t.Fatalf("two__echo: %v %+v", err, res)
	}
	if r.ups[1].count("echo") != 1 || r.ups[0].count("echo") != 0 {
		t.Fatalf("echo reached one %d times, two %d times", r.ups[0].count("echo"), r.ups[1].count("echo"))
	}
	if s := r.guard.lastSeen(); s.name != "two__echo" || s.stage != guard.StagePost {
		t.Fatalf("last step checked: %+v", s)
	}
	// A denial at pre names the exposed tool and does not reach the upstream.
	r.guard.mu.Lock()
	r.guard.decide = func(step *guard.Step, stage guard.Stage) error {
		if step.Name == "one__sum" && stage == guard.StagePre {
			if step.Context["session_id"] != "agent-run-1" {
				t.Errorf("session id %v", step.Context["session_id"])
			}
			return &guard.ControlViolationError{ControlName: "no-sum", Message: "no"}
		}
		return nil
	}
	r.guard.mu.Unlock()
	res, err = r.cs.CallTool(ctx, &mcp.CallToolParams{Name: "one__sum", Arguments: map[string]any{"A": 1, "B": 2}})
	if err != nil || !res.IsError || r.ups[0].count("sum") != 0 {
		t.Fatalf("denied one__sum: %v %+v (upstream calls %d)", err, res, r.ups[0].count("sum"))
	}
	pl, err := r.cs.ListPrompts(ctx, nil)
	if err != nil || len(pl.Prompts) != 2 || pl.Prompts[0].Name != "one__hello" || pl.Prompts[1].Name != "two__hello" {
		t.Fatalf("prompts: %v %+v", err, pl)
	}
	if gp, err := r.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "two__hello"}); err != nil || len(gp.Messages) != 1 {
		t.Fatalf("prompts/get: %v %+v", err, gp)
	}
	rr, err := r.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://t/7"})
	if err != nil || rr.Contents[0].Text != "template mem://t/7" {
		t.Fatalf("resources/read of a template: %v %+v", err, rr)
	}
	steps := r.agg.Steps()
	if len(steps) != 2*len(lt.Tools)/2 || steps[0].Name != "one__echo" {
		t.Fatalf("steps %+v", steps)
	}
}
