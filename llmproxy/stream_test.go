package llmproxy_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/guardrail-control/guard/llmproxy"
	"github.com/guardrail-control/guard/llmproxy/fakellm"
)

func streamText(t *testing.T, rg *rig) (string, []string, error) {
	t.Helper()
	st := rg.oa.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var acc openai.ChatCompletionAccumulator
	var deltas []string
	for st.Next() {
		ch := st.Current()
		acc.AddChunk(ch)
		if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			deltas = append(deltas, ch.Choices[0].Delta.Content)
		}
	}
	if len(acc.Choices) == 0 {
		return "", deltas, st.Err()
	}
	return acc.Choices[0].Message.Content, deltas, st.Err()
}

// TestStreamWindows: text is released in windows (never more than Window bytes held), redaction works
// wherever the window edges fall, and a deny releases nothing of the window it is in.
func TestStreamWindows(t *testing.T) {
	const window, overlap = 64, 32
	key := "sk-abcdefghij0123456789"
	filler := strings.Repeat("lorem ipsum ", 30) // 360 bytes
	for offset := 0; offset < 80; offset += 3 {
		text := filler[:40+offset] + key + filler
		rg := newRig(t, func(c *llmproxy.Config) { c.Window, c.Overlap = window, overlap })
		rg.fake.Script(func(*fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: text, Chunk: 5} })
		got, deltas, err := streamText(t, rg)
		if err != nil {
			t.Fatalf("offset %d: %v", offset, err)
		}
		want := strings.Replace(text, key, "[KEY]", 1)
		if got != want {
			t.Fatalf("offset %d: got %q, want %q", offset, got, want)
		}
		if len(deltas) < 3 {
			t.Fatalf("offset %d: %d deltas: the text was not released window by window", offset, len(deltas))
		}
		for _, d := range deltas {
			if strings.Contains(d, "sk-") {
				t.Fatalf("offset %d: a delta leaked part of the key: %q", offset, d)
			}
		}
	}
}

func TestStreamDenyMidway(t *testing.T) {
	rg := newRig(t, func(c *llmproxy.Config) { c.Window, c.Overlap = 64, 16 })
	text := strings.Repeat("fine words ", 20) + "FORBIDDEN" + strings.Repeat(" more", 40)
	rg.fake.Script(func(*fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: text, Chunk: 4} })
	got, _, err := streamText(t, rg)
	var se *ssestream.StreamError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "guard_denied") {
		t.Fatalf("err = %v, want the error event", err)
	}
	if strings.Contains(got, "FORB") || !strings.HasPrefix(text, got) {
		t.Fatalf("released %q", got)
	}
	if len(got) == 0 {
		t.Fatal("nothing released before the denied window: the stream was held whole")
	}
}

// TestStreamClientGone: a client that leaves mid-stream cancels the upstream call.
func TestStreamClientGone(t *testing.T) {
	rg := newRig(t, nil)
	rg.fake.Script(func(*fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Text: strings.Repeat("x", 100000), Chunk: 10, Delay: time.Millisecond}
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", rg.proxy.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil { // the role chunk: the stream is on
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-rg.fake.Last().Cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream call was not cancelled")
	}
}

// TestStreamToolArgumentsHeld: no fragment of a tool call's arguments is released before the call is
// checked whole; a denied call releases none.
func TestStreamToolArgumentsHeld(t *testing.T) {
	rg := newRig(t, nil)
	rg.fake.Script(func(*fakellm.Request) fakellm.Reply {
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "delete_file", Arguments: `{"path":"/etc/shadow","force":true}`}}, Chunk: 3}
	})
	st := rg.oa.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	for st.Next() {
		if ch := st.Current(); len(ch.Choices) > 0 && len(ch.Choices[0].Delta.ToolCalls) > 0 {
			t.Fatalf("a tool-call fragment was released: %+v", ch.Choices[0].Delta.ToolCalls)
		}
	}
	if err := st.Err(); err == nil || !strings.Contains(err.Error(), "delete_file") {
		t.Fatalf("err = %v, want the refusal naming the tool", err)
	}
}
