// Command llmguard asks an OpenAI-compatible chat model one question through the official OpenAI Go client,
// with guard's middleware (client/openaiguard) checking the prompt before it is sent and the answer
// before it is returned.
//
//	OPENAI_API_KEY=... go run ./examples/llmguard [-stream] [-model gpt-4o-mini] [-controls controls.yaml] "question"
//
// The agent "llmguard-demo" registers with the guard server at $GUARD_URL (default http://localhost:8000)
// and evaluates its controls in-process; when the server cannot be reached it starts from the controls
// file given with -controls. OPENAI_BASE_URL points the client at another OpenAI-compatible endpoint.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
	"github.com/guardrail-control/guard/client/openaiguard"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "llmguard:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("llmguard", flag.ContinueOnError)
	model := fs.String("model", "gpt-4o-mini", "the chat model")
	controls := fs.String("controls", "", "controls file, used when the guard server cannot be reached")
	stream := fs.Bool("stream", false, "stream the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	question := strings.Join(fs.Args(), " ")
	if question == "" {
		return errors.New(`usage: llmguard [-stream] [-model M] [-controls FILE] "question"`)
	}

	initCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	agent, err := client.Init(initCtx, client.Config{
		AgentName: "llmguard-demo", Description: "examples/llmguard", ControlsFile: *controls,
		Steps:               []guard.StepSchema{{Type: "llm", Name: openaiguard.DefaultStepName}},
		LocalServerControls: true, // no round trip to the guard server per call
		Log:                 client.LogConfig{Enabled: client.Bool(false)},
	})
	cancel()
	if err != nil {
		return err
	}
	defer agent.Close()

	oa := openai.NewClient(option.WithMiddleware(openaiguard.Middleware(agent)))
	params := openai.ChatCompletionNewParams{Model: *model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(question)}}
	var answer string
	if *stream {
		s := oa.Chat.Completions.NewStreaming(ctx, params)
		var b strings.Builder
		for s.Next() {
			for _, ch := range s.Current().Choices {
				b.WriteString(ch.Delta.Content)
			}
		}
		_ = s.Close()
		answer, err = b.String(), s.Err()
	} else {
		var res *openai.ChatCompletion
		if res, err = oa.Chat.Completions.New(ctx, params); err == nil && len(res.Choices) > 0 {
			answer = res.Choices[0].Message.Content
		}
	}
	return report(out, answer, err)
}

// report prints the answer, or what guard decided instead.
func report(out io.Writer, answer string, err error) error {
	var denied *guard.ControlViolationError
	var steered *guard.ControlSteerError
	switch {
	case errors.As(err, &denied):
		fmt.Fprintf(out, "DENIED by %s: %s\n", denied.ControlName, denied.Message)
	case errors.As(err, &steered):
		fmt.Fprintf(out, "STEERED by %s: %s (required: %s)\n", steered.ControlName, steered.SteeringContext.Message,
			strings.Join(steered.SteeringContext.RequiredActions, "; "))
	case err != nil:
		return err
	default:
		fmt.Fprintln(out, answer)
	}
	return nil
}
