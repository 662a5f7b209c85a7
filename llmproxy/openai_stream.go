package llmproxy

import (
	"io"
	"net/http"
	"sort"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
)

// chatChunk is what the proxy reads of a chat.completion.chunk.
type chatChunk struct {
	Error   jsontext.Value `json:"error"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      *string `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int     `json:"index"`
				ID       *string `json:"id"`
				Type     *string `json:"type"`
				Function *struct {
					Name      *string `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

// chatChoice is the state of one choice of a streamed answer: its held text and tool calls.
type chatChoice struct {
	text     *textWindow
	tools    map[int]*streamTool
	held     int // bytes of tool-call arguments held
	finished bool
}

// streamTool is a tool call assembled from its fragments.
type streamTool struct {
	index         int
	id, typ, name string
	args          []byte
}

// chatStream relays a streamed chat completion: text is released window by window once checked, tool
// calls once assembled and checked, the end of a choice (its finish_reason) once its last window and the
// answer as a whole passed. A refusal ends the stream with an error event in the API's format
// ({"error": {...}}), which the official clients raise as an error, and cancels the upstream call.
func (p *Proxy) chatStream(w http.ResponseWriter, c *call, resp *http.Response) {
	copyHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	out := newSSEWriter(w)
	rd := newSSEReader(resp.Body, int(min(p.cfg.MaxResponseBytes, 16<<20)))
	var tmpl map[string]jsontext.Value // the first chunk's members but choices and usage: the released chunks' frame
	choices := map[int]*chatChoice{}
	stop := func(err error) {
		ce := asClientError(err)
		if ce.block != nil {
			p.cfg.Metrics.call(apiChat, "refused")
		} else {
			p.cfg.Metrics.call(apiChat, "stream_error")
		}
		_ = out.send("", errorBody(formatOpenAI, ce))
	}
	emit := func(idx int, delta map[string]any, finish any) error {
		m := make(map[string]any, len(tmpl)+1)
		for k, v := range tmpl {
			m[k] = v
		}
		m["choices"] = []any{map[string]any{"index": idx, "delta": delta, "finish_reason": finish, "logprobs": nil}}
		return out.send("", encode(m))
	}
	finish := func(idx int, ch *chatChoice, reason any) error {
		ch.finished = true
		rest, err := p.finishText(c, ch.text, c.api)
		if err != nil {
			return err
		}
		tools := make([]*streamTool, 0, len(ch.tools))
		for _, t := range ch.tools {
			tools = append(tools, t)
		}
		sort.Slice(tools, func(i, j int) bool { return tools[i].index < tools[j].index })
		for _, t := range tools {
			tc := toolCall{id: t.id, name: t.name, args: string(t.args)}
			if tc.name == "" {
				tc.name = "unknown"
			}
			step := &guard.Step{Type: "tool", Name: tc.name, Input: tc.input(), Context: c.stepContext(true)}
			red, err := p.check(c, KindToolPre, step, guard.StagePre)
			if err != nil {
				return err
			}
			if red != nil {
				t.args = []byte(argumentsText(red))
			}
		}
		// Everything passed: release the rest of the text, the tool calls whole, then the end.
		if rest != "" {
			if err := emit(idx, map[string]any{"content": rest}, nil); err != nil {
				return err
			}
		}
		for _, t := range tools {
			typ := t.typ
			if typ == "" {
				typ = "function"
			}
			d := map[string]any{"tool_calls": []any{map[string]any{"index": t.index, "id": t.id, "type": typ,
				"function": map[string]any{"name": t.name, "arguments": string(t.args)}}}}
			if err := emit(idx, d, nil); err != nil {
				return err
			}
		}
		if reason != nil {
			return emit(idx, map[string]any{}, reason)
		}
		return nil
	}
	finishAll := func() error {
		idxs := make([]int, 0, len(choices))
		for i, ch := range choices {
			if !ch.finished {
				idxs = append(idxs, i)
			}
		}
		sort.Ints(idxs)
		for _, i := range idxs {
			if err := finish(i, choices[i], nil); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		ev, err := rd.next()
		if err == io.EOF {
			if err := finishAll(); err != nil {
				stop(err)
			}
			return
		}
		if err != nil {
			if c.r.Context().Err() != nil {
				p.cfg.Metrics.call(apiChat, "client_gone")
				return // the client went away: the upstream call is cancelled with its context
			}
			p.log.Warn("upstream stream failed", zap.String("api", apiChat), zap.Error(err))
			stop(&clientError{status: http.StatusBadGateway, code: "upstream_stream_error", msg: "guard proxy: the upstream's stream broke off"})
			return
		}
		if string(ev.data) == "[DONE]" {
			if err := finishAll(); err != nil {
				stop(err)
				return
			}
			_ = out.send(ev.event, ev.data)
			p.cfg.Metrics.call(apiChat, "forwarded")
			return
		}
		var chunk chatChunk
		if err := json.Unmarshal(ev.data, &chunk); err != nil {
			stop(&clientError{status: http.StatusBadGateway, code: "upstream_invalid", msg: "guard proxy: the upstream sent a chunk that is not a chat.completion.chunk"})
			return
		}
		if chunk.Error != nil {
			_ = out.send(ev.event, ev.data) // the upstream's own error event
			return
		}
		if tmpl == nil {
			// The first chunk's members but choices and usage: the frame of the chunks the proxy writes.
			top, err := decodeObject(ev.data, "a streamed chunk")
			if err != nil {
				stop(&clientError{status: http.StatusBadGateway, code: "upstream_invalid", msg: "guard proxy: the upstream sent " + err.Error()})
				return
			}
			tmpl = make(map[string]jsontext.Value, len(top))
			for k, v := range top {
				if k != "choices" && k != "usage" {
					tmpl[k] = v
				}
			}
		}
		relay := true
		for _, chc := range chunk.Choices {
			d := chc.Delta
			if d.Content == nil && len(d.ToolCalls) == 0 && chc.FinishReason == nil {
				continue
			}
			relay = false
			ch := choices[chc.Index]
			if ch == nil {
				ch = &chatChoice{text: newTextWindow(p.cfg.Window, p.cfg.Overlap, int(p.cfg.MaxResponseBytes)), tools: map[int]*streamTool{}}
				choices[chc.Index] = ch
			}
			if d.Role != nil {
				if err := emit(chc.Index, map[string]any{"role": *d.Role, "content": ""}, nil); err != nil {
					return
				}
			}
			if d.Content != nil && *d.Content != "" {
				ch.text.add(*d.Content)
				if ch.text.ready() {
					rel, err := p.checkWindow(c, ch.text, c.api)
					if err != nil {
						stop(err)
						return
					}
					if rel != "" {
						if err := emit(chc.Index, map[string]any{"content": rel}, nil); err != nil {
							return
						}
					}
				}
			}
			for _, tc := range d.ToolCalls {
				t := ch.tools[tc.Index]
				if t == nil {
					t = &streamTool{index: tc.Index}
					ch.tools[tc.Index] = t
				}
				if tc.ID != nil {
					t.id = *tc.ID
				}
				if tc.Type != nil {
					t.typ = *tc.Type
				}
				if tc.Function != nil {
					if tc.Function.Name != nil {
						t.name += *tc.Function.Name
					}
					if tc.Function.Arguments != nil {
						t.args = append(t.args, *tc.Function.Arguments...)
						ch.held += len(*tc.Function.Arguments)
					}
				}
				if int64(ch.held) > p.cfg.MaxResponseBytes {
					stop(&clientError{status: http.StatusBadGateway, code: "upstream_too_large", msg: "guard proxy: the streamed tool-call arguments are larger than the proxy's limit"})
					return
				}
			}
			if chc.FinishReason != nil {
				if err := finish(chc.Index, ch, *chc.FinishReason); err != nil {
					stop(err)
					return
				}
			}
		}
		if relay {
			// Nothing to hold (the role, a usage chunk, an empty delta): as received.
			if err := out.send(ev.event, ev.data); err != nil {
				return
			}
		}
	}
}
