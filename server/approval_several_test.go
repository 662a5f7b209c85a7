package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
)

// secondApprovalControl asks a person for every refund to an order starting with A (a second approval
// control on the refund step, steering: it is evaluated after the deny).
func secondApprovalControl(pattern string) map[string]any {
	return map[string]any{
		"scope": map[string]any{"step_types": []string{"tool"}, "step_names": []string{"refund"}, "stages": []string{"pre"}},
		"condition": map[string]any{"selector": map[string]any{"path": "input.order"},
			"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": pattern}}},
		"action": map[string]any{"decision": "steer", "steering_context": map[string]any{"message": "ask the account team"},
			"approval": map[string]any{"ttl_seconds": 300, "message": "Orders A- need the account team", "approvers": []string{"accounts"}}},
	}
}

// controlIDsOf lists the control ids of an approval's controls.
func controlIDsOf(t *testing.T, v any) []int64 {
	t.Helper()
	l, _ := v.([]any)
	var out []int64
	for _, c := range l {
		out = append(out, int64(c.(map[string]any)["control_id"].(float64)))
	}
	return out
}

// TestSeveralApprovalControlsOneStep (issue 32, item 3): two approval controls refusing one step used to
// deadlock (the first grant gave a request for the second control, the second grant was refused by the
// first). One request covers both: approved, the step runs exactly once and the grant is consumed; the
// grant cannot be used again; a rejection refuses; a change of the controls invalidates the grant.
func TestSeveralApprovalControlsOneStep(t *testing.T) {
	a := newApprovalTS(t, 0)
	first := a.setup("support-bot")
	second := int64(a.admin(200, "PUT", "/api/v1/controls", map[string]any{"name": "order-a-needs-accounts", "data": secondApprovalControl("^A-")})["control_id"].(float64))
	a.admin(200, "POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", second), nil)
	want := []int64{first, second}

	res := a.refund("support-bot", 2500, nil)
	apv := approvalOf(t, res)
	id, _ := apv["id"].(string)
	if decision(res) != "deny" || id == "" || fmt.Sprint(controlIDsOf(t, apv["controls"])) != fmt.Sprint(want) {
		t.Fatalf("refused with one request for both? %v", res)
	}
	if again := approvalOf(t, a.refund("support-bot", 2500, nil)); again["id"] != id {
		t.Fatalf("a retry opened %v, want %s", again["id"], id)
	}
	got := a.ok(200, "GET", "/api/v1/approvals/"+id, nil, "X-API-Key", apvRuntime)
	ctls, _ := got["controls"].([]any)
	if fmt.Sprint(controlIDsOf(t, got["controls"])) != fmt.Sprint(want) || len(ctls) != 2 ||
		ctls[1].(map[string]any)["message"] != "Orders A- need the account team" || ctls[1].(map[string]any)["control_version"] != float64(1) {
		t.Fatalf("request = %v", got)
	}
	// The shorter TTL of the two holds (300 s, not 600 s).
	created, _ := time.Parse(time.RFC3339Nano, got["created_at"].(string))
	expires, _ := time.Parse(time.RFC3339Nano, got["expires_at"].(string))
	if d := expires.Sub(created); d != 300*time.Second {
		t.Fatalf("the request lasts %v, want the shorter TTL, 5m0s", d)
	}
	notice := a.hook.waitFor(t, 1)[0]
	if txt := notice["text"].(string); !strings.Contains(txt, "refund-over-limit") || !strings.Contains(txt, "order-a-needs-accounts") {
		t.Fatalf("webhook text = %q", txt)
	}
	if na := notice["approval"].(map[string]any); fmt.Sprint(controlIDsOf(t, na["controls"])) != fmt.Sprint(want) {
		t.Fatalf("webhook approval = %v", na)
	}
	// The request is found by either control.
	for _, c := range want {
		l := a.ok(200, "GET", fmt.Sprintf("/api/v1/approvals?control_id=%d", c), nil, "X-API-Key", apvRuntime)["approvals"].([]any)
		if len(l) != 1 || l[0].(map[string]any)["id"] != id {
			t.Fatalf("by control %d: %v", c, l)
		}
	}

	grant := a.approve(id)
	ran := a.refund("support-bot", 2500, map[string]any{GrantContextKey: grant})
	if decision(ran) != "allow" || ran["is_safe"] != true {
		t.Fatalf("with the grant: %v", ran)
	}
	if g := approvalOf(t, ran); g["status"] != "granted" || g["id"] != id || fmt.Sprint(controlIDsOf(t, g["controls"])) != fmt.Sprint(want) {
		t.Fatalf("granted = %v", g)
	}
	used := a.ok(200, "GET", "/api/v1/approvals/"+id, nil, "X-API-Key", apvRuntime)
	if used["used_at"] == nil || used["used_execution_id"] == "" || used["grant"] != nil {
		t.Fatalf("not consumed: %v", used)
	}
	// The events of both controls in the run carry the request.
	if err := a.obs.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	evs, _, err := a.st.QueryEvents(t.Context(), guard.EventQuery{AgentName: "support-bot", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	tagged := map[int64]bool{}
	for _, e := range evs {
		if e.Metadata["approval_id"] == id && e.Metadata["approval_status"] == "granted" {
			tagged[e.ControlID] = true
		}
	}
	if !tagged[first] || !tagged[second] {
		t.Fatalf("granted events tagged for %v, want both controls", tagged)
	}

	// Exactly once: the same grant again is refused, and a new request opens for both.
	again := a.refund("support-bot", 2500, map[string]any{GrantContextKey: grant})
	ag := approvalOf(t, again)
	if decision(again) != "deny" || ag["grant_error"] != errGrantUsed.Error() || ag["id"] == id || len(controlIDsOf(t, ag["controls"])) != 2 {
		t.Fatalf("reused: %v", again)
	}

	// A rejection refuses: no grant, and the step stays refused.
	rej := a.admin(200, "POST", "/api/v1/approvals/"+ag["id"].(string), map[string]any{"decision": "reject", "comment": "no"})
	if rej["status"] != "rejected" || rej["grant"] != nil {
		t.Fatalf("reject = %v", rej)
	}
	if r := a.refund("support-bot", 2500, nil); decision(r) != "deny" {
		t.Fatalf("after a rejection: %v", r)
	}

	// A grant holds only for the controls it was approved for: with the second control changed, or no
	// longer refusing the step, it is refused with the reason.
	id3 := approvalOf(t, a.refund("support-bot", 2600, nil))["id"].(string)
	g3 := a.approve(id3)
	a.admin(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", second), map[string]any{"data": secondApprovalControl("^A-[0-9]")})
	if r := approvalOf(t, a.refund("support-bot", 2600, map[string]any{GrantContextKey: g3})); r["grant_error"] != errGrantChanged.Error() {
		t.Fatalf("second control changed: %v", r)
	}
	id4 := approvalOf(t, a.refund("support-bot", 2700, nil))["id"].(string)
	g4 := a.approve(id4)
	a.admin(200, "PATCH", fmt.Sprintf("/api/v1/controls/%d", second), map[string]any{"enabled": false})
	r := a.refund("support-bot", 2700, map[string]any{GrantContextKey: g4})
	if ra := approvalOf(t, r); decision(r) != "deny" || ra["grant_error"] != errGrantSet.Error() || ra["controls"] != nil {
		t.Fatalf("second control disabled: %v", r)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), `"status":"granted"`) {
		t.Fatalf("granted: %s", b)
	}
}
