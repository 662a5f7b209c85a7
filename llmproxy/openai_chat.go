package llmproxy

import (
	"net/http"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	guard "github.com/guardrail-control/guard"
)

const apiChat = "openai.chat.completions"

// chatCompletions is POST /v1/chat/completions.
func (p *Proxy) chatCompletions(w http.ResponseWriter, r *http.Request) {
	c, top, err := p.begin(w, r, apiChat)
	if err != nil {
		p.fail(w, apiChat, formatOpenAI, err)
		return
	}
	var msgs []any
	if ok, err := member(top, "messages", &msgs); err != nil || !ok {
		if err == nil {
			err = &clientError{status: http.StatusBadRequest, code: "invalid_request_error", msg: `"messages" is required`}
		}
		p.fail(w, apiChat, formatOpenAI, err)
		return
	}
	var stream bool
	if _, err := member(top, "stream", &stream); err != nil {
		p.fail(w, apiChat, formatOpenAI, err)
		return
	}
	_, _ = member(top, "model", &c.model)
	out, changed, err := p.checkChatMessages(c, msgs)
	if err != nil {
		p.fail(w, apiChat, formatOpenAI, err)
		return
	}
	var body []byte
	if changed {
		top["messages"] = encode(out)
		body = encode(top)
	} else {
		body = c.body
	}
	ctx, cancel := p.upstreamContext(r.Context(), stream)
	defer cancel()
	resp, err := p.forward(ctx, p.openai, r, PathChatCompletions, body)
	if err != nil {
		p.fail(w, apiChat, formatOpenAI, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		p.passError(w, apiChat, formatOpenAI, resp, p.openai.Host)
		return
	}
	if isEventStream(resp) {
		p.chatStream(w, c, resp)
		return
	}
	raw, err := readUpstream(resp, p.cfg.MaxResponseBytes, p.openai.Host)
	if err != nil {
		p.fail(w, apiChat, formatOpenAI, err)
		return
	}
	raw, err = p.checkChatAnswer(c, raw)
	if err != nil {
		p.fail(w, apiChat, formatOpenAI, err)
		return
	}
	copyHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(raw)
	p.cfg.Metrics.call(apiChat, "forwarded")
}

// checkChatMessages checks the request's messages: each tool result the model has not read yet (role
// "tool" after the last assistant message) as a tool step at stage post, then the messages as an llm step
// at stage pre. It returns the messages to send (redacted when a control redacted them).
func (p *Proxy) checkChatMessages(c *call, msgs []any) ([]any, bool, error) {
	lastAssistant := -1
	calls := map[string]toolCall{}
	for i, m := range msgs {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil, false, badRequest("messages[%d] is not an object", i)
		}
		if mm["role"] != "assistant" {
			continue
		}
		lastAssistant = i
		tcs, _ := mm["tool_calls"].([]any)
		for _, tc := range tcs {
			t := chatToolCall(tc)
			if t.id != "" {
				calls[t.id] = t
			}
		}
	}
	changed := false
	for i := lastAssistant + 1; i < len(msgs); i++ {
		mm := msgs[i].(map[string]any)
		if mm["role"] != "tool" {
			continue
		}
		id, _ := mm["tool_call_id"].(string)
		t, ok := calls[id]
		if !ok {
			t = toolCall{name: "unknown"}
		}
		step := &guard.Step{Type: "tool", Name: t.name, Input: t.input(), Output: mm["content"], Context: c.stepContext(true)}
		red, err := p.check(c, KindToolPost, step, guard.StagePost)
		if err != nil {
			return nil, false, err
		}
		if red != nil {
			mm["content"] = red
			changed = true
		}
	}
	step := &guard.Step{Type: "llm", Name: c.api, Input: msgs, Context: c.stepContext(true)}
	red, err := p.check(c, KindLLMPre, step, guard.StagePre)
	if err != nil {
		return nil, false, err
	}
	if red != nil {
		if rm, ok := red.([]any); ok {
			return rm, true, nil
		}
	}
	return msgs, changed, nil
}

// toolCall is a tool call of the model: its id, the tool's name and its arguments as sent (JSON text).
type toolCall struct {
	id, name, args string
}

// input is the step input of the call: its arguments parsed as JSON, the text itself when they are not
// JSON, nil when there are none.
func (t toolCall) input() any {
	if t.args == "" {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(t.args), &v); err != nil {
		return t.args
	}
	return v
}

// chatToolCall reads a Chat Completions tool call ({"id", "type", "function": {"name", "arguments"}}).
func chatToolCall(v any) toolCall {
	m, _ := v.(map[string]any)
	var t toolCall
	t.id, _ = m["id"].(string)
	fn, _ := m["function"].(map[string]any)
	t.name, _ = fn["name"].(string)
	t.args, _ = fn["arguments"].(string)
	if t.name == "" {
		t.name = "unknown"
	}
	return t
}

// argumentsText is the arguments of a tool call after redaction, as JSON text.
func argumentsText(red any) string {
	if s, ok := red.(string); ok {
		return s
	}
	return string(encode(red))
}

// checkChatAnswer checks a non-streamed answer: each choice's text as an llm step at stage post, each of
// its tool calls as a tool step at stage pre. It returns the answer to send (redacted when a control
// redacted it, else raw as received).
func (p *Proxy) checkChatAnswer(c *call, raw []byte) ([]byte, error) {
	top, err := decodeObject(raw, "the upstream's answer")
	if err != nil {
		return nil, &clientError{status: http.StatusBadGateway, code: "upstream_invalid", msg: "guard proxy: " + err.Error()}
	}
	var choices []any
	if _, err := member(top, "choices", &choices); err != nil {
		return nil, &clientError{status: http.StatusBadGateway, code: "upstream_invalid", msg: "guard proxy: the upstream's answer: " + err.Error()}
	}
	changed := false
	for _, ch := range choices {
		cm, _ := ch.(map[string]any)
		msg, _ := cm["message"].(map[string]any)
		if msg == nil {
			continue
		}
		text, _ := msg["content"].(string)
		step := &guard.Step{Type: "llm", Name: c.api, Output: text, Context: c.stepContext(true)}
		red, err := p.check(c, KindLLMPost, step, guard.StagePost)
		if err != nil {
			return nil, err
		}
		if red != nil {
			msg["content"] = red
			changed = true
		}
		tcs, _ := msg["tool_calls"].([]any)
		for _, tc := range tcs {
			t := chatToolCall(tc)
			step := &guard.Step{Type: "tool", Name: t.name, Input: t.input(), Context: c.stepContext(true)}
			red, err := p.check(c, KindToolPre, step, guard.StagePre)
			if err != nil {
				return nil, err
			}
			if red != nil {
				tcm := tc.(map[string]any)
				tcm["function"].(map[string]any)["arguments"] = argumentsText(red)
				changed = true
			}
		}
	}
	if !changed {
		return raw, nil
	}
	top["choices"] = jsontext.Value(encode(choices))
	return encode(top), nil
}
