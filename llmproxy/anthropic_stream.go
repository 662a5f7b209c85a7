package llmproxy

import (
	"io"
	"net/http"

	"github.com/go-json-experiment/json"
	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
)

// anthropicEvent is what the proxy reads of a Messages stream event.
type anthropicEvent struct {
	Type         string         `json:"type"`
	Index        int            `json:"index"`
	ContentBlock map[string]any `json:"content_block"`
	Delta        struct {
		Type        string  `json:"type"`
		Text        *string `json:"text"`
		PartialJSON *string `json:"partial_json"`
	} `json:"delta"`
}

// anthropicBlock is a content block of a streamed message the proxy holds.
type anthropicBlock struct {
	text  *textWindow    // a text block: its held text
	start map[string]any // a tool_use block: its content_block_start, held
	args  []byte
}

// messagesStream relays a streamed message: text blocks window by window, each tool_use block once whole
// and checked (its start, one input_json_delta with the whole input, its stop); other events as
// received. A refusal ends the stream with an "error" event, which the official clients raise.
func (p *Proxy) messagesStream(w http.ResponseWriter, c *call, resp *http.Response) {
	copyHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	out := newSSEWriter(w)
	rd := newSSEReader(resp.Body, int(min(p.cfg.MaxResponseBytes, 16<<20)))
	blocks := map[int]*anthropicBlock{}
	stop := func(err error) {
		ce := asClientError(err)
		if ce.block != nil {
			p.cfg.Metrics.call(apiMessages, "refused")
		} else {
			p.cfg.Metrics.call(apiMessages, "stream_error")
		}
		_ = out.send("error", errorBody(formatAnthropic, ce))
	}
	textDelta := func(idx int, s string) error {
		return out.send("content_block_delta", encode(map[string]any{"type": "content_block_delta", "index": idx,
			"delta": map[string]any{"type": "text_delta", "text": s}}))
	}
	for {
		ev, err := rd.next()
		if err == io.EOF {
			return
		}
		if err != nil {
			if c.r.Context().Err() != nil {
				p.cfg.Metrics.call(apiMessages, "client_gone")
				return
			}
			p.log.Warn("upstream stream failed", zap.String("api", apiMessages), zap.Error(err))
			stop(&clientError{status: http.StatusBadGateway, code: "upstream_stream_error", msg: "guard proxy: the upstream's stream broke off"})
			return
		}
		var e anthropicEvent
		if ev.event != "error" {
			if _, err := decodeObject(ev.data, "a stream event"); err != nil || json.Unmarshal(ev.data, &e) != nil {
				stop(&clientError{status: http.StatusBadGateway, code: "upstream_invalid", msg: "guard proxy: the upstream sent an event that is not JSON"})
				return
			}
		}
		relay := true
		switch e.Type {
		case "content_block_start":
			switch e.ContentBlock["type"] {
			case "text":
				b := &anthropicBlock{text: newTextWindow(p.cfg.Window, p.cfg.Overlap, int(p.cfg.MaxResponseBytes))}
				if s, _ := e.ContentBlock["text"].(string); s != "" {
					b.text.add(s)
					e.ContentBlock["text"] = ""
					relay = false
					if err := out.send(ev.event, encode(map[string]any{"type": e.Type, "index": e.Index, "content_block": e.ContentBlock})); err != nil {
						return
					}
				}
				blocks[e.Index] = b
			case "tool_use", "server_tool_use":
				blocks[e.Index] = &anthropicBlock{start: e.ContentBlock}
				relay = false
			}
		case "content_block_delta":
			b := blocks[e.Index]
			switch {
			case b == nil:
			case b.text != nil && e.Delta.Text != nil:
				relay = false
				b.text.add(*e.Delta.Text)
				if b.text.ready() {
					rel, err := p.checkWindow(c, b.text, c.api)
					if err != nil {
						stop(err)
						return
					}
					if rel != "" {
						if err := textDelta(e.Index, rel); err != nil {
							return
						}
					}
				}
			case b.start != nil && e.Delta.PartialJSON != nil:
				relay = false
				b.args = append(b.args, *e.Delta.PartialJSON...)
				if int64(len(b.args)) > p.cfg.MaxResponseBytes {
					stop(&clientError{status: http.StatusBadGateway, code: "upstream_too_large", msg: "guard proxy: the streamed tool input is larger than the proxy's limit"})
					return
				}
			}
		case "content_block_stop":
			b := blocks[e.Index]
			switch {
			case b == nil:
			case b.text != nil:
				rest, err := p.finishText(c, b.text, c.api)
				if err != nil {
					stop(err)
					return
				}
				if rest != "" {
					if err := textDelta(e.Index, rest); err != nil {
						return
					}
				}
			case b.start != nil:
				name, _ := b.start["name"].(string)
				t := toolCall{name: name, args: string(b.args)}
				if t.args == "" {
					t.args = "{}"
				}
				step := &guard.Step{Type: "tool", Name: name, Input: t.input(), Context: c.stepContext(true)}
				red, err := p.check(c, KindToolPre, step, guard.StagePre)
				if err != nil {
					stop(err)
					return
				}
				args := t.args
				if red != nil {
					args = argumentsText(red)
				}
				if out.send("content_block_start", encode(map[string]any{"type": "content_block_start", "index": e.Index, "content_block": b.start})) != nil ||
					out.send("content_block_delta", encode(map[string]any{"type": "content_block_delta", "index": e.Index,
						"delta": map[string]any{"type": "input_json_delta", "partial_json": args}})) != nil {
					return
				}
			}
			delete(blocks, e.Index)
		case "message_stop":
			p.cfg.Metrics.call(apiMessages, "forwarded")
		}
		if relay {
			if err := out.send(ev.event, ev.data); err != nil {
				return
			}
		}
		if ev.event == "error" {
			return
		}
	}
}
