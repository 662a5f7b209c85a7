package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeOpenAI answers every chat completion with reply, as JSON or as an event stream.
func fakeOpenAI(t *testing.T, reply string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream bool `json:"stream"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "1", "object": "chat.completion", "model": "m",
				"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": reply}}}})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, word := range strings.SplitAfter(reply, " ") {
			b, _ := json.Marshal(map[string]any{"id": "1", "object": "chat.completion.chunk", "model": "m",
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": word}}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestLLMGuard(t *testing.T) {
	// No guard server: the agent starts from the controls file.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GUARD_URL", "http://"+ln.Addr().String())
	_ = ln.Close()
	t.Setenv("OPENAI_API_KEY", "test")
	file := filepath.Join(t.TempDir(), "controls.yaml")
	if err := os.WriteFile(file, []byte(`controls:
  - name: no-ssn-in-prompts
    data:
      execution: sdk
      scope: {step_types: [llm], stages: [pre]}
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: '\d{3}-\d{2}-\d{4}'}}}
      action: {decision: deny}
  - name: no-passwords-out
    data:
      execution: sdk
      scope: {step_types: [llm], stages: [post]}
      condition: {selector: {path: output}, evaluator: {name: regex, config: {pattern: '(?i)password'}}}
      action: {decision: steer, steering_context: {message: "never reveal passwords", required_actions: [ask again without credentials]}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		reply string
		args  []string
		want  string
	}{
		{"allowed", "Paris is the capital.", []string{"capital of France?"}, "Paris is the capital.\n"},
		{"allowed, streamed", "Paris is the capital.", []string{"-stream", "capital of France?"}, "Paris is the capital.\n"},
		{"prompt denied", "never sent", []string{"my ssn is 123-45-6789"}, "DENIED by no-ssn-in-prompts"},
		{"answer steered", "the password is hunter2", []string{"what is the password?"}, "STEERED by no-passwords-out: never reveal passwords (required: ask again without credentials)"},
		{"streamed answer steered", "the password is hunter2", []string{"-stream", "what is the password?"}, "STEERED by no-passwords-out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OPENAI_BASE_URL", fakeOpenAI(t, tc.reply))
			var out strings.Builder
			if err := run(context.Background(), append([]string{"-controls", file}, tc.args...), &out); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out.String(), tc.want) {
				t.Fatalf("output %q, want %q", out.String(), tc.want)
			}
		})
	}
}
