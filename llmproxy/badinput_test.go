package llmproxy_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/llmproxy"
	"github.com/guardrail-control/guard/llmproxy/fakellm"
)

// TestBadInput: malformed and oversized bodies are answered in the API's own error format, with the
// status the official clients map to a bad request, and never reach the upstream.
func TestBadInput(t *testing.T) {
	rg := newRig(t, func(c *llmproxy.Config) { c.MaxRequestBytes = 1 << 10 })
	huge := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("a", 2000) + `"}]}`
	cases := []struct {
		name, path, body string
		status           int
		anthropic        bool
	}{
		{"not JSON", "/v1/chat/completions", `{"model":`, 400, false},
		{"not an object", "/v1/chat/completions", `[1,2]`, 400, false},
		{"no messages", "/v1/chat/completions", `{"model":"m"}`, 400, false},
		{"messages not a list", "/v1/chat/completions", `{"model":"m","messages":"hi"}`, 400, false},
		{"message not an object", "/v1/chat/completions", `{"model":"m","messages":[1]}`, 400, false},
		{"duplicate key", "/v1/chat/completions", `{"model":"m","messages":[],"messages":[{"role":"user","content":"x"}]}`, 400, false},
		{"stream not a bool", "/v1/chat/completions", `{"model":"m","messages":[],"stream":"yes"}`, 400, false},
		{"too large", "/v1/chat/completions", huge, 413, false},
		{"anthropic not JSON", "/v1/messages", `{`, 400, true},
		{"anthropic too large", "/v1/messages", huge, 413, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := http.Post(rg.proxy.URL+tc.path, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if r.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", r.StatusCode, tc.status, b)
			}
			var body struct {
				Type  string `json:"type"`
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &body); err != nil || body.Error.Message == "" || body.Error.Type == "" {
				t.Fatalf("not the API's error format: %s", b)
			}
			if tc.anthropic && body.Type != "error" {
				t.Fatalf("not Anthropic's error format: %s", b)
			}
			if rg.fake.Last() != nil {
				t.Fatal("a bad request reached the upstream")
			}
		})
	}
}

// TestUpstreamErrorPassesThrough: an upstream's own error answer reaches the client as it is.
func TestUpstreamErrorPassesThrough(t *testing.T) {
	rg := newRig(t, nil)
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		rg.fake.Script(func(*fakellm.Request) fakellm.Reply { return fakellm.Reply{Status: 429, Message: "slow down"} })
		r, err := http.Post(rg.proxy.URL+path, "application/json", strings.NewReader(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 429 || !strings.Contains(string(b), "slow down") {
			t.Fatalf("%s: %d %s", path, r.StatusCode, b)
		}
	}
}

// TestCheckerFaults: the guard server unreachable refuses the call (503 guard_unavailable) unless
// FailOpen; a refusal of the request by the guard server (an unknown agent) is its status in the API's
// format; the provider key passes in x-api-key too.
func TestCheckerFaults(t *testing.T) {
	down := llmproxy.CheckerFunc(func(*http.Request, string, *guard.Step, guard.Stage) (*guard.Result, error) {
		return nil, errors.Join(llmproxy.ErrUnavailable, errors.New("connection refused"))
	})
	unknown := llmproxy.CheckerFunc(func(*http.Request, string, *guard.Step, guard.Stage) (*guard.Result, error) {
		return nil, &llmproxy.CheckError{Status: 404, Code: "guard_agent_not_found", Message: "agent bot not found"}
	})
	cases := []struct {
		name     string
		checker  llmproxy.Checker
		failOpen bool
		status   int
		code     string
	}{
		{"fail closed", down, false, 503, "guard_unavailable"},
		{"fail open", down, true, 200, ""},
		{"unknown agent", unknown, false, 404, "guard_agent_not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rg := newRig(t, func(c *llmproxy.Config) { c.Checker, c.FailOpen = tc.checker, tc.failOpen })
			req, _ := http.NewRequest("POST", rg.proxy.URL+"/v1/messages", strings.NewReader(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("x-api-key", "sk-ant-key")
			r, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if r.StatusCode != tc.status || !strings.Contains(string(b), tc.code) {
				t.Fatalf("%d %s, want %d %s", r.StatusCode, b, tc.status, tc.code)
			}
			if tc.status == 200 && rg.fake.Last().Header.Get("X-Api-Key") != "sk-ant-key" {
				t.Fatal("the provider key did not reach the upstream")
			}
		})
	}
}
