// Package fakellm is a fake LLM API server for tests and benchmarks: OpenAI Chat Completions
// (POST /v1/chat/completions) and Anthropic Messages (POST /v1/messages), non-streamed and streamed as the
// real APIs stream (a role chunk, text deltas, tool-call argument deltas, a finish chunk, usage, [DONE];
// Anthropic's message_start ... message_stop events), and their error bodies. What it answers is
// scripted per request (Server.Script); every request it received is kept (Server.Requests).
package fakellm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// ToolCall is a tool call the fake model makes.
type ToolCall struct {
	ID, Name, Arguments string
}

// Reply is what the fake model answers to one request.
type Reply struct {
	Text      string
	ToolCalls []ToolCall
	// Status, when not 0 or 200, answers with the API's error body (Message) instead.
	Status  int
	Message string
	// Chunk is the size of the streamed text and argument fragments (default 8 bytes).
	Chunk int
	// Delay is slept between streamed events (for tests of a client leaving mid-stream).
	Delay time.Duration
	// Hang waits before answering this long (or until the request is cancelled).
	Hang time.Duration
	// Wait, when not nil, holds a streamed answer after its text until it is closed (streams kept open).
	Wait <-chan struct{}
}

// Request is a request the fake received.
type Request struct {
	Path   string
	Header http.Header
	Body   map[string]any
	// Cancelled is closed when the request's context ended before its answer was complete.
	Cancelled chan struct{}
}

// Server is the fake.
type Server struct {
	*httptest.Server
	mu     sync.Mutex
	script func(r *Request) Reply
	reqs   []*Request
}

// New starts a fake whose model answers "hello" until Script says otherwise.
func New() *Server {
	s := &Server{script: func(*Request) Reply { return Reply{Text: "hello"} }}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the base URL a client or the proxy takes for both APIs (ending in /v1).
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Script sets what the model answers.
func (s *Server) Script(f func(r *Request) Reply) {
	s.mu.Lock()
	s.script = f
	s.mu.Unlock()
}

// Requests returns the requests received so far.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// Last returns the last request received (nil if none).
func (s *Server) Last() *Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		return nil
	}
	return s.reqs[len(s.reqs)-1]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	req := &Request{Path: r.URL.Path, Header: r.Header.Clone(), Cancelled: make(chan struct{})}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	req.Body = body
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	script := s.script
	s.mu.Unlock()
	rep := script(req)
	complete := false
	defer func() {
		if !complete {
			close(req.Cancelled)
		}
	}()
	if rep.Hang > 0 {
		select {
		case <-time.After(rep.Hang):
		case <-r.Context().Done():
			return
		}
	}
	if rep.Chunk <= 0 {
		rep.Chunk = 8
	}
	stream, _ := body["stream"].(bool)
	switch r.URL.Path {
	case "/v1/chat/completions":
		if rep.Status != 0 && rep.Status != http.StatusOK {
			writeJSON(w, rep.Status, map[string]any{"error": map[string]any{"message": rep.Message, "type": "invalid_request_error", "param": nil, "code": nil}})
		} else if stream {
			if !s.openAIStream(r.Context(), w, body, rep) {
				return
			}
		} else {
			writeJSON(w, http.StatusOK, openAICompletion(body, rep))
		}
	case "/v1/messages":
		if rep.Status != 0 && rep.Status != http.StatusOK {
			writeJSON(w, rep.Status, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": rep.Message}})
		} else if stream {
			if !s.anthropicStream(r.Context(), w, body, rep) {
				return
			}
		} else {
			writeJSON(w, http.StatusOK, anthropicMessage(body, rep))
		}
	default:
		http.NotFound(w, r)
		return
	}
	complete = true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", "req_fake")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func model(body map[string]any) string {
	m, _ := body["model"].(string)
	return m
}

func openAICompletion(body map[string]any, rep Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": rep.Text, "refusal": nil}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		var tcs []any
		for _, tc := range rep.ToolCalls {
			tcs = append(tcs, map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
		}
		msg["tool_calls"] = tcs
		finish = "tool_calls"
		if rep.Text == "" {
			msg["content"] = nil
		}
	}
	return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": 1700000000, "model": model(body),
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
}

func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// sender writes events with the reply's delay, false once the client is gone.
type sender struct {
	ctx   context.Context
	w     http.ResponseWriter
	delay time.Duration
}

func (s *sender) send(event string, v any) bool {
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-s.ctx.Done():
			return false
		}
	}
	var b strings.Builder
	if event != "" {
		fmt.Fprintf(&b, "event: %s\n", event)
	}
	if raw, ok := v.(string); ok {
		fmt.Fprintf(&b, "data: %s\n\n", raw)
	} else {
		j, _ := json.Marshal(v)
		fmt.Fprintf(&b, "data: %s\n\n", j)
	}
	if _, err := s.w.Write([]byte(b.String())); err != nil {
		return false
	}
	s.w.(http.Flusher).Flush()
	return s.ctx.Err() == nil
}

func (s *Server) openAIStream(ctx context.Context, w http.ResponseWriter, body map[string]any, rep Reply) bool {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	sd := &sender{ctx: ctx, w: w, delay: rep.Delay}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": model(body),
			"system_fingerprint": "fp_fake", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
	}
	if !sd.send("", chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)) {
		return false
	}
	for _, p := range pieces(rep.Text, rep.Chunk) {
		if !sd.send("", chunk(map[string]any{"content": p}, nil)) {
			return false
		}
	}
	if rep.Wait != nil {
		select {
		case <-rep.Wait:
		case <-ctx.Done():
			return false
		}
	}
	for i, tc := range rep.ToolCalls {
		first := map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""}}}}
		if !sd.send("", chunk(first, nil)) {
			return false
		}
		for _, p := range pieces(tc.Arguments, rep.Chunk) {
			d := map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}
			if !sd.send("", chunk(d, nil)) {
				return false
			}
		}
	}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	if !sd.send("", chunk(map[string]any{}, finish)) {
		return false
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] == true {
		u := chunk(nil, nil)
		u["choices"] = []any{}
		u["usage"] = map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
		if !sd.send("", u) {
			return false
		}
	}
	return sd.send("", "[DONE]")
}

func anthropicMessage(body map[string]any, rep Reply) map[string]any {
	content := []any{}
	if rep.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": rep.Text})
	}
	stop := "end_turn"
	for _, tc := range rep.ToolCalls {
		var input any
		_ = json.Unmarshal([]byte(tc.Arguments), &input)
		content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": input})
		stop = "tool_use"
	}
	return map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": model(body), "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5}}
}

func (s *Server) anthropicStream(ctx context.Context, w http.ResponseWriter, body map[string]any, rep Reply) bool {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	sd := &sender{ctx: ctx, w: w, delay: rep.Delay}
	msg := map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": model(body), "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}
	if !sd.send("message_start", map[string]any{"type": "message_start", "message": msg}) {
		return false
	}
	idx := 0
	if rep.Text != "" {
		if !sd.send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}}) ||
			!sd.send("ping", map[string]any{"type": "ping"}) {
			return false
		}
		for _, p := range pieces(rep.Text, rep.Chunk) {
			if !sd.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": p}}) {
				return false
			}
		}
		if !sd.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}) {
			return false
		}
		idx++
	}
	stop := "end_turn"
	for _, tc := range rep.ToolCalls {
		stop = "tool_use"
		if !sd.send("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}}) {
			return false
		}
		for _, p := range pieces(tc.Arguments, rep.Chunk) {
			if !sd.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}}) {
				return false
			}
		}
		if !sd.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}) {
			return false
		}
		idx++
	}
	return sd.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 5}}) &&
		sd.send("message_stop", map[string]any{"type": "message_stop"})
}
