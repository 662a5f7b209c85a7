package openaiguard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/openaiguard"
)

// engineChecker evaluates steps with a guard engine in-process and records the stages it saw.
type engineChecker struct {
	e      *guard.Engine
	mu     sync.Mutex
	stages []string // "pre:<input JSON>" / "post:<output>"
	quiet  bool     // record nothing (benchmarks)
}

func (c *engineChecker) CheckStep(ctx context.Context, step *guard.Step, stage guard.Stage) error {
	c.mu.Lock()
	switch {
	case c.quiet:
	case stage == guard.StagePre:
		b, _ := json.Marshal(step.Input)
		c.stages = append(c.stages, "pre:"+string(b))
	default:
		c.stages = append(c.stages, fmt.Sprintf("post:%v", step.Output))
	}
	c.mu.Unlock()
	if step.Type != "llm" || step.Name != openaiguard.DefaultStepName {
		return fmt.Errorf("unexpected step %s/%s", step.Type, step.Name)
	}
	res, err := c.e.Evaluate(ctx, step, stage)
	if err != nil {
		return err
	}
	return res.Err()
}

func (c *engineChecker) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.stages...)
}

func newChecker(t testing.TB) *engineChecker {
	t.Helper()
	mk := func(id int64, name, path, pattern string, stage guard.Stage, dec guard.Decision) guard.Control {
		d := guard.ControlData{Enabled: true, Execution: guard.ExecutionSDK,
			Scope: guard.Scope{StepTypes: []string{"llm"}, Stages: []guard.Stage{stage}},
			Condition: guard.Condition{Selector: &guard.Selector{Path: path},
				Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": pattern}}},
			Action: guard.Action{Decision: dec}}
		if dec == guard.DecisionSteer {
			d.Action.SteeringContext = &guard.SteeringContext{Message: "ask without the account number", RequiredActions: []string{"remove it"}}
		}
		return guard.Control{ID: id, Name: name, Data: d}
	}
	e := guard.New(guard.WithExecution(guard.ExecutionSDK))
	if err := e.Update([]guard.Control{
		mk(1, "no-ssn-in", "input", `\d{3}-\d{2}-\d{4}`, guard.StagePre, guard.DecisionDeny),
		mk(2, "no-account-in", "input.0.content", `account \d+`, guard.StagePre, guard.DecisionSteer),
		mk(3, "no-secret-out", "output", `(?i)secret`, guard.StagePost, guard.DecisionDeny),
	}); err != nil {
		t.Fatal(err)
	}
	return &engineChecker{e: e}
}

// fakeOpenAI answers POST /chat/completions with reply (as JSON, or as an event stream of one chunk per
// word when the request asks to stream) and counts the requests.
type fakeOpenAI struct {
	mu       sync.Mutex
	requests int
	reply    string
	noDone   bool // end the stream without "data: [DONE]"
	status   int  // non-zero: answer this status
}

func (f *fakeOpenAI) hits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests++
	reply, noDone, status := f.reply, f.noDone, f.status
	f.mu.Unlock()
	var req struct {
		Stream bool `json:"stream"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	if status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error":{"message":"boom","type":"server_error"}}`))
		return
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": reply}}}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i, word := range strings.SplitAfter(reply, " ") {
		b, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": word}}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if i == 0 {
			w.(http.Flusher).Flush()
		}
	}
	if !noDone {
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

func newClient(t *testing.T, f *fakeOpenAI, c openaiguard.Checker) openai.Client {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"),
		option.WithMiddleware(openaiguard.Middleware(c)))
}

func params(user string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(user)}}
}

func TestChatCompletion(t *testing.T) {
	tests := []struct {
		name     string
		user     string
		reply    string
		want     string // "ok", "deny", "steer"
		control  string
		upstream int // requests that reached the API
	}{
		{"allowed", "What is the capital of France?", "Paris.", "ok", "", 1},
		{"denied at pre", "my ssn is 123-45-6789", "never", "deny", "no-ssn-in", 0},
		{"steered at pre", "close account 1234", "never", "steer", "no-account-in", 0},
		{"denied at post", "tell me", "the secret is 42", "deny", "no-secret-out", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeOpenAI{reply: tc.reply}
			chk := newChecker(t)
			oa := newClient(t, f, chk)
			res, err := oa.Chat.Completions.New(context.Background(), params(tc.user))
			checkOutcome(t, err, tc.want, tc.control)
			if tc.want == "ok" && res.Choices[0].Message.Content != tc.reply {
				t.Fatalf("content = %q, want %q", res.Choices[0].Message.Content, tc.reply)
			}
			if got := f.hits(); got != tc.upstream {
				t.Fatalf("%d requests reached the API, want %d (no retry of a guard error)", got, tc.upstream)
			}
			if s := chk.seen(); !strings.HasPrefix(s[0], `pre:[{"content":"`+tc.user+`","role":"user"}]`) {
				t.Fatalf("the pre step input = %s, want the messages", s[0])
			}
		})
	}
}

func checkOutcome(t *testing.T, err error, want, control string) {
	t.Helper()
	var v *guard.ControlViolationError
	var s *guard.ControlSteerError
	switch want {
	case "ok":
		if err != nil {
			t.Fatalf("err = %v, want none", err)
		}
	case "deny":
		if !errors.As(err, &v) || v.ControlName != control {
			t.Fatalf("err = %v (%T), want a *guard.ControlViolationError of %s", err, err, control)
		}
	case "steer":
		if !errors.As(err, &s) || s.ControlName != control || s.SteeringContext.Message == "" {
			t.Fatalf("err = %v (%T), want a *guard.ControlSteerError of %s", err, err, control)
		}
	}
}

func TestChatCompletionStreaming(t *testing.T) {
	tests := []struct {
		name    string
		user    string
		reply   string
		noDone  bool
		want    string
		control string
	}{
		{"allowed", "hi", "hello there my friend", false, "ok", ""},
		{"denied at pre", "ssn 123-45-6789", "x", false, "deny", "no-ssn-in"},
		{"denied at the end", "tell me", "the secret word is swordfish", false, "deny", "no-secret-out"},
		{"denied at the end, no [DONE]", "tell me", "a secret again", true, "deny", "no-secret-out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeOpenAI{reply: tc.reply, noDone: tc.noDone}
			chk := newChecker(t)
			oa := newClient(t, f, chk)
			stream := oa.Chat.Completions.NewStreaming(context.Background(), params(tc.user))
			var text strings.Builder
			for stream.Next() {
				for _, ch := range stream.Current().Choices {
					text.WriteString(ch.Delta.Content)
				}
			}
			checkOutcome(t, stream.Err(), tc.want, tc.control)
			_ = stream.Close()
			if tc.want == "ok" && text.String() != tc.reply {
				t.Fatalf("streamed text = %q, want %q", text.String(), tc.reply)
			}
			if s := chk.seen(); tc.want != "deny" || tc.control != "no-ssn-in" {
				if last := s[len(s)-1]; last != "post:"+tc.reply {
					t.Fatalf("post step output = %q, want the assembled text %q", last, tc.reply)
				}
			}
		})
	}
}

func TestOtherRequestsPassThrough(t *testing.T) {
	chk := newChecker(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5]}],"model":"e","usage":{"prompt_tokens":1,"total_tokens":1}}`))
	}))
	defer srv.Close()
	oa := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("k"), option.WithMiddleware(openaiguard.Middleware(chk)))
	_, err := oa.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "e",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("ssn 123-45-6789")}})
	if err != nil {
		t.Fatal(err)
	}
	if s := chk.seen(); len(s) != 0 {
		t.Fatalf("an embeddings request was checked: %v", s)
	}
}

func TestAPIErrorsAreNotChecked(t *testing.T) {
	f := &fakeOpenAI{status: http.StatusBadRequest}
	chk := newChecker(t)
	oa := newClient(t, f, chk)
	_, err := oa.Chat.Completions.New(context.Background(), params("hi"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		t.Fatalf("err = %v, want the API's 400", err)
	}
	if s := chk.seen(); len(s) != 1 {
		t.Fatalf("stages checked = %v, want only pre", s)
	}
}

func TestCheckErrorStopsTheCall(t *testing.T) {
	f := &fakeOpenAI{reply: "x"}
	oa := newClient(t, f, failing{})
	_, err := oa.Chat.Completions.New(context.Background(), params("hi"))
	if err == nil || !strings.Contains(err.Error(), "checker down") {
		t.Fatalf("err = %v, want the check's error", err)
	}
	if f.hits() != 0 {
		t.Fatalf("the request was sent %d times despite the failed check", f.hits())
	}
}

type failing struct{}

func (failing) CheckStep(context.Context, *guard.Step, guard.Stage) error {
	return errors.New("checker down")
}
