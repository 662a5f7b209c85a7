package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/store/storetest"
)

// liveServer is the real REST server over a temporary SQLite store, on a loopback address that can be
// stopped and started again (same port) to test what the agent does while the server is away.
type liveServer struct {
	t    testing.TB
	addr string
	h    *server.Server
	rec  *observability.Recorder
	mu   sync.Mutex
	hs   *http.Server
	done chan struct{}
}

func startLiveServer(t testing.TB) *liveServer { return startLiveServerObs(t, true) }

// startLiveServerObs starts the server with its event recorder on or off, and the options given.
func startLiveServerObs(t testing.TB, obs bool, opts ...server.Option) *liveServer {
	t.Helper()
	st := storetest.SQLite(t)
	rec := observability.NewRecorder(st, observability.RecorderConfig{})
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	// A loopback listen address, as the server binary passes: the client must pass the Host check.
	h, err := server.New(st, append([]server.Option{server.WithObservability(obs, rec), server.WithListenAddr("127.0.0.1:0")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	ls := &liveServer{t: t, h: h, rec: rec}
	ls.start()
	t.Cleanup(ls.stop)
	return ls
}

func (ls *liveServer) url() string { return "http://" + ls.addr }

// start listens (on the previous port when there was one) and serves.
func (ls *liveServer) start() {
	ls.t.Helper()
	addr := ls.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		ls.t.Fatal(err)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.addr = ln.Addr().String()
	ls.hs = &http.Server{Handler: ls.h}
	ls.done = make(chan struct{})
	go func(hs *http.Server, done chan struct{}) {
		defer close(done)
		_ = hs.Serve(ln)
	}(ls.hs, ls.done)
}

// stop closes the listener and every connection; the port stays reserved for start only by convention.
func (ls *liveServer) stop() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.hs == nil {
		return
	}
	_ = ls.hs.Close()
	<-ls.done
	ls.hs = nil
}

// admin is an HTTPClient for the live server that closes its connections when the test ends.
func (ls *liveServer) admin(t testing.TB) *HTTPClient {
	t.Helper()
	return newTestClient(t, ls.url())
}

func mustCreate(t testing.TB, c *HTTPClient, agent string, ac guard.AgentControl) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := c.CreateControl(ctx, ac.Name, &ac.Control)
	if err != nil {
		t.Fatalf("create %s: %v", ac.Name, err)
	}
	if err := c.LinkControl(ctx, agent, id); err != nil {
		t.Fatalf("link %s: %v", ac.Name, err)
	}
	return id
}

func TestLiveRegistrationWithStepsAndMetadata(t *testing.T) {
	ls := startLiveServer(t)
	cfg := testConfig(ls.url())
	cfg.AgentName = "Live-Agent"
	cfg.Description, cfg.Version = "support bot", "2.1.0"
	cfg.Metadata = map[string]any{"team": "support", "env": "test"}
	cfg.Steps = []guard.StepSchema{
		{Type: "llm", Name: "chat"},
		{Type: "tool", Name: "search", InputSchema: map[string]any{"type": "object"}},
	}
	a := initAgent(t, cfg)
	d, err := ls.admin(t).GetAgent(context.Background(), "live-agent")
	if err != nil {
		t.Fatal(err)
	}
	if d.Agent.Name != "live-agent" || d.Agent.Description != "support bot" || d.Agent.Version != "2.1.0" ||
		d.Agent.Metadata["team"] != "support" || len(d.Steps) != 2 {
		t.Fatalf("registered agent %+v steps %+v", d.Agent, d.Steps)
	}
	if a.Source() != SourceServer || len(a.Controls()) != 0 {
		t.Fatalf("source %q controls %d", a.Source(), len(a.Controls()))
	}
}

func TestLiveEnforcementRefreshAndOutage(t *testing.T) {
	ls := startLiveServer(t)
	admin := ls.admin(t)
	ctx := context.Background()
	a := initAgent(t, testConfig(ls.url()))
	chat := Protect(a, echo, StepName("chat"))
	if _, err := chat(ctx, "ssn 123-45-6789 and rm -rf"); err != nil {
		t.Fatalf("no controls yet: %v", err)
	}

	// Controls created on the server: an sdk steer, a server deny on input, a server deny on output.
	steer := ctl(0, "steer-rm", guard.ExecutionSDK, guard.DecisionSteer, "input", `rm -rf`, guard.StagePre)
	steerID := mustCreate(t, admin, a.Name(), steer)
	deny := ctl(0, "deny-ssn", guard.ExecutionServer, guard.DecisionDeny, "input", `\d{3}-\d{2}-\d{4}`, guard.StagePre)
	deny.Control.Action.Metadata = map[string]any{"reason": "PII"}
	denyID := mustCreate(t, admin, a.Name(), deny)
	mustCreate(t, admin, a.Name(), ctl(0, "deny-leak", guard.ExecutionServer, guard.DecisionDeny, "output", `LEAK`, guard.StagePost))

	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(phase string) {
		t.Helper()
		_, err := chat(ctx, "my ssn is 123-45-6789")
		var v *guard.ControlViolationError
		if !errors.As(err, &v) || v.ControlName != "deny-ssn" || v.ControlID != denyID {
			t.Fatalf("%s: deny: %v", phase, err)
		}
		_, err = chat(ctx, "please rm -rf /")
		var s *guard.ControlSteerError
		if !errors.As(err, &s) || s.ControlName != "steer-rm" || s.ControlID != steerID ||
			s.SteeringContext.Message != "rephrase without rm -rf" || len(s.SteeringContext.RequiredActions) != 1 {
			t.Fatalf("%s: steer: %#v", phase, err)
		}
		_, err = chat(ctx, "say LEAK")
		if !errors.As(err, &v) || v.ControlName != "deny-leak" {
			t.Fatalf("%s: post-stage deny: %v", phase, err)
		}
		if out, err := chat(ctx, "hello"); err != nil || out != "hello" {
			t.Fatalf("%s: clean call: %q %v", phase, out, err)
		}
	}
	check("server up")

	// A refresh with nothing changed is a 304 and keeps the snapshot.
	before := a.pol.Load()
	if err := a.Refresh(ctx); err != nil || a.pol.Load() != before {
		t.Fatalf("unchanged refresh: %v, snapshot replaced %v", err, a.pol.Load() != before)
	}

	// Server stopped: the snapshot protects, server controls are evaluated in-process.
	ls.stop()
	if err := a.Refresh(ctx); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("refresh with the server stopped: %v", err)
	}
	check("server stopped")

	// Server back: a change made there is enforced after the next refresh.
	ls.start()
	if _, err := admin.PatchControl(ctx, denyID, guard.ControlPatch{Enabled: new(false)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Refresh(ctx); err != nil {
		t.Fatalf("refresh after restart: %v", err)
	}
	if _, err := chat(ctx, "my ssn is 123-45-6789"); err != nil {
		t.Fatalf("disabled control still enforced: %v", err)
	}
}

func TestLiveControlsFileUntilServerAppears(t *testing.T) {
	ls := startLiveServer(t)
	url := ls.url()
	ls.stop()
	cfg := testConfig(url)
	cfg.ControlsFile = writeFile(t, fileYAML)
	a := initAgent(t, cfg)
	chat := Protect(a, echo, StepName("chat"))
	if a.Source() != SourceFile {
		t.Fatalf("source %q", a.Source())
	}
	if _, err := chat(context.Background(), "ssn 123-45-6789"); err == nil {
		t.Fatal("controls file not enforced")
	}
	// The server comes up without controls for the agent: the refresh registers it and its (empty)
	// controls replace the file's.
	ls.start()
	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a.Source() != SourceServer {
		t.Fatalf("source %q after refresh", a.Source())
	}
	if _, err := chat(context.Background(), "ssn 123-45-6789"); err != nil {
		t.Fatalf("file control still enforced after the server answered: %v", err)
	}
	if _, err := ls.admin(t).GetAgent(context.Background(), a.Name()); err != nil {
		t.Fatalf("agent not registered by the refresh: %v", err)
	}
}

func TestLiveEventsReachTheServer(t *testing.T) {
	ls := startLiveServer(t)
	admin := ls.admin(t)
	ctx := context.Background()
	cfg := testConfig(ls.url())
	cfg.Observability = Bool(true)
	a, err := Init(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, admin, a.Name(), ctl(0, "sdk-deny", guard.ExecutionSDK, guard.DecisionDeny, "input", "bad", guard.StagePre))
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	_, _ = Protect(a, echo, StepName("chat"))(WithTrace(ctx, "tr-9", "sp-9"), "bad")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ls.rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	page, err := admin.QueryEvents(ctx, guard.EventQuery{AgentName: a.Name(), TraceID: "tr-9"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 {
		t.Fatalf("%d events, want 1: %+v", len(page.Events), page.Events)
	}
	e := page.Events[0]
	if e.Source != "sdk" || e.ControlName != "sdk-deny" || !e.Matched || e.Action != guard.DecisionDeny ||
		e.CheckStage != guard.StagePre || e.SpanID != "sp-9" {
		t.Fatalf("event %+v", e)
	}
}

// TestLiveObserveControls: a control saved with the reference implementation's observe decision reads
// back observe through the client, and behaves as log both in-process (sdk) and on the server: the call
// goes through.
func TestLiveObserveControls(t *testing.T) {
	ls := startLiveServer(t)
	admin := ls.admin(t)
	ctx := context.Background()
	a := initAgent(t, testConfig(ls.url()))
	mustCreate(t, admin, a.Name(), ctl(0, "observe-sdk", guard.ExecutionSDK, guard.DecisionObserve, "input", `watch`, guard.StagePre))
	srvID := mustCreate(t, admin, a.Name(), ctl(0, "observe-srv", guard.ExecutionServer, guard.DecisionObserve, "input", `watch`, guard.StagePre))
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	acs, _, _, err := admin.AgentControls(ctx, a.Name(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ac := range acs {
		if ac.Control.Action.Decision != guard.DecisionObserve {
			t.Fatalf("control %s reads back %q, want observe", ac.Name, ac.Control.Action.Decision)
		}
	}
	chat := Protect(a, echo, StepName("chat"))
	if out, err := chat(ctx, "please watch this"); err != nil || out != "please watch this" {
		t.Fatalf("an observe match must not block: %q %v", out, err)
	}
	res, err := admin.Evaluate(ctx, a.Name(), guard.Step{Type: "llm", Name: "chat", Input: "watch"}, guard.StagePre)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsSafe || res.Decision != guard.DecisionAllow || len(res.Matches) != 1 || res.Matches[0].ControlID != srvID ||
		res.Matches[0].Action != guard.DecisionObserve { // reported as written; it behaves as log
		t.Fatalf("server evaluation of an observe control: %+v", res)
	}
}
