package client

import (
	"context"
	"errors"
	"testing"

	"github.com/guardrail-control/guard"
)

// TestLiveInitReturnsServerRefusals checks that a 4xx of the real server at registration comes back from
// Init as the server's *APIError (no fallback to a controls file or to an empty snapshot): a strict-mode
// schema conflict is a 409 SCHEMA_INCOMPATIBLE, a registration the server refuses (a step without a name,
// a step given twice) a 422 VALIDATION_ERROR naming the field.
func TestLiveInitReturnsServerRefusals(t *testing.T) {
	ls := startLiveServer(t)
	schema := func(typ string) map[string]any {
		return map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": typ}}}
	}
	base := testConfig(ls.url())
	base.Steps = []guard.StepSchema{{Type: "tool", Name: "search", InputSchema: schema("string")}}
	initAgent(t, base) // registered with q: string

	tests := []struct {
		name       string
		mode       guard.ConflictMode
		steps      []guard.StepSchema
		wantStatus int
		wantCode   string
		wantField  string
	}{
		{"strict conflict", guard.ConflictStrict,
			[]guard.StepSchema{{Type: "tool", Name: "search", InputSchema: schema("integer")}}, 409, "SCHEMA_INCOMPATIBLE", ""},
		{"step without a name", guard.ConflictOverwrite,
			[]guard.StepSchema{{Type: "tool", Name: ""}}, 422, "VALIDATION_ERROR", "steps.0.name"},
		{"step given twice", guard.ConflictOverwrite,
			[]guard.StepSchema{{Type: "llm", Name: "chat"}, {Type: "llm", Name: "chat"}}, 422, "VALIDATION_ERROR", "steps.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(ls.url())
			cfg.ConflictMode = tt.mode
			cfg.Steps = tt.steps
			cfg.ControlsFile = writeFile(t, fileYAML) // must not be used: a refusal is not an outage
			a, err := Init(context.Background(), cfg)
			if err == nil {
				_ = a.Close()
				t.Fatalf("Init succeeded (source %q), want a %d", a.Source(), tt.wantStatus)
			}
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != tt.wantStatus || ae.Code != tt.wantCode {
				t.Fatalf("Init error %#v, want an *APIError %d %s", err, tt.wantStatus, tt.wantCode)
			}
			if IsUnavailable(err) {
				t.Fatalf("%v counted as unavailable", err)
			}
			if tt.wantField != "" && (len(ae.Problems) == 0 || ae.Problems[0].Field != tt.wantField) {
				t.Fatalf("problems %+v, want the first on %s", ae.Problems, tt.wantField)
			}
		})
	}

	// The same change under overwrite is accepted, and the strict refusal left the schema unchanged
	// until then.
	d, err := ls.admin(t).GetAgent(context.Background(), base.AgentName)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Steps) != 1 || canonical(t, d.Steps[0].InputSchema) != canonical(t, schema("string")) {
		t.Fatalf("steps after the refusals %+v", d.Steps)
	}
	over := testConfig(ls.url())
	over.Steps = []guard.StepSchema{{Type: "tool", Name: "search", InputSchema: schema("integer")}}
	initAgent(t, over)
}
