package mcpgateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
)

// benchGuardControls are three regex controls on the echo tool that an allowed call does not match.
func benchGuardControls() []guard.AgentControl {
	mk := func(id int64, name, path, pattern string, stage guard.Stage) guard.AgentControl {
		return guard.AgentControl{ID: id, ControlID: id, Name: name, Enabled: true, Control: guard.ControlData{
			Enabled: true, Execution: guard.ExecutionServer,
			Scope: guard.Scope{StepTypes: []string{"tool"}, StepNames: []string{"echo"}, Stages: []guard.Stage{stage}},
			Condition: guard.Condition{Selector: &guard.Selector{Path: path},
				Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": pattern}}},
			Action: guard.Action{Decision: guard.DecisionDeny},
		}}
	}
	return []guard.AgentControl{
		mk(1, "no-rm", "input.text", `rm\s+-rf`, guard.StagePre),
		mk(2, "no-ssn-in", "input", `\d{3}-\d{2}-\d{4}`, guard.StagePre),
		mk(3, "no-ssn-out", "output", `\d{3}-\d{2}-\d{4}`, guard.StagePost),
	}
}

// benchServer is the least of a guard server an agent needs: health, initAgent, its controls, and an
// events endpoint that discards what it gets.
func benchServer(tb testing.TB) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"status":"healthy","version":"bench"}`))
	})
	mux.HandleFunc("POST /api/v1/agents/initAgent", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{"created":true,"agent":{"agent_name":"bench"},"controls":[]}`))
	})
	mux.HandleFunc("GET /api/v1/agents/{name}/controls", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"controls": benchGuardControls()})
	})
	mux.HandleFunc("POST /api/v1/observability/events", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"received":0,"enqueued":0,"dropped":0}`))
	})
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv
}

// BenchmarkChecks measures the gateway's own work on an allowed tools/call, without the MCP transport:
// decoding the arguments into the step input, the pre check, building the step output from the result
// and the post check. "agent" is an agent of a guard server with its controls cached and evaluated
// in-process (the default of guard mcp, events on); "local" is a controls file (LocalGuard).
func BenchmarkChecks(b *testing.B) {
	raw := json.RawMessage(`{"text":"list the files in the current directory","path":"/home/user/project"}`)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "README.md\nmain.go\ngo.mod"}}}
	run := func(b *testing.B, gd Guard) {
		g := &Gateway{gd: gd}
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			args, err := decodeArguments(raw)
			if err != nil {
				b.Fatal(err)
			}
			step := guard.Step{Type: StepType, Name: "echo", Input: args}
			if blocked, err := g.check(ctx, &step, guard.StagePre); blocked != nil || err != nil {
				b.Fatal(blocked, err)
			}
			if step.Output, err = StepOutput(res); err != nil {
				b.Fatal(err)
			}
			if blocked, err := g.check(ctx, &step, guard.StagePost); blocked != nil || err != nil {
				b.Fatal(blocked, err)
			}
		}
	}
	b.Run("agent", func(b *testing.B) {
		srv := benchServer(b)
		a, err := client.Init(context.Background(), client.Config{AgentName: "bench", ServerURL: srv.URL,
			LocalServerControls: true, RefreshInterval: client.NoRefresh, Observability: client.Bool(true),
			Log: client.LogConfig{Enabled: client.Bool(false)}})
		if err != nil {
			b.Fatal(err)
		}
		defer a.Close()
		if len(a.Controls()) != 3 {
			b.Fatalf("agent has %d controls", len(a.Controls()))
		}
		run(b, &AgentGuard{Agent: a})
	})
	b.Run("local", func(b *testing.B) {
		controls := make([]guard.Control, 0, 3)
		for _, ac := range benchGuardControls() {
			controls = append(controls, guard.Control{ID: ac.ControlID, Name: ac.Name, Data: ac.Control})
		}
		lg, err := NewLocalGuard(controls, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		run(b, lg)
	})
}
