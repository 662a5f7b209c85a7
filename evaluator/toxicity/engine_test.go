package toxicity_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/evaluator/toxicity"
)

const engineKey = "sk-engine-SECRET-987"

// engineWith returns an engine whose only evaluator is ext.toxicity pointed at handler, loaded with one
// deny control on the step input built from the given evaluator config.
func engineWith(t *testing.T, handler http.HandlerFunc, config string) *guard.Engine {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	reg := evaluator.NewRegistry()
	reg.Register(toxicity.NewFactory(toxicity.Settings{APIKey: engineKey, URL: srv.URL, Backoff: time.Millisecond}))
	data, err := guard.ParseControlData([]byte(`{
	  "scope": {"stages": ["pre"]},
	  "condition": {"selector": {"path": "input"}, "evaluator": {"name": "ext.toxicity", "config": `+config+`}},
	  "action": {"decision": "deny"}
	}`), guard.WithValidationRegistry(reg))
	if err != nil {
		t.Fatalf("ParseControlData: %v", err)
	}
	eng := guard.New(guard.WithRegistry(reg))
	if err := eng.Update([]guard.Control{{ID: 7, Name: "no-toxic-input", Data: data}}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	return eng
}

func answer(score float64) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "m", "model": "test", "results": []any{
			map[string]any{"flagged": score > 0.5, "category_scores": map[string]float64{"harassment": score, "hate": 0.01}},
		}})
	}
}

func TestEngineDecisions(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	slow := func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client hanging up (r.Context ends); release ends
		// the handler before the test server's Close waits for it in any case.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	unauthorized := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) }
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		config   string
		decision guard.Decision
		errors   int
	}{
		{"toxic input denied", answer(0.93), `{"metric": "input_toxicity", "operator": "gt", "target_value": 0.8}`, guard.DecisionDeny, 0},
		{"clean input allowed", answer(0.02), `{"metric": "input_toxicity", "operator": "gt", "target_value": 0.8}`, guard.DecisionAllow, 0},
		{"401 fails closed by default", unauthorized, `{"metric": "input_toxicity", "operator": "gt", "target_value": 0.8}`, guard.DecisionDeny, 1},
		{"401 fails open with on_error allow", unauthorized, `{"metric": "input_toxicity", "operator": "gt", "target_value": 0.8, "on_error": "allow"}`, guard.DecisionAllow, 1},
		{"timeout fails open with on_error allow", slow, `{"metric": "input_toxicity", "operator": "gt", "target_value": 0.8, "on_error": "allow", "timeout_ms": 150}`, guard.DecisionAllow, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := engineWith(t, tt.handler, tt.config)
			step := &guard.Step{Type: "llm", Name: "chat", Input: "you are an idiot"}
			start := time.Now()
			res, err := eng.Evaluate(context.Background(), step, guard.StagePre)
			if err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el > 3*time.Second {
				t.Fatalf("evaluation took %v", el)
			}
			if res.Decision != tt.decision || len(res.Errors) != tt.errors {
				t.Fatalf("decision %s with %d errors, want %s with %d: %+v", res.Decision, len(res.Errors), tt.decision, tt.errors, res)
			}
			for _, e := range res.Errors {
				if strings.Contains(e.Result.Error, engineKey) || strings.Contains(e.Result.Error, "idiot") {
					t.Fatalf("error %q leaks the key or the text", e.Result.Error)
				}
			}
			if tt.decision == guard.DecisionDeny && tt.errors == 0 {
				m := res.Matches[0].Result
				if m.Metadata["category"] != "harassment" || m.Metadata["metric"] != "input_toxicity" {
					t.Errorf("match metadata = %v", m.Metadata)
				}
			}
		})
	}
}
