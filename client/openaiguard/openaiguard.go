// Package openaiguard checks the chat completions of the official OpenAI Go client
// (github.com/openai/openai-go/v3) against a guard agent's controls, with one client option:
//
//	agent, _ := client.Init(ctx, client.Config{AgentName: "support-bot", LocalServerControls: true})
//	oa := openai.NewClient(option.WithMiddleware(openaiguard.Middleware(agent)))
//	res, err := oa.Chat.Completions.New(ctx, params)
//	var denied *guard.ControlViolationError
//	if errors.As(err, &denied) { ... }
//
// Each POST .../chat/completions is a step of type "llm" (name "chat.completions" unless StepName says
// otherwise):
//
//   - stage pre, before the request is sent: the step input is the request's "messages" array as sent
//     (a JSON value: select input.0.content, or regex the whole of input). A deny returns
//     *guard.ControlViolationError and a steer *guard.ControlSteerError from the client call, as
//     client.Protect does, and nothing is sent to the API.
//   - stage post, on a successful (2xx) answer: the step output is the "content" of the answer's choices
//     (joined with "\n" when there are several; tool calls and refusals are not part of it). A deny or a
//     steer returns the error instead of the completion.
//   - streaming (NewStreaming): the text deltas are assembled as they pass; the post check runs when the
//     stream ends, before its end ("data: [DONE]") is delivered. A deny or a steer makes the stream stop
//     with the error (stream.Next false, stream.Err the *guard.ControlViolationError): the chunks before it
//     were delivered as they came, so an application that shows tokens as they arrive has shown them. An
//     application that acts on the text only after a clean end of the stream never acts on denied text.
//
// Other requests (embeddings, the Responses API, ...) pass through unchecked. Errors of the check itself
// (not decisions) stop the call too: guard fails closed on its own errors, as Protect does.
//
// The errors are returned so that the OpenAI client does not retry: the middleware answers with a
// response carrying "x-should-retry: false" beside the error, which the client's retry loop honours (a
// denied request is not sent again, a post-stage denial does not buy a second completion).
package openaiguard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3/option"

	"github.com/guardrail-control/guard"
)

// DefaultStepName is the step name of chat completions when no StepName option is given.
const DefaultStepName = "chat.completions"

// Checker is what decides: *client.Agent (its CheckStep evaluates in-process or on the server exactly as
// client.Protect does), or any Guard of client/mcpgateway.
type Checker interface {
	CheckStep(ctx context.Context, step *guard.Step, stage guard.Stage) error
}

// Option configures Middleware.
type Option func(*config)

type config struct {
	stepName string
}

// StepName sets the step name the controls see (default "chat.completions").
func StepName(name string) Option { return func(c *config) { c.stepName = name } }

// maxBody bounds the request and response bodies the middleware reads (32 MiB): a larger body is an
// error rather than unbounded memory.
const maxBody = 32 << 20

// Middleware returns the option.Middleware that checks chat completions with c.
func Middleware(c Checker, opts ...Option) option.Middleware {
	cfg := config{stepName: DefaultStepName}
	for _, o := range opts {
		o(&cfg)
	}
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		if req.Method != http.MethodPost || !strings.HasSuffix(strings.TrimSuffix(req.URL.Path, "/"), "/chat/completions") {
			return next(req)
		}
		ctx := req.Context()
		body, err := requestBody(req)
		if err != nil {
			return stop(req, fmt.Errorf("openaiguard: read the request: %w", err))
		}
		var in struct {
			Messages json.RawMessage `json:"messages"`
			Stream   bool            `json:"stream"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return stop(req, fmt.Errorf("openaiguard: the request body is not a JSON object: %w", err))
		}
		var messages any
		if len(in.Messages) > 0 {
			if err := json.Unmarshal(in.Messages, &messages); err != nil {
				return stop(req, fmt.Errorf("openaiguard: messages: %w", err))
			}
		}
		step := &guard.Step{Type: "llm", Name: cfg.stepName, Input: messages}
		if err := c.CheckStep(ctx, step, guard.StagePre); err != nil {
			return stop(req, err)
		}

		res, err := next(req)
		if err != nil || res.StatusCode < 200 || res.StatusCode > 299 {
			return res, err
		}
		if in.Stream || strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			res.Body = &streamBody{rc: res.Body, sc: newLineReader(res.Body), ctx: ctx, c: c, step: step}
			return res, nil
		}
		raw, err := io.ReadAll(io.LimitReader(res.Body, maxBody+1))
		_ = res.Body.Close()
		if err != nil {
			return stop(req, fmt.Errorf("openaiguard: read the response: %w", err))
		}
		if len(raw) > maxBody {
			return stop(req, fmt.Errorf("openaiguard: the response is larger than %d bytes", maxBody))
		}
		if step.Output, err = completionText(raw); err != nil {
			return stop(req, err)
		}
		if err := c.CheckStep(ctx, step, guard.StagePost); err != nil {
			return stop(req, err)
		}
		res.Body = io.NopCloser(bytes.NewReader(raw))
		return res, nil
	}
}

// requestBody returns the request's body without consuming it (the OpenAI client sets GetBody).
func requestBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return readLimited(rc)
	}
	b, err := readLimited(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return b, nil
}

func readLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err == nil && len(b) > maxBody {
		err = fmt.Errorf("larger than %d bytes", maxBody)
	}
	return b, err
}

// stop ends a call with err. The response beside it tells the OpenAI client's retry loop not to retry
// (with a nil response it would take err for a connection error and send the request again); the client
// then returns err itself.
func stop(req *http.Request, err error) (*http.Response, error) {
	h := http.Header{}
	h.Set("x-should-retry", "false")
	return &http.Response{Status: "403 Forbidden", StatusCode: http.StatusForbidden, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: http.NoBody, Request: req}, err
}

// completionText is the content of a chat completion's choices, joined with "\n".
func completionText(raw []byte) (string, error) {
	var out struct {
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("openaiguard: the completion is not JSON: %w", err)
	}
	parts := make([]string, 0, len(out.Choices))
	for _, ch := range out.Choices {
		if ch.Message.Content != nil {
			parts = append(parts, *ch.Message.Content)
		}
	}
	return strings.Join(parts, "\n"), nil
}
