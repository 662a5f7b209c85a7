package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
	"github.com/guardrail-control/guard/client/openaiguard"
)

// The OpenAI client middleware against the real server: controls from the server, evaluated in-process,
// events recorded on the server.
func TestOpenAIMiddlewareEndToEnd(t *testing.T) {
	p := startServer(t, map[string]string{"OBSERVABILITY_ENABLED": "true", "OBSERVABILITY_FLUSH_INTERVAL_SECONDS": "1"}, "serve", "--migrate")
	const agent = "openai-e2e"
	p.callInto(http.StatusOK, http.MethodPost, "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": agent}, "steps": []any{}}, nil)
	llm := func(stage, path, pattern string) map[string]any {
		return map[string]any{
			"scope":     map[string]any{"step_types": []string{"llm"}, "stages": []string{stage}},
			"condition": map[string]any{"selector": map[string]any{"path": path}, "evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": pattern}}},
			"action":    map[string]any{"decision": "deny"},
		}
	}
	mcpControl(p, agent, "no-ssn-prompt", llm("pre", "input", `\d{3}-\d{2}-\d{4}`))
	mcpControl(p, agent, "no-secret-answer", llm("post", "output", `(?i)secret`))

	var hits atomic.Int64
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "1", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": "the secret is 42"}}}})
	}))
	defer fake.Close()

	a, err := client.Init(context.Background(), client.Config{AgentName: agent, ServerURL: p.base, LocalServerControls: true,
		RefreshInterval: client.NoRefresh, Steps: []guard.StepSchema{{Type: "llm", Name: openaiguard.DefaultStepName}},
		Log: client.LogConfig{Enabled: client.Bool(false)}, Observability: client.Bool(true), EventFlushInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	oa := openai.NewClient(option.WithBaseURL(fake.URL), option.WithAPIKey("k"), option.WithMiddleware(openaiguard.Middleware(a)))
	ask := func(q string) error {
		_, err := oa.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(q)}})
		return err
	}
	var denied *guard.ControlViolationError
	if err := ask("my ssn is 123-45-6789"); !errors.As(err, &denied) || denied.ControlName != "no-ssn-prompt" {
		t.Fatalf("prompt with an SSN: %v", err)
	}
	if hits.Load() != 0 {
		t.Fatal("the denied prompt reached the model")
	}
	if err := ask("tell me"); !errors.As(err, &denied) || denied.ControlName != "no-secret-answer" {
		t.Fatalf("answer with a secret: %v", err)
	}
	if hits.Load() != 1 {
		t.Fatalf("%d requests reached the model, want 1", hits.Load())
	}
	a.FlushEvents(context.Background())
	want := map[string]bool{"no-ssn-prompt/pre": true, "no-secret-answer/post": true}
	waitFor(t, "the middleware's events on the server", func() bool {
		for _, e := range mcpEvents(p, agent) {
			if e.Matched && e.StepType == "llm" && e.StepName == openaiguard.DefaultStepName {
				delete(want, e.Control+"/"+e.Stage)
			}
		}
		return len(want) == 0
	})
}
