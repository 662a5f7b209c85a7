package mcpgateway_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard/client/mcpgateway"
)

// TestRunStopsWithRequestsInFlight: cancelling Run's context ends a session even while a request is in
// flight (mcp.Server.Run alone waits for it: a slow tool, or a client's subscriptions/listen, which lasts
// as long as the session, kept `guard mcp` from exiting on SIGTERM).
func TestRunStopsWithRequestsInFlight(t *testing.T) {
	ctx := context.Background()
	up := newUpstream()
	t1, t2 := mcp.NewInMemoryTransports()
	upSess, err := up.srv.Connect(ctx, t2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = upSess.Close() }()
	gw, err := mcpgateway.Connect(ctx, t1, mcpgateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = gw.Close() }()
	if err := gw.Run(ctx, nil); !errors.Is(err, mcpgateway.ErrNoServer) {
		t.Fatalf("Run before Server = %v, want ErrNoServer", err)
	}
	gw.Server(&fakeGuard{})

	c1, c2 := mcp.NewInMemoryTransports()
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- gw.Run(runCtx, c2) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, c1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
		called <- err
	}()
	waitFor(t, "the slow call to reach the upstream", func() bool { return up.count("slow") == 1 })

	stop()
	select {
	case err := <-ran:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		_ = gw.Close() // ends the calls in flight, so that the test's clean-up does not hang too
		<-ran
		t.Fatal("Run did not return after its context was cancelled, with a call in flight")
	}
	if err := <-called; err == nil {
		t.Fatal("the call in flight succeeded after the session was stopped")
	}
	waitFor(t, "the upstream's slow call to be cancelled", func() bool { return up.count("slow-cancelled") == 1 })
}
