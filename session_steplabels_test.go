package guard

import (
	"strings"
	"testing"
)

// Step labels set after the engine was built (a new registration, an MCP server's new tool list) apply
// to the next step, for the engines sharing the set, without recompiling the controls.
func TestSetStepLabelsAppliesToNextStep(t *testing.T) {
	gate := `{"enabled": true, "scope": {"stages": ["pre"]},
	  "condition": {"selector": {"path": "session.labels"}, "evaluator": {"name": "list", "config": {"values": ["private", "egress"], "logic": "all"}}},
	  "action": {"decision": "deny"}}`
	shared := &StepLabels{}
	a := sessEngine(t, []Control{sessCtl(t, 1, "gate", gate)}, WithStepLabelSet(shared))
	b := sessEngine(t, []Control{sessCtl(t, 1, "gate", gate)}, WithStepLabelSet(shared))
	own := sessEngine(t, []Control{sessCtl(t, 1, "gate", gate)})

	mustDecide(t, a, tool("read_db", "s1", nil), StagePre, DecisionAllow)
	mustDecide(t, a, tool("post", "s1", nil), StagePre, DecisionAllow) // no labels yet

	shared.Set(map[string][]string{"read_db": {"private"}, "post": {"egress"}})
	for _, e := range []*Engine{a, b} {
		mustDecide(t, e, tool("read_db", "s2", nil), StagePre, DecisionAllow)
		res := mustDecide(t, e, tool("post", "s2", nil), StagePre, DecisionDeny)
		if !strings.Contains(res.Reason, "step 1 (read_db) added label private") {
			t.Fatalf("reason %q", res.Reason)
		}
	}
	// An engine with a set of its own is not affected; SetStepLabels changes it.
	mustDecide(t, own, tool("read_db", "s3", nil), StagePre, DecisionAllow)
	mustDecide(t, own, tool("post", "s3", nil), StagePre, DecisionAllow)
	own.SetStepLabels(map[string][]string{"read_db": {"private"}, "post": {"egress"}})
	mustDecide(t, own, tool("read_db", "s4", nil), StagePre, DecisionAllow)
	mustDecide(t, own, tool("post", "s4", nil), StagePre, DecisionDeny)
	// Removing them: the same steps run again.
	own.SetStepLabels(nil)
	mustDecide(t, own, tool("read_db", "s5", nil), StagePre, DecisionAllow)
	mustDecide(t, own, tool("post", "s5", nil), StagePre, DecisionAllow)
}

func TestLabelsOfSteps(t *testing.T) {
	got := LabelsOfSteps([]StepSchema{
		{Type: "tool", Name: "fetch", Labels: []string{"untrusted"}},
		{Type: "llm", Name: "fetch", Labels: []string{"untrusted", "egress"}},
		{Type: "tool", Name: "plain"},
	})
	if len(got) != 1 || strings.Join(got["fetch"], ",") != "untrusted,egress" {
		t.Fatalf("%v", got)
	}
	if LabelsOfSteps([]StepSchema{{Type: "tool", Name: "x"}}) != nil {
		t.Fatal("no labels: nil")
	}
}
