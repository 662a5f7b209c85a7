package openaiguard_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/guardrail-control/guard/client/openaiguard"
)

// cannedTransport answers every request with the same chat completion, without a network.
type cannedTransport struct{ body []byte }

func (c cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(bytes.NewReader(c.body)), Request: r}, nil
}

// BenchmarkChatCompletion measures one allowed chat completion through the OpenAI client with a canned
// transport (no network), without the middleware and with it (three regex controls in-process, two at
// pre, one at post): the middleware's cost per call is the difference.
func BenchmarkChatCompletion(b *testing.B) {
	tr := cannedTransport{body: []byte(`{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Paris is the capital of France."}}]}`)}
	p := params("What is the capital of France? Answer in one sentence, please.")
	run := func(b *testing.B, opts ...option.RequestOption) {
		oa := openai.NewClient(append([]option.RequestOption{option.WithBaseURL("http://api.invalid/v1"), option.WithAPIKey("k"),
			option.WithHTTPClient(&http.Client{Transport: tr})}, opts...)...)
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := oa.Chat.Completions.New(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("bare", func(b *testing.B) { run(b) })
	b.Run("guarded", func(b *testing.B) {
		chk := newChecker(b)
		chk.quiet = true
		run(b, option.WithMiddleware(openaiguard.Middleware(chk)))
	})
}

// BenchmarkMiddleware measures the middleware alone around a next that answers a canned completion: read
// and decode the request's messages, the pre check, decode the answer's content, the post check.
func BenchmarkMiddleware(b *testing.B) {
	reqBody := []byte(`{"model":"m","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"What is the capital of France? Answer in one sentence, please."}]}`)
	resBody := []byte(`{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Paris is the capital of France."}}]}`)
	next := func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(bytes.NewReader(resBody)), Request: r}, nil
	}
	chk := newChecker(b)
	chk.quiet = true
	mw := openaiguard.Middleware(chk)
	b.ReportAllocs()
	for b.Loop() {
		req, err := http.NewRequest(http.MethodPost, "http://api.invalid/v1/chat/completions", bytes.NewReader(reqBody))
		if err != nil {
			b.Fatal(err)
		}
		res, err := mw(req, next)
		if err != nil {
			b.Fatal(err)
		}
		_ = res.Body.Close()
	}
}
