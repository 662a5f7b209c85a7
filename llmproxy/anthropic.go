package llmproxy

import (
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

	guard "github.com/guardrail-control/guard"
)

const apiMessages = "anthropic.messages"

// messages is POST /v1/messages (Anthropic Messages API).
func (p *Proxy) messages(w http.ResponseWriter, r *http.Request) {
	c, top, err := p.begin(w, r, apiMessages)
	if err != nil {
		p.fail(w, apiMessages, formatAnthropic, err)
		return
	}
	var msgs []any
	if ok, err := member(top, "messages", &msgs); err != nil || !ok {
		if err == nil {
			err = badRequest(`"messages" is required`)
		}
		p.fail(w, apiMessages, formatAnthropic, err)
		return
	}
	var system any
	hasSystem, err := member(top, "system", &system)
	if err != nil {
		p.fail(w, apiMessages, formatAnthropic, err)
		return
	}
	var stream bool
	if _, err := member(top, "stream", &stream); err != nil {
		p.fail(w, apiMessages, formatAnthropic, err)
		return
	}
	_, _ = member(top, "model", &c.model)
	sys, out, changed, err := p.checkAnthropicMessages(c, system, hasSystem, msgs)
	if err != nil {
		p.fail(w, apiMessages, formatAnthropic, err)
		return
	}
	body := c.body
	if changed {
		top["messages"] = encode(out)
		if hasSystem {
			top["system"] = encode(sys)
		}
		body = encode(top)
	}
	ctx, cancel := p.upstreamContext(r.Context(), stream)
	defer cancel()
	resp, err := p.forward(ctx, p.anthropic, r, PathMessages, body)
	if err != nil {
		p.fail(w, apiMessages, formatAnthropic, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		p.passError(w, apiMessages, formatAnthropic, resp, p.anthropic.Host)
		return
	}
	if isEventStream(resp) {
		p.messagesStream(w, c, resp)
		return
	}
	raw, err := readUpstream(resp, p.cfg.MaxResponseBytes, p.anthropic.Host)
	if err != nil {
		p.fail(w, apiMessages, formatAnthropic, err)
		return
	}
	if raw, err = p.checkAnthropicAnswer(c, raw); err != nil {
		p.fail(w, apiMessages, formatAnthropic, err)
		return
	}
	copyHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(raw)
	p.cfg.Metrics.call(apiMessages, "forwarded")
}

// checkAnthropicMessages checks the request: each tool_result block the model has not read yet (in the
// messages after the last assistant message) as a tool step at stage post, then the messages, the
// system prompt first as a {"role": "system"} message, as an llm step at stage pre (the same shape as
// a chat completion's messages, so that one control reads both APIs).
func (p *Proxy) checkAnthropicMessages(c *call, system any, hasSystem bool, msgs []any) (any, []any, bool, error) {
	lastAssistant := -1
	uses := map[string]map[string]any{}
	for i, m := range msgs {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil, nil, false, badRequest("messages[%d] is not an object", i)
		}
		if mm["role"] != "assistant" {
			continue
		}
		lastAssistant = i
		blocks, _ := mm["content"].([]any)
		for _, b := range blocks {
			if bm, _ := b.(map[string]any); bm["type"] == "tool_use" {
				if id, _ := bm["id"].(string); id != "" {
					uses[id] = bm
				}
			}
		}
	}
	changed := false
	for i := lastAssistant + 1; i < len(msgs); i++ {
		blocks, _ := msgs[i].(map[string]any)["content"].([]any)
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			if bm["type"] != "tool_result" {
				continue
			}
			id, _ := bm["tool_use_id"].(string)
			name, input := "unknown", any(nil)
			if u := uses[id]; u != nil {
				if n, _ := u["name"].(string); n != "" {
					name = n
				}
				input = u["input"]
			}
			step := &guard.Step{Type: "tool", Name: name, Input: input, Output: bm["content"], Context: c.stepContext(true)}
			red, err := p.check(c, KindToolPost, step, guard.StagePost)
			if err != nil {
				return nil, nil, false, err
			}
			if red != nil {
				bm["content"] = red
				changed = true
			}
		}
	}
	input := msgs
	if hasSystem {
		input = append([]any{map[string]any{"role": "system", "content": system}}, msgs...)
	}
	step := &guard.Step{Type: "llm", Name: c.api, Input: input, Context: c.stepContext(true)}
	red, err := p.check(c, KindLLMPre, step, guard.StagePre)
	if err != nil {
		return nil, nil, false, err
	}
	if rl, ok := red.([]any); ok && len(rl) == len(input) {
		if hasSystem {
			sm, _ := rl[0].(map[string]any)
			return sm["content"], rl[1:], true, nil
		}
		return system, rl, true, nil
	}
	return system, msgs, changed, nil
}

// checkAnthropicAnswer checks a non-streamed message: each text block as an llm step at stage post (one
// with empty text when there is none), each tool_use block as a tool step at stage pre.
func (p *Proxy) checkAnthropicAnswer(c *call, raw []byte) ([]byte, error) {
	top, err := decodeObject(raw, "the upstream's answer")
	if err != nil {
		return nil, &clientError{status: http.StatusBadGateway, code: "upstream_invalid", msg: "guard proxy: " + err.Error()}
	}
	var content []any
	if _, err := member(top, "content", &content); err != nil {
		return nil, &clientError{status: http.StatusBadGateway, code: "upstream_invalid", msg: "guard proxy: the upstream's answer: " + err.Error()}
	}
	changed, texts := false, 0
	for _, b := range content {
		bm, _ := b.(map[string]any)
		if bm["type"] != "text" {
			continue
		}
		texts++
		text, _ := bm["text"].(string)
		red, err := p.check(c, KindLLMPost, &guard.Step{Type: "llm", Name: c.api, Output: text, Context: c.stepContext(true)}, guard.StagePost)
		if err != nil {
			return nil, err
		}
		if s, ok := red.(string); ok {
			bm["text"] = s
			changed = true
		}
	}
	if texts == 0 {
		if _, err := p.check(c, KindLLMPost, &guard.Step{Type: "llm", Name: c.api, Output: "", Context: c.stepContext(true)}, guard.StagePost); err != nil {
			return nil, err
		}
	}
	for _, b := range content {
		bm, _ := b.(map[string]any)
		if bm["type"] != "tool_use" {
			continue
		}
		name, _ := bm["name"].(string)
		red, err := p.check(c, KindToolPre, &guard.Step{Type: "tool", Name: name, Input: bm["input"], Context: c.stepContext(true)}, guard.StagePre)
		if err != nil {
			return nil, err
		}
		if red != nil {
			bm["input"] = red
			changed = true
		}
	}
	if !changed {
		return raw, nil
	}
	top["content"] = jsontext.Value(encode(content))
	return encode(top), nil
}
