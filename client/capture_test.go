package client

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
)

// TestStepSinkBatchesAndBounds: Config.CaptureSteps sends steps in batches of at most the batch size,
// and while the server is slow the queue holds at most its size: further steps are dropped and counted,
// never blocking the protected call.
func TestStepSinkBatchesAndBounds(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var batches []int
	post := func(_ context.Context, b []CapturedStep) error {
		mu.Lock()
		batches = append(batches, len(b))
		first := len(batches) == 1
		mu.Unlock()
		if first {
			<-release // the server is slow to take the first batch
		}
		return nil
	}
	s := newStepSink(4, 3, time.Hour, 10*time.Second, post, zap.NewNop())
	step := &guard.Step{Type: "llm", Name: "chat", Input: "x"}
	add := func(n int) {
		for range n {
			s.add("bot", step, guard.StagePre, guard.DecisionAllow)
		}
	}
	add(3) // one full batch: the sender posts it and waits
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(batches)
		mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first batch was never posted")
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	add(10) // the queue takes 4, the other 6 are dropped at once
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("adding to a full queue took %v", d)
	}
	if got := s.dropped.Load(); got != 6 {
		t.Fatalf("dropped %d steps, want 6 (queue of 4)", got)
	}
	close(release)
	s.flush(context.Background())
	s.close()
	if got := s.sent.Load(); got != 7 {
		t.Errorf("sent %d steps, want 7", got)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, n := range batches {
		if n < 1 || n > 3 {
			t.Errorf("batches %v: each must hold 1 to 3 steps", batches)
		}
	}
}

func TestCapturedStepsDecodes(t *testing.T) {
	srv, _ := recordingServer(t, 200, `{"agent_name":"bot","limit":20,"has_more":true,"steps":[{"id":7,"agent_name":"bot","stage":"post",`+
		`"step_type":"llm","step_name":"chat","step":{"type":"llm","name":"chat","input":"hi","output":"[REDACTED]"},`+
		`"decision":"deny","source":"sdk","timestamp":"2026-11-24T10:00:00.5Z"}]}`)
	page, err := newTestClient(t, srv.URL).CapturedSteps(context.Background(), CapturedStepQuery{AgentName: "bot"})
	if err != nil {
		t.Fatal(err)
	}
	if page.AgentName != "bot" || page.Limit != 20 || !page.HasMore || len(page.Steps) != 1 {
		t.Fatalf("page %+v", page)
	}
	s := page.Steps[0]
	var step guard.Step
	if err := json.Unmarshal(s.Step, &step); err != nil {
		t.Fatal(err)
	}
	if s.ID != 7 || s.Stage != guard.StagePost || s.Decision != guard.DecisionDeny || s.Source != "sdk" || s.StepName != "chat" ||
		!s.Time.Equal(time.Date(2026, 11, 24, 10, 0, 0, 5e8, time.UTC)) || step.Input != "hi" || step.Output != "[REDACTED]" {
		t.Errorf("step %+v / %+v", s, step)
	}
	// A problem is an *APIError, as everywhere.
	srv, _ = recordingServer(t, 404, `{"type":"about:blank","title":"Not Found","status":404,"detail":"agent not found","error_code":"AGENT_NOT_FOUND","errors":[]}`)
	if _, err := newTestClient(t, srv.URL).CapturedSteps(context.Background(), CapturedStepQuery{AgentName: "ghost"}); !isStatus(err, 404) {
		t.Errorf("unknown agent: %v", err)
	}
}
