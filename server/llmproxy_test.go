package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/guardrail-control/guard/llmproxy"
	"github.com/guardrail-control/guard/llmproxy/fakellm"
	"github.com/guardrail-control/guard/store/storetest"
)

const (
	pxAdmin  = "px-admin"
	pxAgent  = "px-runtime"
	pxScoped = "px-scoped"
)

// proxyTS is a server with the LLM proxy in front of a fake upstream, and the admin's helpers.
type proxyTS struct {
	*tserver
	fake *fakellm.Server
	http *httptest.Server
}

func newProxyTS(t *testing.T) *proxyTS {
	fake := fakellm.New()
	t.Cleanup(fake.Close)
	st := storetest.SQLite(t)
	ts := newTSOn(t, st, WithAuth(true, []string{pxAgent}, []string{pxAdmin}),
		WithKeys([]Key{{Name: "scoped", Key: pxScoped, Agents: []string{"px-bot"}}}),
		WithLLMProxy(llmproxy.Config{OpenAIBaseURL: fake.BaseURL(), AnthropicBaseURL: fake.BaseURL()}))
	hs := httptest.NewServer(ts.srv)
	t.Cleanup(hs.Close)
	return &proxyTS{tserver: ts, fake: fake, http: hs}
}

func (p *proxyTS) admin(want int, method, path string, body any) map[string]any {
	p.t.Helper()
	return p.ok(want, method, path, body, "X-API-Key", pxAdmin)
}

func (p *proxyTS) control(agent, name string, data map[string]any) {
	p.t.Helper()
	id := int64(p.admin(200, "PUT", "/api/v1/controls", map[string]any{"name": name, "data": data})["control_id"].(float64))
	p.admin(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": agent}, "steps": []map[string]any{{"type": "llm", "name": "openai.chat.completions"}}})
	p.admin(200, "POST", fmt.Sprintf("/api/v1/agents/%s/controls/%d", agent, id), nil)
}

func (p *proxyTS) client(opts ...option.RequestOption) openai.Client {
	return openai.NewClient(append([]option.RequestOption{option.WithBaseURL(p.http.URL + "/v1"), option.WithAPIKey("sk-provider"), option.WithMaxRetries(0)}, opts...)...)
}

func chat(oa openai.Client, text string) (*openai.ChatCompletion, error) {
	return oa.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}})
}

func apiErrOf(t *testing.T, err error) *openai.Error {
	t.Helper()
	var ae *openai.Error
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an *openai.Error", err)
	}
	return ae
}

// TestLLMProxyRoutes: the proxy's routes in guard serve: the guard key in X-Guard-Key (the provider's
// key passes to the upstream untouched), the agent by header or by the key's scope, refusals in the
// OpenAI error format.
func TestLLMProxyRoutes(t *testing.T) {
	p := newProxyTS(t)
	p.control("px-bot", "deny-secret", regexData("top secret", "deny", "pre"))

	// No guard key: 401 (the provider's key is not a guard key).
	if _, err := chat(p.client(option.WithHeader(llmproxy.AgentHeader, "px-bot")), "hi"); apiErrOf(t, err).StatusCode != 401 {
		t.Fatalf("without a guard key: %v", err)
	}
	oa := p.client(option.WithHeader(llmproxy.KeyHeader, pxAgent), option.WithHeader(llmproxy.AgentHeader, "px-bot"))
	res, err := chat(oa, "hi")
	if err != nil || res.Choices[0].Message.Content != "hello" {
		t.Fatalf("allowed call: %v %v", res, err)
	}
	last := p.fake.Last()
	if last.Header.Get("Authorization") != "Bearer sk-provider" || last.Header.Get(llmproxy.KeyHeader) != "" {
		t.Fatalf("upstream headers: Authorization %q, X-Guard-Key %q", last.Header.Get("Authorization"), last.Header.Get(llmproxy.KeyHeader))
	}
	n := len(p.fake.Requests())
	if ae := apiErrOf(t, func() error { _, err := chat(oa, "the top secret plan"); return err }()); ae.StatusCode != 403 || ae.Code != "guard_denied" {
		t.Fatalf("denied call: %d %s", ae.StatusCode, ae.Code)
	}
	if len(p.fake.Requests()) != n {
		t.Fatal("a denied request reached the upstream")
	}
	// The scoped key names its agent itself; another agent is not found for it.
	scoped := p.client(option.WithHeader(llmproxy.KeyHeader, pxScoped))
	if ae := apiErrOf(t, func() error { _, err := chat(scoped, "top secret"); return err }()); ae.Code != "guard_denied" {
		t.Fatalf("scoped key: %s", ae.Code)
	}
	other := p.client(option.WithHeader(llmproxy.KeyHeader, pxScoped), option.WithHeader(llmproxy.AgentHeader, "someone-else"))
	if ae := apiErrOf(t, func() error { _, err := chat(other, "hi"); return err }()); ae.StatusCode != 404 {
		t.Fatalf("agent outside the scope: %d %s", ae.StatusCode, ae.Code)
	}
	// An agent that does not exist.
	none := p.client(option.WithHeader(llmproxy.KeyHeader, pxAgent), option.WithHeader(llmproxy.AgentHeader, "nobody"))
	if ae := apiErrOf(t, func() error { _, err := chat(none, "hi"); return err }()); ae.StatusCode != 404 || ae.Code != "guard_agent_not_found" {
		t.Fatalf("unknown agent: %d %s", ae.StatusCode, ae.Code)
	}
}

// TestLLMProxySessionRule: a session control counts the LLM calls of one session (X-Guard-Session) across
// calls: the third is denied, another session is not affected.
func TestLLMProxySessionRule(t *testing.T) {
	p := newProxyTS(t)
	p.control("px-bot", "two-calls-per-session", map[string]any{
		"scope":     map[string]any{"step_types": []string{"llm"}, "stages": []string{"pre"}},
		"condition": map[string]any{"selector": map[string]any{"path": "session.count"}, "evaluator": map[string]any{"name": "threshold", "config": map[string]any{"gt": 2}}},
		"action":    map[string]any{"decision": "deny"},
	})
	s1 := p.client(option.WithHeader(llmproxy.KeyHeader, pxAgent), option.WithHeader(llmproxy.AgentHeader, "px-bot"), option.WithHeader(llmproxy.SessionHeader, "conv-1"))
	for i := 0; i < 2; i++ {
		if _, err := chat(s1, "hi"); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	if ae := apiErrOf(t, func() error { _, err := chat(s1, "hi"); return err }()); ae.Code != "guard_denied" {
		t.Fatalf("third call: %s", ae.Code)
	}
	s2 := p.client(option.WithHeader(llmproxy.KeyHeader, pxAgent), option.WithHeader(llmproxy.AgentHeader, "px-bot"), option.WithHeader(llmproxy.SessionHeader, "conv-2"))
	if _, err := chat(s2, "hi"); err != nil {
		t.Fatalf("another session: %v", err)
	}
}

// TestLLMProxyApproval: a request refused for approval answers 403 guard_approval_required with the
// request's id; once a person approves, the same call with the grant in X-Guard-Approval-Grant goes through.
func TestLLMProxyApproval(t *testing.T) {
	p := newProxyTS(t)
	p.control("px-bot", "wire-needs-approval", map[string]any{
		"scope":     map[string]any{"step_types": []string{"llm"}, "stages": []string{"pre"}},
		"condition": map[string]any{"selector": map[string]any{"path": "input"}, "evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": "wire transfer"}}},
		"action":    map[string]any{"decision": "deny", "approval": map[string]any{"ttl_seconds": 600}},
	})
	oa := p.client(option.WithHeader(llmproxy.KeyHeader, pxAgent), option.WithHeader(llmproxy.AgentHeader, "px-bot"))
	_, err := chat(oa, "make a wire transfer")
	ae := apiErrOf(t, err)
	if ae.StatusCode != 403 || ae.Code != "guard_approval_required" {
		t.Fatalf("refusal %d %s", ae.StatusCode, ae.Code)
	}
	var body struct { // RawJSON is the error object
		Guard llmproxy.Block `json:"guard"`
	}
	if err := json.Unmarshal([]byte(ae.RawJSON()), &body); err != nil || body.Guard.Approval == nil || body.Guard.Approval.ID == "" {
		t.Fatalf("no approval id in %s (%v)", ae.RawJSON(), err)
	}
	got := p.admin(200, "POST", "/api/v1/approvals/"+body.Guard.Approval.ID, map[string]any{"decision": "approve"})
	grant, _ := got["grant"].(string)
	res, err := chat(p.client(option.WithHeader(llmproxy.KeyHeader, pxAgent), option.WithHeader(llmproxy.AgentHeader, "px-bot"),
		option.WithHeader(llmproxy.GrantHeader, grant)), "make a wire transfer")
	if err != nil || res.Choices[0].Message.Content != "hello" {
		t.Fatalf("with the grant: %v", err)
	}
}
