package llmproxy

import (
	"net/http"

	"github.com/go-json-experiment/json"

	guard "github.com/guardrail-control/guard"
)

const apiLiteLLM = "litellm.guardrail"

// litellmRequest is LiteLLM's Generic Guardrail API request (litellm-generic-guardrail-api): every field
// may be null or absent, unknown keys are ignored.
type litellmRequest struct {
	InputType          *string          `json:"input_type"`
	Texts              []string         `json:"texts"`
	ToolCalls          []map[string]any `json:"tool_calls"`
	StructuredMessages []map[string]any `json:"structured_messages"`
	Model              *string          `json:"model"`
	Params             map[string]any   `json:"additional_provider_specific_params"`
}

// litellmResponse is its answer: action BLOCKED (with blocked_reason), GUARDRAIL_INTERVENED (with the
// redacted texts) or NONE.
type litellmResponse struct {
	Action        string   `json:"action"`
	BlockedReason *string  `json:"blocked_reason,omitempty"`
	Texts         []string `json:"texts,omitempty"`
}

// litellm is POST /beta/litellm_basic_guardrail_api: LiteLLM's generic guardrail calls it before the
// model (input_type "request": the tool results the model has not read as tool steps at stage post, the
// texts as an llm step at stage pre) and after it (input_type "response": each text as an llm step at
// stage post, each tool call as a tool step at stage pre). The agent and session are X-Guard-Agent and
// X-Guard-Session, else additional_provider_specific_params.guard_agent and .guard_session.
func (p *Proxy) litellm(w http.ResponseWriter, r *http.Request) {
	var req litellmRequest
	body, err := readBody(r, p.cfg.MaxRequestBytes)
	if err == nil {
		if err = json.Unmarshal(body, &req); err != nil {
			err = badRequest("the request body is not a guardrail request: %v", err)
		}
	}
	if err == nil && (req.InputType == nil || *req.InputType != "request" && *req.InputType != "response") {
		err = badRequest(`"input_type" must be "request" or "response"`)
	}
	if err != nil {
		p.fail(w, apiLiteLLM, formatOpenAI, err)
		return
	}
	if r.Header.Get(AgentHeader) == "" {
		if a, _ := req.Params["guard_agent"].(string); a != "" {
			r.Header.Set(AgentHeader, a)
		}
	}
	if r.Header.Get(SessionHeader) == "" {
		if s, _ := req.Params["guard_session"].(string); s != "" {
			r.Header.Set(SessionHeader, s)
		}
	}
	c, err := p.newCall(r, apiLiteLLM)
	if err != nil {
		p.fail(w, apiLiteLLM, formatOpenAI, err)
		return
	}
	if req.Model != nil {
		c.model = *req.Model
	}
	var texts []string
	var changed bool
	if *req.InputType == "request" {
		texts, changed, err = p.litellmRequestSteps(c, &req)
	} else {
		texts, changed, err = p.litellmResponseSteps(c, &req)
	}
	var out litellmResponse
	switch ce := asClientError(err); {
	case err == nil && changed:
		out = litellmResponse{Action: "GUARDRAIL_INTERVENED", Texts: texts}
	case err == nil:
		out = litellmResponse{Action: "NONE"}
	case ce.block != nil:
		msg := ce.msg
		out = litellmResponse{Action: "BLOCKED", BlockedReason: &msg}
	default:
		p.fail(w, apiLiteLLM, formatOpenAI, err)
		return
	}
	p.cfg.Metrics.call(apiLiteLLM, map[string]string{"NONE": "forwarded", "GUARDRAIL_INTERVENED": "forwarded", "BLOCKED": "refused"}[out.Action])
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(encode(out))
}

func (p *Proxy) litellmRequestSteps(c *call, req *litellmRequest) ([]string, bool, error) {
	// The tool results the model has not read: role "tool" after the last assistant message.
	lastAssistant := -1
	calls := map[string]toolCall{}
	for i, m := range req.StructuredMessages {
		if m["role"] != "assistant" {
			continue
		}
		lastAssistant = i
		tcs, _ := m["tool_calls"].([]any)
		for _, tc := range tcs {
			if t := chatToolCall(tc); t.id != "" {
				calls[t.id] = t
			}
		}
	}
	for i := lastAssistant + 1; i < len(req.StructuredMessages); i++ {
		m := req.StructuredMessages[i]
		if m["role"] != "tool" {
			continue
		}
		id, _ := m["tool_call_id"].(string)
		t, ok := calls[id]
		if !ok {
			t = toolCall{name: "unknown"}
		}
		step := &guard.Step{Type: "tool", Name: t.name, Input: t.input(), Output: m["content"], Context: c.stepContext(true)}
		if _, err := p.check(c, KindToolPost, step, guard.StagePost); err != nil {
			return nil, false, err
		}
	}
	input := make([]any, len(req.Texts))
	for i, s := range req.Texts {
		input[i] = s
	}
	step := &guard.Step{Type: "llm", Name: c.api, Input: input, Context: c.stepContext(true)}
	red, err := p.check(c, KindLLMPre, step, guard.StagePre)
	if err != nil {
		return nil, false, err
	}
	rl, ok := red.([]any)
	if !ok || len(rl) != len(req.Texts) {
		return nil, false, nil
	}
	texts := make([]string, len(rl))
	for i, v := range rl {
		s, ok := v.(string)
		if !ok {
			return nil, false, nil
		}
		texts[i] = s
	}
	return texts, true, nil
}

func (p *Proxy) litellmResponseSteps(c *call, req *litellmRequest) ([]string, bool, error) {
	texts := append([]string(nil), req.Texts...)
	changed := false
	for i, s := range texts {
		step := &guard.Step{Type: "llm", Name: c.api, Output: s, Context: c.stepContext(true)}
		red, err := p.check(c, KindLLMPost, step, guard.StagePost)
		if err != nil {
			return nil, false, err
		}
		if rs, ok := red.(string); ok {
			texts[i] = rs
			changed = true
		}
	}
	for _, tc := range req.ToolCalls {
		t := chatToolCall(tc)
		step := &guard.Step{Type: "tool", Name: t.name, Input: t.input(), Context: c.stepContext(true)}
		if _, err := p.check(c, KindToolPre, step, guard.StagePre); err != nil {
			return nil, false, err
		}
	}
	return texts, changed, nil
}
