package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/guardrail-control/guard/llmproxy"
	"github.com/guardrail-control/guard/llmproxy/fakellm"
)

// proxyChat makes one chat completion through the proxy at base with the official OpenAI client.
func proxyChat(base, text string, opts ...option.RequestOption) (*openai.ChatCompletion, error) {
	oa := openai.NewClient(append([]option.RequestOption{option.WithBaseURL(base + "/v1"), option.WithAPIKey("sk-provider"), option.WithMaxRetries(0)}, opts...)...)
	return oa.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}})
}

func wantAPIError(t *testing.T, err error, status int, code string) {
	t.Helper()
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != status || ae.Code != code {
		t.Fatalf("err = %v, want %d %s", err, status, code)
	}
}

func metricsText(t *testing.T, base string) string {
	t.Helper()
	r, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

// logged waits until the process's log holds s (its stderr is copied by another goroutine).
func logged(p *proc, s string) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.stderr.String(), s) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestProxyCommandEndToEnd: `guard proxy` in front of a fake upstream, evaluating on a `guard serve`
// process: allowed and denied calls, metrics, then the guard server gone (fail-closed by default, fail-open
// with the flag, both logged and counted), an unreachable and a slow upstream.
func TestProxyCommandEndToEnd(t *testing.T) {
	fake := fakellm.New()
	defer fake.Close()
	g := startServer(t, map[string]string{"DB_URL": filepath.Join(t.TempDir(), "g.db")}, "serve", "--migrate")
	id := int64(g.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "no-secrets", "data": regex("top secret", "deny")})["control_id"].(float64))
	g.call(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "px"}, "steps": []any{}})
	g.call(200, "POST", fmt.Sprintf("/api/v1/agents/px/controls/%d", id), nil)

	bin := buildServer(t)
	px := startBinary(t, bin, nil, "proxy", "--listen", "127.0.0.1:0", "--server", g.base, "--agent", "px", "--openai-upstream", fake.BaseURL())
	if res, err := proxyChat(px.base, "hi"); err != nil || res.Choices[0].Message.Content != "hello" {
		t.Fatalf("allowed call: %v", err)
	}
	_, err := proxyChat(px.base, "the top secret plan")
	wantAPIError(t, err, 403, "guard_denied")
	if m := metricsText(t, px.base); !strings.Contains(m, `guard_proxy_steps_total{api="openai.chat.completions",decision="deny",step_kind="llm_pre"} 1`) {
		t.Fatalf("metrics:\n%s", m)
	}
	if strings.Contains(px.stderr.String(), "sk-provider") {
		t.Fatal("the provider key was logged")
	}

	open := startBinary(t, bin, nil, "proxy", "--listen", "127.0.0.1:0", "--server", g.base, "--agent", "px", "--openai-upstream", fake.BaseURL(), "--fail-open")
	g.stop() // the guard server is gone
	_, err = proxyChat(px.base, "hi")
	wantAPIError(t, err, 503, "guard_unavailable")
	if !logged(px, "fail-closed") || !strings.Contains(metricsText(t, px.base), `guard_proxy_guard_unavailable_total{mode="fail_closed"}`) {
		t.Fatalf("fail-closed not logged or counted:\n%s", px.stderr)
	}
	if res, err := proxyChat(open.base, "the top secret plan"); err != nil || res.Choices[0].Message.Content != "hello" {
		t.Fatalf("fail-open call: %v", err)
	}
	if !logged(open, "fail-open") || !strings.Contains(metricsText(t, open.base), `guard_proxy_guard_unavailable_total{mode="fail_open"}`) {
		t.Fatalf("fail-open not logged or counted:\n%s", open.stderr)
	}

	// Upstream faults, with a fail-open proxy so that the guard server's absence does not decide.
	gone := startBinary(t, bin, nil, "proxy", "--listen", "127.0.0.1:0", "--server", g.base, "--agent", "px", "--fail-open",
		"--openai-upstream", "http://"+closedPort(t)+"/v1")
	_, err = proxyChat(gone.base, "hi")
	wantAPIError(t, err, 502, "upstream_unreachable")
	fake.Script(func(*fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "late", Hang: 30 * time.Second} })
	slow := startBinary(t, bin, nil, "proxy", "--listen", "127.0.0.1:0", "--server", g.base, "--agent", "px", "--fail-open",
		"--openai-upstream", fake.BaseURL(), "--upstream-timeout", "300ms")
	_, err = proxyChat(slow.base, "hi")
	wantAPIError(t, err, 504, "upstream_timeout")
	for _, p := range []*proc{px, open, gone, slow} {
		p.stop()
	}
}

// TestServeProxyRoutes: GUARD_PROXY=true serves the proxy's routes in guard serve, evaluated by the
// server itself, and its metrics on the server's /metrics.
func TestServeProxyRoutes(t *testing.T) {
	fake := fakellm.New()
	defer fake.Close()
	g := startServer(t, map[string]string{"DB_URL": filepath.Join(t.TempDir(), "g.db"), "GUARD_PROXY": "true",
		"GUARD_PROXY_OPENAI_URL": fake.BaseURL(), "GUARD_PROXY_DEFAULT_AGENT": "px"}, "serve", "--migrate")
	id := int64(g.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "no-secrets", "data": regex("top secret", "deny")})["control_id"].(float64))
	g.call(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "px"}, "steps": []any{}})
	g.call(200, "POST", fmt.Sprintf("/api/v1/agents/px/controls/%d", id), nil)
	if res, err := proxyChat(g.base, "hi"); err != nil || res.Choices[0].Message.Content != "hello" {
		t.Fatalf("allowed call: %v", err)
	}
	_, err := proxyChat(g.base, "top secret", option.WithHeader(llmproxy.SessionHeader, "s1"))
	wantAPIError(t, err, 403, "guard_denied")
	if m := metricsText(t, g.base); !strings.Contains(m, `guard_proxy_calls_total{api="openai.chat.completions",outcome="refused"} 1`) {
		t.Fatalf("metrics:\n%s", m)
	}
	g.stop()
}
