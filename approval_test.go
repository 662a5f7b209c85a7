package guard_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
)

const refundOverLimit = `{"scope": {"step_types": ["tool"], "step_names": ["refund"], "stages": ["pre"]},
 "condition": {"selector": {"path": "input.amount"}, "evaluator": {"name": "regex", "config": {"pattern": "^[0-9]{4,}"}}},
 "action": {"decision": "deny", "metadata": {"reason": "refunds of 1000 or more need a person"}`

// TestApprovalValidation: action.approval is strict, bounded and only with a decision that blocks; what
// is accepted reads back as written.
func TestApprovalValidation(t *testing.T) {
	const cond = `"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "x"}}}`
	steer := `"decision": "steer", "steering_context": {"message": "m"}`
	tests := []struct {
		name   string
		action string
		want   []string // field:code, sorted
	}{
		{"deny with all fields", `"decision": "deny", "approval": {"ttl_seconds": 600, "message": "a refund", "approvers": ["finance"]}`, nil},
		{"steer, empty object", steer + `, "approval": {}`, nil},
		{"null is no approval", `"decision": "deny", "approval": null`, nil},
		{"allow conflicts", `"decision": "allow", "approval": {}`, []string{"action.approval:conflict"}},
		{"warn conflicts", `"decision": "warn", "approval": {}`, []string{"action.approval:conflict"}},
		{"not an object", `"decision": "deny", "approval": true`, []string{"action.approval:type"}},
		{"unknown field", `"decision": "deny", "approval": {"who": "x"}`, []string{"action.approval.who:unknown_field"}},
		{"ttl zero", `"decision": "deny", "approval": {"ttl_seconds": 0}`, []string{"action.approval.ttl_seconds:invalid"}},
		{"ttl fraction", `"decision": "deny", "approval": {"ttl_seconds": 1.5}`, []string{"action.approval.ttl_seconds:invalid"}},
		{"ttl above 7 days", `"decision": "deny", "approval": {"ttl_seconds": 604801}`, []string{"action.approval.ttl_seconds:invalid"}},
		{"ttl string", `"decision": "deny", "approval": {"ttl_seconds": "60"}`, []string{"action.approval.ttl_seconds:type"}},
		{"message blank", `"decision": "deny", "approval": {"message": " "}`, []string{"action.approval.message:empty"}},
		{"message too long", `"decision": "deny", "approval": {"message": "` + strings.Repeat("m", 1025) + `"}`, []string{"action.approval.message:too_long"}},
		{"approvers not a list", `"decision": "deny", "approval": {"approvers": "finance"}`, []string{"action.approval.approvers:type"}},
		{"approver empty", `"decision": "deny", "approval": {"approvers": ["a", ""]}`, []string{"action.approval.approvers.1:empty"}},
		{"too many approvers", `"decision": "deny", "approval": {"approvers": [` + strings.TrimSuffix(strings.Repeat(`"a",`, 21), ",") + `]}`, []string{"action.approval.approvers:too_long"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := `{` + cond + `, "action": {` + tt.action + `}}`
			d, err := guard.ParseControlData([]byte(raw))
			if got := problemKeys(err); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("problems = %v, want %v", got, tt.want)
			}
			if err != nil {
				return
			}
			// What was accepted reads back as written and validates again, through both of Validate's paths.
			out, _ := json.Marshal(d.Action)
			if strings.Contains(tt.action, `"approval": {"`) && !strings.Contains(string(out), `"approval":{"`) {
				t.Errorf("approval does not read back: %s", out)
			}
			for _, opts := range [][]guard.ValidateOption{nil, {guard.SkipEvaluatorConfigs()}} {
				if err := d.Validate(opts...); err != nil {
					t.Errorf("Validate(%d options) = %v", len(opts), err)
				}
			}
		})
	}
	// A Go-built approval on a control that lets the step through is refused by Validate too (tree path).
	d, err := guard.ParseControlData([]byte(`{` + cond + `, "action": {"decision": "deny", "approval": {"ttl_seconds": 60}}}`))
	if err != nil {
		t.Fatal(err)
	}
	d.Action.Decision = guard.DecisionLog
	for _, opts := range [][]guard.ValidateOption{nil, {guard.SkipEvaluatorConfigs()}} {
		if got := problemKeys(d.Validate(opts...)); !reflect.DeepEqual(got, []string{"action.approval:conflict"}) {
			t.Errorf("Validate(%d options) problems = %v", len(opts), got)
		}
	}
}

func refundStep(amount any) *guard.Step {
	return &guard.Step{Type: "tool", Name: "refund", Input: map[string]any{"order": "A-17", "amount": amount}}
}

// TestApprovalMarksTheResult: a matched control with approval refuses as before and the result names
// it; without approval, in shadow, failing closed or not deciding, there is no request.
func TestApprovalMarksTheResult(t *testing.T) {
	eng := guard.New()
	err := eng.Update([]guard.Control{
		{ID: 7, Name: "refund-over-limit", Data: mustData(t, refundOverLimit+`, "approval": {"ttl_seconds": 600, "approvers": ["finance"]}}}`)},
		{ID: 8, Name: "refund-shadow", Data: mustData(t, refundOverLimit+`, "approval": {"message": "shadow"}}, "mode": "shadow"}`)},
		{ID: 9, Name: "plain-deny", Data: mustData(t, denySecret+`}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !eng.HasApproval() {
		t.Fatal("HasApproval = false")
	}
	ctx := context.Background()
	res, err := eng.Evaluate(ctx, refundStep("2500"), guard.StagePre)
	if err != nil {
		t.Fatal(err)
	}
	a := res.Approval
	if res.IsSafe || res.Decision != guard.DecisionDeny || a == nil {
		t.Fatalf("result = %+v, want a deny with an approval request", res)
	}
	if a.Status != guard.ApprovalRequired || a.ControlID != 7 || a.ControlName != "refund-over-limit" ||
		a.Message != "refunds of 1000 or more need a person" || !reflect.DeepEqual(a.Approvers, []string{"finance"}) || a.TTL.Seconds() != 600 {
		t.Fatalf("approval = %+v", a)
	}
	// On the wire: the ordinary deny, plus the approval object (no TTL: the server writes expires_at).
	out, _ := json.Marshal(res)
	if !strings.Contains(string(out), `"decision":"deny"`) || !strings.Contains(string(out), `"approval":{"status":"required","control_id":7`) ||
		strings.Contains(string(out), "TTL") {
		t.Fatalf("wire form: %s", out)
	}
	for _, tt := range []struct {
		name string
		step *guard.Step
	}{
		{"under the limit", refundStep("25")},
		{"a plain deny wins", &guard.Step{Type: "llm", Name: "chat", Input: "a secret"}},
	} {
		res, err := eng.Evaluate(ctx, tt.step, guard.StagePre)
		if err != nil || res.Approval != nil {
			t.Errorf("%s: approval = %+v, err %v", tt.name, res.Approval, err)
		}
	}
	sh, err := eng.EvaluateShadow(ctx, refundStep("2500"), guard.StagePre)
	if err != nil || sh.Approval != nil || len(sh.Matches) != 1 {
		t.Fatalf("shadow: %+v, %v: a shadow control never opens a request", sh, err)
	}
	// A control that fails closed (its evaluator failed) asks no one: there is nothing to look at.
	failing := ctl(3, guard.DecisionDeny, leaf("input", "fail", nil))
	failing.Data.Action.Approval = &guard.Approval{}
	fe := newEngine(t, failing)
	if res := evaluate(t, fe, llm("x")); res.Decision != guard.DecisionDeny || res.Approval != nil {
		t.Fatalf("failed closed: %+v", res)
	}
	// Steer carries it too.
	st := ctl(4, guard.DecisionSteer, leaf("input", "const", map[string]any{"matched": true}))
	st.Data.Action.Approval = &guard.Approval{Message: "ask"}
	if res := evaluate(t, newEngine(t, st), llm("x")); res.Decision != guard.DecisionSteer || res.Approval == nil || res.Approval.Message != "ask" {
		t.Fatalf("steer: %+v", res)
	}
}

// TestEvaluateGranted: the granted control no longer decides, the others still do, and the result says
// the grant was what let the step through only when it was.
func TestEvaluateGranted(t *testing.T) {
	approve := func(c guard.Control) guard.Control { c.Data.Action.Approval = &guard.Approval{}; return c }
	match := leaf("input", "const", map[string]any{"matched": true})
	miss := leaf("input", "const", map[string]any{"matched": false})
	tests := []struct {
		name     string
		controls []guard.Control
		grant    int64
		want     guard.Decision
		granted  bool
		approval int64 // control id of a required approval, 0 for none
	}{
		{"granted control lets the step through", []guard.Control{approve(ctl(1, guard.DecisionDeny, match))}, 1, guard.DecisionAllow, true, 0},
		{"a later deny still blocks", []guard.Control{approve(ctl(1, guard.DecisionDeny, match)), ctl(2, guard.DecisionDeny, match)}, 1, guard.DecisionDeny, false, 0},
		{"a later approval control asks again", []guard.Control{approve(ctl(1, guard.DecisionDeny, match)), approve(ctl(2, guard.DecisionDeny, match))}, 1, guard.DecisionDeny, false, 2},
		{"a steer still steers", []guard.Control{approve(ctl(1, guard.DecisionDeny, match)), ctl(2, guard.DecisionSteer, match)}, 1, guard.DecisionSteer, false, 0},
		{"another control's grant does nothing", []guard.Control{approve(ctl(1, guard.DecisionDeny, match))}, 2, guard.DecisionDeny, false, 1},
		{"a control without approval cannot be granted", []guard.Control{ctl(1, guard.DecisionDeny, match)}, 1, guard.DecisionDeny, false, 0},
		{"granted control not matching: nothing to consume", []guard.Control{approve(ctl(1, guard.DecisionDeny, miss))}, 1, guard.DecisionAllow, false, 0},
		{"granted steer", []guard.Control{approve(ctl(1, guard.DecisionSteer, match))}, 1, guard.DecisionAllow, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := newEngine(t, tt.controls...)
			res, err := eng.EvaluateGranted(context.Background(), llm("x"), guard.StagePre, tt.grant)
			if err != nil {
				t.Fatal(err)
			}
			if res.Decision != tt.want {
				t.Fatalf("decision = %s, want %s (%+v)", res.Decision, tt.want, res)
			}
			granted := res.Approval != nil && res.Approval.Status == guard.ApprovalGranted
			if granted != tt.granted {
				t.Fatalf("granted = %v, want %v (%+v)", granted, tt.granted, res.Approval)
			}
			if granted && res.Approval.ControlID != tt.grant {
				t.Fatalf("granted control = %d", res.Approval.ControlID)
			}
			if tt.approval != 0 && (res.Approval == nil || res.Approval.Status != guard.ApprovalRequired || res.Approval.ControlID != tt.approval) {
				t.Fatalf("approval = %+v, want a request for %d", res.Approval, tt.approval)
			}
			// The granted control is still listed as it evaluated.
			if tt.granted && (len(res.Matches) == 0 || res.Matches[0].ControlID != tt.grant || res.Matches[0].Action == guard.DecisionAllow) {
				t.Fatalf("matches = %+v", res.Matches)
			}
			// The engine itself is unchanged: a plain evaluation still refuses.
			if plain := evaluate(t, eng, llm("x")); tt.granted && plain.IsSafe {
				t.Fatal("EvaluateGranted changed the engine")
			}
		})
	}
}

// TestPayloadHash: the hash is SHA-256 over the RFC 8785 form of the stage's payload, whatever the key
// order, spacing or number spelling of the step as sent.
func TestPayloadHash(t *testing.T) {
	sum := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return guard.PayloadHashPrefix + hex.EncodeToString(h[:])
	}
	decode := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name  string
		step  *guard.Step
		stage guard.Stage
		want  string
	}{
		{"keys sorted, no spaces", &guard.Step{Input: decode(`{ "order": "A-17", "amount": 2500 }`)}, guard.StagePre, sum(`{"amount":2500,"order":"A-17"}`)},
		{"numbers as a double is written", &guard.Step{Input: decode(`{"a": 1.50, "b": 1e3, "c": -0}`)}, guard.StagePre, sum(`{"a":1.5,"b":1000,"c":0}`)},
		{"nested, unicode and escapes", &guard.Step{Input: decode(`{"z": [{"y": "é<>&\u000a"}], "a": null}`)}, guard.StagePre, sum("{\"a\":null,\"z\":[{\"y\":\"é<>&\\n\"}]}")},
		{"post hashes the output", &guard.Step{Input: "in", Output: "out"}, guard.StagePost, sum(`"out"`)},
		{"absent payload is null", &guard.Step{}, guard.StagePre, sum(`null`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := guard.PayloadHash(tt.step, tt.stage)
			if err != nil || got != tt.want {
				t.Fatalf("PayloadHash = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
	a, _ := guard.PayloadHash(refundStep(2500), guard.StagePre)
	b, _ := guard.PayloadHash(refundStep(2501), guard.StagePre)
	if a == b {
		t.Fatal("a different amount hashes the same")
	}
	if _, err := guard.CanonicalHash([]byte(`{"a":`)); err == nil {
		t.Fatal("invalid JSON hashed")
	}
}
