package client

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server"
	"github.com/guardrail-control/guard/server/capture"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestLiveCapturedStepsAndReplay: an agent with CaptureSteps sends the steps it evaluated in-process;
// the server keeps them (redacted) and a replay of a tightened control through the client's Replay says
// which step would change.
func TestLiveCapturedStepsAndReplay(t *testing.T) {
	st := storetest.SQLite(t)
	rec, err := capture.New(st, capture.Config{Agents: []string{"test-agent"}, RedactPaths: []string{"context.user"}, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	h, err := server.New(st, server.WithCapture(rec), server.WithListenAddr("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	url := "http://" + ln.Addr().String()
	admin := newTestClient(t, url)
	ctx := context.Background()

	cfg := testConfig(url)
	cfg.CaptureSteps = true
	a, err := Init(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	id := mustCreate(t, admin, a.Name(), ctl(0, "sdk-deny", guard.ExecutionSDK, guard.DecisionDeny, "input", "bad", guard.StagePre))
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	call := Protect(a, echo, StepName("chat"))
	for _, in := range []string{"bad", "worse", "fine"} {
		_, _ = call(ctx, in)
	}
	a.FlushEvents(ctx)
	// The pre stage of each call: the only stage a control applies to (no control, no evaluation).
	if a.SentSteps() != 3 || a.DroppedSteps() != 0 {
		t.Fatalf("sent %d steps, dropped %d", a.SentSteps(), a.DroppedSteps())
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// The kept steps read back, newest first, with their payloads as stored (redacted).
	page, err := admin.CapturedSteps(ctx, CapturedStepQuery{AgentName: a.Name(), Stage: guard.StagePre})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Steps) != 3 || page.HasMore || page.Steps[0].Source != "sdk" || page.Steps[2].Decision != guard.DecisionDeny {
		t.Fatalf("captured steps %+v", page)
	}
	var newest guard.Step
	if err := json.Unmarshal(page.Steps[0].Step, &newest); err != nil || newest.Input != "fine" {
		t.Fatalf("newest step %s (%v)", page.Steps[0].Step, err)
	}
	tight := ctl(id, "sdk-deny", guard.ExecutionSDK, guard.DecisionDeny, "input", "bad|worse", guard.StagePre)
	res, err := admin.Replay(ctx, ReplayRequest{AgentName: a.Name(), Controls: []DraftControl{{ID: id, Data: tight.Control}}}, 10*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StepsReplayed != int(a.SentSteps()) || res.StepsChanged != 1 || res.Changes["allow_to_deny"] != 1 ||
		len(res.Samples) != 1 || string(res.Samples[0].Step) == "" || res.Samples[0].Recorded != guard.DecisionAllow {
		t.Fatalf("replay %+v", res)
	}
	if c := res.Controls[0]; c.ControlID == nil || *c.ControlID != id || c.NewlyMatched != 1 || c.MatchedCurrent != 1 {
		t.Fatalf("control %+v", c)
	}
	if _, err := admin.Replay(ctx, ReplayRequest{AgentName: "ghost", Controls: []DraftControl{{ID: id, Data: tight.Control}}}, 0, nil); !isStatus(err, 404) {
		t.Fatalf("unknown agent: %v", err)
	}
}

func isStatus(err error, status int) bool {
	ae, ok := err.(*APIError)
	return ok && ae.Status == status
}
