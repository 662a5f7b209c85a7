package llmproxy_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/llmproxy"
	"github.com/guardrail-control/guard/llmproxy/fakellm"
)

// testControls are the controls of the proxy's tests: one per step kind and decision.
var testControls = []struct{ name, data string }{
	{"deny-ssn", `{"scope": {"step_types": ["llm"], "stages": ["pre"]},
		"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "\\b\\d{3}-\\d{2}-\\d{4}\\b"}}},
		"action": {"decision": "deny", "metadata": {"reason": "no social security numbers"}}}`},
	{"redact-email", `{"scope": {"step_types": ["llm"], "stages": ["pre"]},
		"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "[a-z]+@example\\.com"}}},
		"action": {"decision": "warn", "redact": {"replacement": "[EMAIL]"}}}`},
	{"deny-forbidden-answer", `{"scope": {"step_types": ["llm"], "stages": ["post"]},
		"condition": {"selector": {"path": "output"}, "evaluator": {"name": "regex", "config": {"pattern": "FORBIDDEN"}}},
		"action": {"decision": "deny"}}`},
	{"redact-key", `{"scope": {"step_types": ["llm"], "stages": ["post"]},
		"condition": {"selector": {"path": "output"}, "evaluator": {"name": "regex", "config": {"pattern": "sk-[a-z0-9]{20}"}}},
		"action": {"decision": "warn", "redact": {"replacement": "[KEY]"}}}`},
	{"deny-delete", `{"scope": {"step_types": ["tool"], "step_names": ["delete_file"], "stages": ["pre"]},
		"condition": {"selector": {"path": "input.path"}, "evaluator": {"name": "regex", "config": {"pattern": "^/etc/"}}},
		"action": {"decision": "deny"}}`},
	{"steer-refund", `{"scope": {"step_types": ["tool"], "step_names": ["refund"], "stages": ["pre"]},
		"condition": {"selector": {"path": "input.currency"}, "evaluator": {"name": "list", "config": {"values": ["EUR"], "match_on": "no_match"}}},
		"action": {"decision": "steer", "steering_context": {"message": "refunds are paid in EUR", "required_actions": ["convert"]}}}`},
	{"deny-injection", `{"scope": {"step_types": ["tool"], "stages": ["post"]},
		"condition": {"selector": {"path": "output"}, "evaluator": {"name": "regex", "config": {"pattern": "(?i)ignore (all )?previous instructions"}}},
		"action": {"decision": "deny", "metadata": {"reason": "prompt injection in a tool result"}}}`},
}

// engineChecker evaluates with an in-process engine and records every step it saw.
type engineChecker struct {
	eng   *guard.Engine
	mu    sync.Mutex
	steps []seenStep
}

type seenStep struct {
	agent string
	step  guard.Step
	stage guard.Stage
}

func (c *engineChecker) Check(r *http.Request, agent string, step *guard.Step, stage guard.Stage) (*guard.Result, error) {
	c.mu.Lock()
	c.steps = append(c.steps, seenStep{agent, *step, stage})
	c.mu.Unlock()
	return c.eng.Evaluate(r.Context(), step, stage)
}

func (c *engineChecker) seen() []seenStep {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]seenStep(nil), c.steps...)
}

func newEngineChecker(t testing.TB) *engineChecker {
	t.Helper()
	var cs []guard.Control
	for i, c := range testControls {
		d, err := guard.ParseControlData([]byte(c.data))
		if err != nil {
			t.Fatalf("control %s: %v", c.name, err)
		}
		cs = append(cs, guard.Control{ID: int64(i + 1), Name: c.name, Data: d})
	}
	eng := guard.New()
	if err := eng.Update(cs); err != nil {
		t.Fatal(err)
	}
	return &engineChecker{eng: eng}
}

// rig is a fake upstream, a proxy in front of it and an OpenAI client of the proxy.
type rig struct {
	fake  *fakellm.Server
	chk   *engineChecker
	proxy *httptest.Server
	oa    openai.Client
}

func newRig(t testing.TB, mod func(*llmproxy.Config)) *rig {
	t.Helper()
	fake := fakellm.New()
	t.Cleanup(fake.Close)
	chk := newEngineChecker(t)
	cfg := llmproxy.Config{OpenAIBaseURL: fake.BaseURL(), AnthropicBaseURL: fake.BaseURL(), Checker: chk, DefaultAgent: "bot"}
	if mod != nil {
		mod(&cfg)
	}
	p, err := llmproxy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ps := httptest.NewServer(p)
	t.Cleanup(ps.Close)
	oa := openai.NewClient(option.WithBaseURL(ps.URL+"/v1"), option.WithAPIKey("sk-provider-key"), option.WithMaxRetries(0),
		option.WithHeader(llmproxy.SessionHeader, "s-1"))
	return &rig{fake: fake, chk: chk, proxy: ps, oa: oa}
}
