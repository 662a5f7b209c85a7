package client

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/guardrail-control/guard"
)

// regexp2's shared clock goroutine (backtracking patterns under a match timeout) stops by itself about a
// second after the last match: the library's design, not a leak.
func TestMain(m *testing.M) {
	// glog (imported by the sql evaluator's parser, vitess) starts a flush daemon in its init.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"),
		goleak.IgnoreAnyFunction("github.com/golang/glog.(*fileSink).flushDaemon"))
}

// testConfig is a Config for tests: quiet, no background refresh, no events unless asked.
func testConfig(url string) Config {
	return Config{
		AgentName:       "Test-Agent",
		ServerURL:       url,
		APIKey:          testKey,
		Timeout:         5 * time.Second,
		Log:             LogConfig{Enabled: Bool(false)},
		Observability:   Bool(false),
		RefreshInterval: NoRefresh,
	}
}

func initAgent(t *testing.T, cfg Config) *Agent {
	t.Helper()
	a, err := Init(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// echo is the protected function of most tests: it returns its input.
func echo(_ context.Context, s string) (string, error) { return s, nil }

// unreachableURL returns the URL of a server that no longer listens.
func unreachableURL(t *testing.T) string {
	t.Helper()
	_, srv := newFakeAPI(t)
	u := srv.URL
	srv.Close()
	return u
}

func TestInitRegistersAgent(t *testing.T) {
	f, srv := newFakeAPI(t, ctl(1, "no-ssn", guard.ExecutionSDK, guard.DecisionDeny, "input", `\d{3}-\d{2}-\d{4}`))
	cfg := testConfig(srv.URL)
	cfg.Description, cfg.Version = "d", "1.0"
	cfg.Metadata = map[string]any{"team": "x"}
	cfg.Steps = []guard.StepSchema{{Type: "tool", Name: "search", InputSchema: map[string]any{"type": "object"}}}
	a := initAgent(t, cfg)
	if a.Name() != "test-agent" || a.Source() != SourceServer || len(a.Controls()) != 1 {
		t.Fatalf("agent %q source %q controls %d", a.Name(), a.Source(), len(a.Controls()))
	}
	f.mu.Lock()
	req := f.initReqs[0]
	f.mu.Unlock()
	if req.Agent.Name != "test-agent" || req.Agent.Description != "d" || req.Agent.Version != "1.0" ||
		req.Agent.Metadata["team"] != "x" || req.ConflictMode != guard.ConflictOverwrite || len(req.Steps) != 1 || req.Steps[0].Name != "search" {
		t.Fatalf("initAgent request %+v", req)
	}
}

func TestInitReturnsClientErrors(t *testing.T) {
	f, srv := newFakeAPI(t)
	f.initStatus = 401
	_, err := Init(context.Background(), testConfig(srv.URL))
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Code != "AUTH_INVALID_KEY" {
		t.Fatalf("Init error %v, want the 401 APIError", err)
	}
	if _, err := Init(context.Background(), Config{AgentName: " "}); err == nil {
		t.Fatal("blank agent name accepted")
	}
	cfg := testConfig(srv.URL)
	cfg.ConflictMode = "merge"
	if _, err := Init(context.Background(), cfg); err == nil {
		t.Fatal("bad conflict mode accepted")
	}
}

const fileYAML = `controls:
  - name: block-ssn
    data:
      scope: {stages: [pre]}
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: '\b\d{3}-\d{2}-\d{4}\b'}}}
      action: {decision: deny}
`

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "controls.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInitUnreachableUsesControlsFile(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	cfg := testConfig(unreachableURL(t))
	cfg.ControlsFile = writeFile(t, fileYAML)
	cfg.Log = LogConfig{}
	cfg.Logger = zap.New(core)
	a := initAgent(t, cfg)
	if a.Source() != SourceFile || len(a.Controls()) != 1 {
		t.Fatalf("source %q controls %d", a.Source(), len(a.Controls()))
	}
	if n := logs.FilterMessageSnippet("controls file").Len(); n != 1 {
		t.Fatalf("%d warnings about the controls file, want 1: %v", n, logs.All())
	}
	for _, e := range logs.All() {
		if e.LoggerName != "agent_control.client" {
			t.Fatalf("logger name %q", e.LoggerName)
		}
	}
	p := Protect(a, echo, StepName("chat"))
	_, err := p(context.Background(), "my ssn is 123-45-6789")
	var v *guard.ControlViolationError
	if !errors.As(err, &v) || v.ControlName != "block-ssn" {
		t.Fatalf("err %v, want a violation of block-ssn", err)
	}
	if out, err := p(context.Background(), "hello"); err != nil || out != "hello" {
		t.Fatalf("clean call: %q %v", out, err)
	}
}

func TestInitUnreachableWithoutFileFailsOpen(t *testing.T) {
	a := initAgent(t, testConfig(unreachableURL(t)))
	if a.Source() != SourceNone {
		t.Fatalf("source %q", a.Source())
	}
	if out, err := Protect(a, echo)(context.Background(), "123-45-6789"); err != nil || out != "123-45-6789" {
		t.Fatalf("%q %v", out, err)
	}
	if err := a.Refresh(context.Background()); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Refresh: %v", err)
	}
}

func TestControlsFileErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"bad yaml", "controls: [", []string{"not valid YAML"}},
		{"unknown key", "rules: []", []string{"controls"}},
		{"bad name", "controls:\n  - name: '-x'\n    data: {}\n", []string{"controls.0.name"}},
		{"missing data", "controls:\n  - name: x\n", []string{`control "x"`, "controls.0.data"}},
		{"bad regex", "controls:\n  - name: bad\n    data:\n      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: '('}}}\n      action: {decision: deny}\n",
			[]string{`control "bad"`, "controls.0.data.condition.evaluator.config.pattern"}},
		{"bad decision", "controls:\n  - name: d\n    data:\n      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: x}}}\n      action: {decision: explode}\n",
			[]string{`control "d"`, "controls.0.data.action.decision"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(unreachableURL(t))
			cfg.ControlsFile = writeFile(t, tt.yaml)
			_, err := Init(context.Background(), cfg)
			if err == nil {
				t.Fatal("Init accepted the file")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	cfg := testConfig(unreachableURL(t))
	cfg.ControlsFile = filepath.Join(t.TempDir(), "missing.yaml")
	if _, err := Init(context.Background(), cfg); err == nil {
		t.Fatal("a named controls file that does not exist was accepted")
	}
}

func TestProtectDecisions(t *testing.T) {
	_, srv := newFakeAPI(t,
		ctl(1, "deny-secret", guard.ExecutionSDK, guard.DecisionDeny, "input", "secret", guard.StagePre),
		ctl(2, "steer-rude", guard.ExecutionSDK, guard.DecisionSteer, "input", "rude", guard.StagePre),
		ctl(3, "warn-maybe", guard.ExecutionSDK, guard.DecisionWarn, "input", "maybe", guard.StagePre),
		ctl(4, "deny-leak", guard.ExecutionSDK, guard.DecisionDeny, "output", "LEAK", guard.StagePost),
		ctl(5, "log-all", guard.ExecutionSDK, guard.DecisionLog, "input", "."),
	)
	core, logs := observer.New(zapcore.WarnLevel)
	cfg := testConfig(srv.URL)
	cfg.Log = LogConfig{}
	cfg.Logger = zap.New(core)
	a := initAgent(t, cfg)
	calls := 0
	fn := func(_ context.Context, s string) (string, error) {
		calls++
		if s == "leak please" {
			return "here is the LEAK", nil
		}
		return "ok:" + s, nil
	}
	p := Protect(a, fn, StepName("chat"))
	tests := []struct {
		in        string
		wantOut   string
		wantErr   string // "", "deny" or "steer"
		wantCalls int
		control   string
	}{
		{"hello", "ok:hello", "", 1, ""},
		{"a secret", "", "deny", 0, "deny-secret"},
		{"a rude secret", "", "deny", 0, "deny-secret"},
		{"so rude", "", "steer", 0, "steer-rude"},
		{"maybe", "ok:maybe", "", 1, ""},
		{"leak please", "", "deny", 1, "deny-leak"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			calls = 0
			out, err := p(context.Background(), tt.in)
			if out != tt.wantOut || calls != tt.wantCalls {
				t.Fatalf("out %q calls %d", out, calls)
			}
			var v *guard.ControlViolationError
			var s *guard.ControlSteerError
			switch tt.wantErr {
			case "":
				if err != nil {
					t.Fatal(err)
				}
			case "deny":
				if !errors.As(err, &v) || v.ControlName != tt.control || v.ControlID == 0 {
					t.Fatalf("err %v, want deny by %s", err, tt.control)
				}
			case "steer":
				if !errors.As(err, &s) || s.ControlName != tt.control || s.SteeringContext.Message != "rephrase without rude" ||
					len(s.SteeringContext.RequiredActions) != 1 {
					t.Fatalf("err %#v, want steer by %s", err, tt.control)
				}
			}
		})
	}
	if n := logs.FilterMessage("warn control matched").Len(); n != 1 {
		t.Fatalf("%d warn logs, want 1", n)
	}
}

func TestProtectFunctionErrorSkipsPost(t *testing.T) {
	_, srv := newFakeAPI(t, ctl(1, "deny-all-out", guard.ExecutionSDK, guard.DecisionDeny, "output", ".*", guard.StagePost))
	a := initAgent(t, testConfig(srv.URL))
	boom := errors.New("boom")
	_, err := Protect(a, func(context.Context, string) (string, error) { return "", boom }, StepName("x"))(context.Background(), "in")
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
}

func TestServerControlsAreEvaluatedByTheServerOnlyWhenTheyApply(t *testing.T) {
	c := ctl(9, "srv-deny", guard.ExecutionServer, guard.DecisionDeny, "input", "forbidden")
	c.Control.Scope.StepNames = []string{"search"}
	f, srv := newFakeAPI(t, c)
	f.evalResult = &guard.Result{Decision: guard.DecisionDeny, Confidence: 1, Reason: "nope",
		Matches: []guard.ControlResult{{ControlID: 9, ControlName: "srv-deny", Action: guard.DecisionDeny,
			Result: guard.EvaluatorResult{Matched: true, Confidence: 1, Message: "nope"}}},
		Errors: []guard.ControlResult{}, NonMatches: []guard.ControlResult{}}
	a := initAgent(t, testConfig(srv.URL))

	if _, err := Protect(a, echo, StepName("other"))(context.Background(), "forbidden"); err != nil {
		t.Fatalf("unrelated step: %v", err)
	}
	if _, _, n := f.counts(); n != 0 {
		t.Fatalf("%d evaluation calls for a step no server control applies to", n)
	}
	_, err := Protect(a, echo, StepName("search"), StepType("tool"))(context.Background(), "anything")
	var v *guard.ControlViolationError
	if !errors.As(err, &v) || v.ControlName != "srv-deny" {
		t.Fatalf("err %v, want the server's deny", err)
	}
	if _, _, n := f.counts(); n != 1 {
		t.Fatalf("%d evaluation calls, want 1 (pre only: the deny stops the call)", n)
	}
}

func TestServerDownEvaluatesSnapshotInProcess(t *testing.T) {
	tests := []struct {
		name      string
		local     bool
		evalDown  bool
		evaluator string
		onError   string
		wantDeny  bool
	}{
		{"server down, regex", false, true, "regex", "", true},
		{"local mode, regex", true, false, "regex", "", true},
		{"server down, unknown evaluator fails closed", false, true, "ext.missing", "", true},
		{"server down, unknown evaluator on_error allow", false, true, "ext.missing", "allow", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ctl(3, "srv", guard.ExecutionServer, guard.DecisionDeny, "input", "bad")
			c.Control.Condition.Evaluator.Name = tt.evaluator
			if tt.onError != "" {
				c.Control.Condition.Evaluator.Config["on_error"] = tt.onError
			}
			f, srv := newFakeAPI(t, c)
			f.evalDown.Store(tt.evalDown)
			cfg := testConfig(srv.URL)
			cfg.LocalServerControls = tt.local
			a := initAgent(t, cfg)
			_, err := Protect(a, echo, StepName("s"))(context.Background(), "bad input")
			var v *guard.ControlViolationError
			if got := errors.As(err, &v); got != tt.wantDeny {
				t.Fatalf("err %v, want deny %v", err, tt.wantDeny)
			}
			if !tt.wantDeny && err != nil {
				t.Fatal(err)
			}
			if _, _, n := f.counts(); n != 0 {
				t.Fatalf("%d evaluation calls reached the server", n)
			}
		})
	}
}

func TestRefresh(t *testing.T) {
	f, srv := newFakeAPI(t)
	a := initAgent(t, testConfig(srv.URL))
	p := Protect(a, echo, StepName("chat"))
	if _, err := p(context.Background(), "secret"); err != nil {
		t.Fatal(err)
	}
	f.setControls(ctl(1, "deny-secret", guard.ExecutionSDK, guard.DecisionDeny, "input", "secret"))
	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := p(context.Background(), "secret"); err == nil {
		t.Fatal("control added on the server not enforced after Refresh")
	}
	// An unchanged policy costs a 304 and keeps the snapshot.
	before := a.pol.Load()
	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, nm, _ := f.counts(); nm != 1 || a.pol.Load() != before {
		t.Fatalf("304s %d, snapshot replaced %v", nm, a.pol.Load() != before)
	}
	// Server down: the snapshot stays.
	f.down.Store(true)
	if err := a.Refresh(context.Background()); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Refresh with the server down: %v", err)
	}
	if _, err := p(context.Background(), "secret"); err == nil {
		t.Fatal("snapshot lost after a failed refresh")
	}
	// Server back with the control removed.
	f.down.Store(false)
	f.setControls()
	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := p(context.Background(), "secret"); err != nil {
		t.Fatalf("removed control still enforced: %v", err)
	}
}

func TestRefreshLogsOncePerFailureStreak(t *testing.T) {
	f, srv := newFakeAPI(t)
	core, logs := observer.New(zapcore.InfoLevel)
	cfg := testConfig(srv.URL)
	cfg.Log = LogConfig{}
	cfg.Logger = zap.New(core)
	a := initAgent(t, cfg)
	f.down.Store(true)
	for i := 0; i < 3; i++ {
		_ = a.Refresh(context.Background())
	}
	f.down.Store(false)
	_ = a.Refresh(context.Background())
	_ = a.Refresh(context.Background())
	if w := logs.FilterMessageSnippet("refreshing controls failed").Len(); w != 1 {
		t.Fatalf("%d failure logs, want 1", w)
	}
	if r := logs.FilterMessageSnippet("refreshed from the server again").Len(); r != 1 {
		t.Fatalf("%d recovery logs, want 1", r)
	}
	for _, e := range logs.FilterMessageSnippet("refresh").All() {
		if e.LoggerName != "agent_control.refresh" {
			t.Fatalf("logger %q", e.LoggerName)
		}
	}
}

func TestBackgroundRefreshAndLateRegistration(t *testing.T) {
	f, srv := newFakeAPI(t)
	f.down.Store(true)
	cfg := testConfig(srv.URL)
	cfg.RefreshInterval = 10 * time.Millisecond
	a := initAgent(t, cfg)
	if a.Source() != SourceNone {
		t.Fatalf("source %q", a.Source())
	}
	f.setControls(ctl(1, "deny-secret", guard.ExecutionSDK, guard.DecisionDeny, "input", "secret"))
	f.down.Store(false)
	waitFor(t, func() bool { return a.Source() == SourceServer })
	if _, err := Protect(a, echo, StepName("chat"))(context.Background(), "secret"); err == nil {
		t.Fatal("control not enforced after the background refresh")
	}
	f.mu.Lock()
	n := len(f.initReqs)
	f.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d registrations, want 1", n)
	}
}

func TestEventsAreBatchedAndFlushedOnClose(t *testing.T) {
	f, srv := newFakeAPI(t, ctl(1, "deny-secret", guard.ExecutionSDK, guard.DecisionDeny, "input", "secret"),
		ctl(2, "log-x", guard.ExecutionSDK, guard.DecisionLog, "input", "x"))
	cfg := testConfig(srv.URL)
	cfg.Observability = Bool(true)
	cfg.EventBatchSize = 3
	a, err := Init(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := Protect(a, echo, StepName("chat"), Policy("gold"))
	ctx := WithTrace(context.Background(), "trace-1", "span-1")
	for i := 0; i < 3; i++ {
		_, _ = p(ctx, "x")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	evs := f.receivedEvents()
	// 3 calls x 2 stages x 2 controls.
	if len(evs) != 12 || a.SentEvents() != 12 || a.DroppedEvents() != 0 {
		t.Fatalf("%d events received, sent %d dropped %d", len(evs), a.SentEvents(), a.DroppedEvents())
	}
	e := evs[0]
	if e.Source != "sdk" || e.AgentName != "test-agent" || e.StepName != "chat" || e.StepType != "llm" ||
		e.TraceID != "trace-1" || e.SpanID != "span-1" || e.Metadata["policy"] != "gold" || e.ControlExecutionID == "" {
		t.Fatalf("event %+v", e)
	}
}

// recordOf returns a queued evaluation of n controls that did not match.
func recordOf(n int) evalRecord {
	res := &guard.Result{NonMatches: make([]guard.ControlResult, n)}
	for i := range res.NonMatches {
		res.NonMatches[i] = guard.ControlResult{ControlID: int64(i + 1), ControlName: "c", Action: guard.DecisionDeny}
	}
	return evalRecord{res: res, agent: "a", stepType: "llm", stepName: "chat", stage: guard.StagePre, at: time.Now()}
}

// TestEventQueueDropsWhenFull: the queue is bounded in events (not in evaluations), drops are counted
// per event, and every event is either sent or counted as dropped.
func TestEventQueueDropsWhenFull(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	posted := 0
	s := newEventSink(25, 1, time.Hour, time.Second, func(ctx context.Context, evs []wireEvent) error {
		<-release
		mu.Lock()
		posted += len(evs)
		mu.Unlock()
		return nil
	}, zap.NewNop())
	// 10 evaluations of 10 events: at most 25 events wait in the queue and the sender holds at most one
	// evaluation (blocked in post), so at least 70 events are dropped, in whole evaluations.
	for range 10 {
		s.add(recordOf(10))
	}
	s.add(recordOf(0)) // nothing to queue, nothing dropped
	if d := s.dropped.Load(); d < 70 || d%10 != 0 {
		t.Fatalf("dropped %d, want at least 70, counted per event (a multiple of 10)", d)
	}
	if q := s.queued.Load(); q > 25 {
		t.Fatalf("%d events queued, bound 25", q)
	}
	close(release)
	s.close()
	if s.sent.Load()+s.dropped.Load() != 100 || int64(posted) != s.sent.Load() || s.queued.Load() != 0 {
		t.Fatalf("sent %d + dropped %d != 100 (posted %d, queued %d)", s.sent.Load(), s.dropped.Load(), posted, s.queued.Load())
	}
}

// TestEventQueueTakesOneLargeEvaluation: an evaluation with more events than the queue holds is not
// dropped when the queue is empty.
func TestEventQueueTakesOneLargeEvaluation(t *testing.T) {
	s := newEventSink(5, 100, time.Hour, time.Second, func(context.Context, []wireEvent) error { return nil }, zap.NewNop())
	s.add(recordOf(20))
	s.close()
	if s.sent.Load() != 20 || s.dropped.Load() != 0 {
		t.Fatalf("sent %d dropped %d, want 20 and 0", s.sent.Load(), s.dropped.Load())
	}
}

// TestEventsOfOneEvaluation checks the events built by the sender from one queued evaluation: one per
// control, in the order matches, errors, non-matches, with the step, trace, policy and timestamp.
func TestEventsOfOneEvaluation(t *testing.T) {
	var got []wireEvent
	s := newEventSink(100, 100, time.Hour, time.Second, func(ctx context.Context, evs []wireEvent) error {
		got = append(got, evs...)
		return nil
	}, zap.NewNop())
	at := time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600))
	res := &guard.Result{
		Matches: []guard.ControlResult{{ControlExecutionID: "e1", ControlID: 1, ControlName: "m", Action: guard.DecisionDeny,
			Result: guard.EvaluatorResult{Matched: true, Confidence: 0.5}, EvaluatorName: "regex", SelectorPath: "input",
			Duration: 1500 * time.Microsecond}},
		Errors:     []guard.ControlResult{{ControlID: 2, ControlName: "e", Action: guard.DecisionLog, Result: guard.EvaluatorResult{Error: "boom"}}},
		NonMatches: []guard.ControlResult{{ControlExecutionID: "e3", ControlID: 3, ControlName: "n", Action: guard.DecisionWarn}},
	}
	s.add(evalRecord{res: res, agent: "ag", stepType: "tool", stepName: "search", stage: guard.StagePost,
		tr: traceIDs{"t1", "s1"}, policy: "gold", at: at})
	s.add(evalRecord{res: &guard.Result{NonMatches: res.NonMatches}, agent: "ag", stepType: "tool", stepName: "search",
		stage: guard.StagePre, at: at})
	s.close()
	want := []string{
		`{"control_execution_id":"e1","trace_id":"t1","span_id":"s1","agent_name":"ag","control_id":1,"control_name":"m","check_stage":"post","step_type":"tool","step_name":"search","action":"deny","matched":true,"confidence":0.5,"timestamp":"2026-01-02T02:04:05.0000006Z","execution_duration_ms":1.5,"evaluator_name":"regex","selector_path":"input","source":"sdk","metadata":{"policy":"gold"}}`,
		`{"control_execution_id":"*","trace_id":"t1","span_id":"s1","agent_name":"ag","control_id":2,"control_name":"e","check_stage":"post","step_type":"tool","step_name":"search","action":"log","matched":false,"confidence":0,"timestamp":"2026-01-02T02:04:05.0000006Z","error_message":"boom","source":"sdk","metadata":{"policy":"gold"}}`,
		`{"control_execution_id":"e3","trace_id":"t1","span_id":"s1","agent_name":"ag","control_id":3,"control_name":"n","check_stage":"post","step_type":"tool","step_name":"search","action":"warn","matched":false,"confidence":0,"timestamp":"2026-01-02T02:04:05.0000006Z","source":"sdk","metadata":{"policy":"gold"}}`,
		`{"control_execution_id":"e3","agent_name":"ag","control_id":3,"control_name":"n","check_stage":"pre","step_type":"tool","step_name":"search","action":"warn","matched":false,"confidence":0,"timestamp":"2026-01-02T02:04:05.0000006Z","source":"sdk"}`,
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(got), len(want), got)
	}
	for i, e := range got {
		if i == 1 {
			if len(e.ControlExecutionID) != 36 {
				t.Fatalf("generated execution id %q", e.ControlExecutionID)
			}
			e.ControlExecutionID = "*"
		}
		if js := canonical(t, e); js != want[i] {
			t.Errorf("event %d\n got %s\nwant %s", i, js, want[i])
		}
	}
}

func TestConfigFromEnvironment(t *testing.T) {
	t.Setenv(EnvURL, "http://example.invalid:1")
	t.Setenv(EnvAPIKey, "k")
	t.Setenv(EnvLogSpanEnd, "false")
	s, err := Config{AgentName: "A"}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if s.ServerURL != "http://example.invalid:1" || s.APIKey != "k" || s.refresh != DefaultRefreshInterval ||
		!s.log.enabled || s.log.spanEnd || !s.log.spanStart || !s.observability || s.ConflictMode != guard.ConflictOverwrite {
		t.Fatalf("settings %+v", s)
	}
	s, _ = Config{AgentName: "A", RefreshInterval: NoRefresh, Log: LogConfig{Enabled: Bool(false)}}.resolve()
	if s.refresh > 0 || s.log.spanStart || s.log.controlEval {
		t.Fatalf("NoRefresh / log disabled: %+v", s)
	}
	t.Setenv(EnvLogControlEval, "sekret-value")
	_, err = Config{AgentName: "A"}.resolve()
	if err == nil || !strings.Contains(err.Error(), EnvLogControlEval) || strings.Contains(err.Error(), "sekret") {
		t.Fatalf("bad boolean: %v", err)
	}
}

func TestToJSONValue(t *testing.T) {
	type args struct {
		Query string `json:"query"`
		N     int    `json:"n"`
	}
	tests := []struct {
		in   any
		want string
	}{
		{"s", `"s"`},
		{3, `3`},
		{args{"q", 2}, `{"n":2,"query":"q"}`},
		{map[string]any{"a": args{"q", 1}}, `{"a":{"n":1,"query":"q"}}`},
		{[]string{"a"}, `["a"]`},
		{nil, `null`},
	}
	for _, tt := range tests {
		v, err := toJSONValue(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := canonical(t, v); got != tt.want {
			t.Errorf("toJSONValue(%#v) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if _, err := toJSONValue(make(chan int)); err == nil {
		t.Fatal("a channel was accepted")
	}
	if funcName(echo) != "echo" {
		t.Fatalf("funcName = %q", funcName(echo))
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCloseLeavesNoGoroutine(t *testing.T) {
	_, srv := newFakeAPI(t, ctl(1, "log-all", guard.ExecutionSDK, guard.DecisionLog, "input", "."))
	ignore := goleak.IgnoreCurrent()
	cfg := testConfig(srv.URL)
	cfg.RefreshInterval = 5 * time.Millisecond
	cfg.Observability = Bool(true)
	cfg.EventFlushInterval = 5 * time.Millisecond
	a, err := Init(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = Protect(a, echo)(context.Background(), "x")
	waitFor(t, func() bool { return a.SentEvents() > 0 })
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	srv.CloseClientConnections()
	goleak.VerifyNone(t, ignore)
	// Protect keeps working after Close, from the last snapshot.
	if _, err := Protect(a, echo)(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if err := a.Refresh(context.Background()); !errors.Is(err, errClosed) {
		t.Fatalf("Refresh after Close: %v", err)
	}
}

// TestDefaultControlsFileInWorkingDirectory: with Config.ControlsFile empty, Init whose server is
// unreachable starts from ./controls.yaml when it exists, and with no controls when it does not. Not
// parallel: it changes the working directory (t.Chdir restores it).
func TestDefaultControlsFileInWorkingDirectory(t *testing.T) {
	url := unreachableURL(t)
	empty := t.TempDir()
	withFile := filepath.Dir(writeFile(t, fileYAML))
	if filepath.Base(writeFile(t, "")) != DefaultControlsFile {
		t.Fatal("writeFile no longer writes controls.yaml")
	}

	t.Run("file present", func(t *testing.T) {
		t.Chdir(withFile)
		a := initAgent(t, testConfig(url))
		if a.Source() != SourceFile || len(a.Controls()) != 1 || a.Controls()[0].Name != "block-ssn" {
			t.Fatalf("source %q controls %+v", a.Source(), a.Controls())
		}
		var v *guard.ControlViolationError
		if _, err := Protect(a, echo)(context.Background(), "ssn 123-45-6789"); !errors.As(err, &v) || v.ControlName != "block-ssn" {
			t.Fatalf("the default file's control is not enforced: %v", err)
		}
	})
	t.Run("file absent", func(t *testing.T) {
		t.Chdir(empty)
		a := initAgent(t, testConfig(url))
		if a.Source() != SourceNone || len(a.Controls()) != 0 {
			t.Fatalf("source %q controls %d", a.Source(), len(a.Controls()))
		}
	})
	t.Run("a directory named controls.yaml is not a file", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, DefaultControlsFile), 0o700); err != nil {
			t.Fatal(err)
		}
		t.Chdir(dir)
		if a := initAgent(t, testConfig(url)); a.Source() != SourceNone {
			t.Fatalf("source %q", a.Source())
		}
	})
}
