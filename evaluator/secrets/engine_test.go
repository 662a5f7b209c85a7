package secrets_test

import (
	"context"
	"testing"

	"github.com/guardrail-control/guard"
	_ "github.com/guardrail-control/guard/evaluator/secrets"
)

// TestEngineBlocksCredentialsInOutput runs the secrets evaluator through the engine at post stage.
func TestEngineBlocksCredentialsInOutput(t *testing.T) {
	data, err := guard.ParseControlData([]byte(`{
	  "scope": {"stages": ["post"]},
	  "condition": {"selector": {"path": "output"}, "evaluator": {"name": "secrets", "config": {"rule_groups": ["vcs", "cloud"]}}},
	  "action": {"decision": "deny"}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	eng := guard.New()
	if err := eng.Update([]guard.Control{{ID: 1, Name: "no-credentials", Data: data}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		output string
		want   guard.Decision
	}{
		{"Here is the token: ghp_R8x2Lq9ZtV4mN7cW1pK3sY6dF0hJ5gB2aQeT", guard.DecisionDeny},
		{"No credentials here, just a summary of the build.", guard.DecisionAllow},
	} {
		res, err := eng.Evaluate(context.Background(), &guard.Step{Type: "llm", Name: "chat", Output: tt.output}, guard.StagePost)
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision != tt.want {
			t.Fatalf("%q: decision %s, want %s", tt.output, res.Decision, tt.want)
		}
		if tt.want == guard.DecisionDeny {
			md := res.Matches[0].Result.Metadata
			if md["finding_count"] == nil || md["findings"] == nil {
				t.Fatalf("metadata %v lacks findings", md)
			}
		}
	}
}
