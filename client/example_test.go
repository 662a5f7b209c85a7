package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
)

// Init registers the agent with the server of GUARD_URL (default http://localhost:8000) and loads its
// controls. Protect then checks each call.
func ExampleInit() {
	ctx := context.Background()
	agent, err := client.Init(ctx, client.Config{
		AgentName:   "support-bot",
		Description: "answers customer questions",
		Steps: []guard.StepSchema{
			{Type: "llm", Name: "answer"},
			{Type: "tool", Name: "lookup_order"},
		},
		Metadata: map[string]any{"team": "support"},
	})
	if err != nil {
		log.Fatal(err) // a 4xx from the server: bad key, bad name, strict-mode conflict
	}
	defer agent.Close()
	fmt.Println("controls from", agent.Source())
}

// A protected function is checked before the call (input) and after it (output). Here the server is not
// running, so the agent starts from its controls file.
func ExampleProtect() {
	dir, _ := os.MkdirTemp("", "guard-example")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "controls.yaml")
	_ = os.WriteFile(file, []byte(`controls:
  - name: block-ssn
    data:
      scope: {stages: [pre]}
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: '\b\d{3}-\d{2}-\d{4}\b'}}}
      action: {decision: deny}
`), 0o600)

	agent, err := client.Init(context.Background(), client.Config{
		AgentName:       "example-agent",
		ServerURL:       "http://127.0.0.1:1", // nothing listens there
		ControlsFile:    file,
		RefreshInterval: client.NoRefresh,
		Observability:   client.Bool(false),
		Log:             client.LogConfig{Enabled: client.Bool(false)},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()

	answer := func(_ context.Context, prompt string) (string, error) { return "echo: " + prompt, nil }
	protected := client.Protect(agent, answer, client.StepName("answer"), client.StepType("llm"))

	out, err := protected(context.Background(), "hello")
	fmt.Println(out, err)

	_, err = protected(context.Background(), "my SSN is 123-45-6789")
	var deny *guard.ControlViolationError
	if errors.As(err, &deny) {
		fmt.Println("denied by", deny.ControlName)
	}
	// Output:
	// echo: hello <nil>
	// denied by block-ssn
}

// The HTTP client scripts the service: create a control, link it to an agent.
func ExampleHTTPClient() {
	ctx := context.Background()
	c, err := client.NewHTTPClient("http://localhost:8000", os.Getenv("GUARD_ADMIN_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	h, err := c.HealthCheck(ctx)
	if errors.Is(err, client.ErrUnreachable) {
		log.Fatal("server not running")
	}
	fmt.Println(h.Status, h.Version)

	id, err := c.CreateControl(ctx, "no-drop-table", &guard.ControlData{
		Enabled:   true,
		Scope:     guard.Scope{StepTypes: []string{"tool"}, Stages: []guard.Stage{guard.StagePre}},
		Condition: guard.Condition{Selector: &guard.Selector{Path: "input.query"}, Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": `(?i)drop\s+table`}}},
		Action:    guard.Action{Decision: guard.DecisionDeny},
	})
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		log.Fatalf("%d %s: %v", apiErr.Status, apiErr.Code, apiErr.Problems)
	}
	if err := c.LinkControl(ctx, "support-bot", id); err != nil {
		log.Fatal(err)
	}
}
