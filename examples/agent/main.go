// Command agent is a small agent protected by guard: an LLM call and a tool call wrapped with
// client.Protect, against a server started with
//
//	go run ./examples/server serve --migrate
//
// It first sets up two controls through the admin API (a deny on US social security numbers in the
// prompt, a steer on destructive SQL given to the tool), links them to the agent, and then shows an
// allowed call, a denied one and a steered one.
//
//	go run ./examples/agent [-url http://localhost:8000] [-key KEY] [-admin-key ADMIN_KEY]
//
// The keys default to GUARD_API_KEY and GUARD_ADMIN_API_KEY; they are only needed when the server runs
// with GUARD_API_KEY_ENABLED=true.
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

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		cancel()
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// SQLQuery is the input of the tool.
type SQLQuery struct {
	Query string `json:"query"`
}

// run is the whole demo: it parses args (without the program name), talks to the server and prints
// what happens to stdout.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	url := fs.String("url", envOr(client.EnvURL, client.DefaultServerURL), "guard server URL")
	key := fs.String("key", os.Getenv(client.EnvAPIKey), "API key of the agent (runtime)")
	adminKey := fs.String("admin-key", os.Getenv("GUARD_ADMIN_API_KEY"), "admin API key, to create the demo controls")
	if err := fs.Parse(args); err != nil {
		return err
	}

	// 1. Register the agent with its two steps.
	agent, err := client.Init(ctx, client.Config{
		AgentName:   "demo-agent",
		Description: "guard client library demo",
		Version:     "1.0.0",
		ServerURL:   *url,
		APIKey:      *key,
		Steps: []guard.StepSchema{
			{Type: "llm", Name: "chat", Description: "answers a user prompt"},
			{Type: "tool", Name: "run_sql", Description: "runs a SQL query",
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}}},
		},
		Metadata: map[string]any{"team": "demo"},
		Log:      client.LogConfig{Enabled: client.Bool(false)},
	})
	if err != nil {
		return err
	}
	defer agent.Close()
	if agent.Source() != client.SourceServer {
		return fmt.Errorf("the server at %s could not be reached; start it with: go run ./examples/server serve --migrate", *url)
	}

	// 2. Create (or reset) the demo controls and link them, as an administrator would.
	admin, err := client.NewHTTPClient(*url, firstNonEmpty(*adminKey, *key))
	if err != nil {
		return err
	}
	for _, c := range demoControls() {
		id, err := upsertControl(ctx, admin, c.Name, c.Data)
		if err != nil {
			return fmt.Errorf("control %s: %w", c.Name, err)
		}
		if err := admin.LinkControl(ctx, agent.Name(), id); err != nil {
			return fmt.Errorf("link %s: %w", c.Name, err)
		}
		fmt.Fprintf(stdout, "control %-18s id %d linked to %s\n", c.Name, id, agent.Name())
	}
	if err := agent.Refresh(ctx); err != nil {
		return err
	}

	// 3. Protect the functions and call them.
	chat := client.Protect(agent, fakeLLM, client.StepName("chat"), client.StepType("llm"))
	runSQL := client.Protect(agent, fakeSQL, client.StepName("run_sql"), client.StepType("tool"))

	show := func(label string, call func() (any, error)) { report(stdout, label, call) }
	show("chat: allowed", func() (any, error) { return chat(ctx, "What is the capital of France?") })
	show("chat: denied", func() (any, error) { return chat(ctx, "My SSN is 123-45-6789, remember it") })
	show("run_sql: allowed", func() (any, error) { return runSQL(ctx, SQLQuery{Query: "SELECT name FROM users LIMIT 5"}) })
	show("run_sql: steered", func() (any, error) { return runSQL(ctx, SQLQuery{Query: "DELETE FROM users"}) })
	return nil
}

func demoControls() []guard.Control {
	return []guard.Control{
		{Name: "demo-deny-ssn", Data: guard.ControlData{
			Description: "No social security numbers in prompts",
			Enabled:     true,
			Execution:   guard.ExecutionServer,
			Scope:       guard.Scope{StepTypes: []string{"llm"}, Stages: []guard.Stage{guard.StagePre}},
			Condition: guard.Condition{Selector: &guard.Selector{Path: "input"},
				Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": `\b\d{3}-\d{2}-\d{4}\b`}}},
			Action: guard.Action{Decision: guard.DecisionDeny, Metadata: map[string]any{"reason": "PII"}},
		}},
		{Name: "demo-steer-sql", Data: guard.ControlData{
			Description: "Destructive SQL needs a confirmation",
			Enabled:     true,
			Execution:   guard.ExecutionSDK,
			Scope:       guard.Scope{StepNames: []string{"run_sql"}, Stages: []guard.Stage{guard.StagePre}},
			Condition: guard.Condition{Selector: &guard.Selector{Path: "input.query"},
				Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": `^\s*(DELETE|DROP|TRUNCATE)\b`, "flags": []any{"I"}}}},
			Action: guard.Action{Decision: guard.DecisionSteer, SteeringContext: &guard.SteeringContext{
				Message:         "Destructive statements are not run directly.",
				RequiredActions: []string{"ask the user to confirm", "use a soft delete"},
			}},
		}},
	}
}

// upsertControl creates the control, or finds the existing one with that name and resets its data.
func upsertControl(ctx context.Context, c *client.HTTPClient, name string, data guard.ControlData) (int64, error) {
	id, err := c.CreateControl(ctx, name, &data)
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Code != "CONTROL_NAME_CONFLICT" {
		return id, err
	}
	page, err := c.ListControls(ctx, client.ControlListOptions{Name: name, PageOptions: client.PageOptions{Limit: 100}})
	if err != nil {
		return 0, err
	}
	for _, s := range page.Controls {
		if s.Name == name {
			if _, err := c.PutControlData(ctx, s.ID, data); err != nil {
				return 0, err
			}
			return s.ID, nil
		}
	}
	return 0, fmt.Errorf("a control named %s exists but is not in the first page of the list", name)
}

func fakeLLM(_ context.Context, prompt string) (string, error) {
	return "(model) you said: " + prompt, nil
}

func fakeSQL(_ context.Context, q SQLQuery) ([]string, error) {
	return []string{"ada", "grace"}, nil
}

// report prints the outcome of one protected call.
func report(w io.Writer, label string, call func() (any, error)) {
	out, err := call()
	var deny *guard.ControlViolationError
	var steer *guard.ControlSteerError
	switch {
	case errors.As(err, &deny):
		fmt.Fprintf(w, "%-18s DENIED by %s\n", label, deny.ControlName)
	case errors.As(err, &steer):
		fmt.Fprintf(w, "%-18s STEERED by %s: %s (required: %s)\n", label, steer.ControlName,
			steer.SteeringContext.Message, strings.Join(steer.SteeringContext.RequiredActions, "; "))
	case err != nil:
		fmt.Fprintf(w, "%-18s error: %v\n", label, err)
	default:
		fmt.Fprintf(w, "%-18s ok: %v\n", label, out)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
