package ui_test

// The approvals inbox (issue 25): a refund refused by an approval control shows in the inbox with its
// exact arguments; approving it with a comment from its page lets that refund run once; the decision moves
// it to the history. At desktop and phone widths, with the labelling and width checks of every page; a
// read-only key sees the request but cannot decide.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/server"
)

func refundApprovalControl() map[string]any {
	return map[string]any{
		"description": "refunds of 1000 or more need a person",
		"scope":       map[string]any{"step_types": []string{"tool"}, "step_names": []string{"refund"}, "stages": []string{"pre"}},
		"condition": map[string]any{"selector": map[string]any{"path": "input.amount"},
			"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": "^[0-9]{4,}"}}},
		"action": map[string]any{"decision": "deny", "approval": map[string]any{"message": "Refund of 1000 or more", "approvers": []string{"finance"}}},
	}
}

// refund evaluates a refund of amount for support-bot (with a grant when not empty) and returns the answer.
func (a *app) refund(amount int, grant string) map[string]any {
	a.t.Helper()
	step := map[string]any{"type": "tool", "name": "refund", "input": map[string]any{"order": "A-17", "amount": amount, "note": strings.Repeat("long-unbroken-text", 8)}}
	if grant != "" {
		step["context"] = map[string]any{"guard_approval_grant": grant}
	}
	var res map[string]any
	a.call("POST", "/api/v1/evaluation", map[string]any{"agent_name": "support-bot", "stage": "pre", "step": step}, http.StatusOK, &res)
	return res
}

func TestApprovalsInbox(t *testing.T) {
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			a := startApp(t, appOptions{width: w.width, height: w.height})
			a.initAgent("support-bot", "answers customers")
			id := a.createControl("refund-over-limit", refundApprovalControl())
			a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil, http.StatusOK, nil)
			res := a.refund(2500, "")
			apv, _ := res["approval"].(map[string]any)
			reqID, _ := apv["id"].(string)
			if res["decision"] != "deny" || reqID == "" {
				t.Fatalf("refused with a request? %v", res)
			}

			a.open("#/approvals")
			if got := a.text(`#approvals-pending tr[data-id="` + reqID + `"]`); !strings.Contains(got, "tool refund") || !strings.Contains(got, "support-bot") ||
				!strings.Contains(got, "refund-over-limit") || !strings.Contains(got, "pending") {
				t.Fatalf("inbox row = %q", got)
			}
			if got := a.text("#approvals-history"); !strings.Contains(got, "No request was decided yet.") {
				t.Fatalf("history = %q", got)
			}
			if probs := eval[[]string](a, "a11y checks", a11yProblems); len(probs) > 0 {
				t.Errorf("inbox at %d px:\n  %s", w.width, strings.Join(probs, "\n  "))
			}

			a.click(`#approvals-pending tr[data-id="` + reqID + `"] a`)
			a.waitRendered("#/approvals/" + reqID)
			step := a.text("#approval-step")
			if !strings.Contains(step, `"amount": 2500`) || !strings.Contains(step, `"order": "A-17"`) {
				t.Fatalf("step shown = %q", step)
			}
			if facts := a.text("#approval-facts"); !strings.Contains(facts, "Refund of 1000 or more") || !strings.Contains(facts, "finance") ||
				!strings.Contains(facts, "sha256:") {
				t.Fatalf("facts = %q", facts)
			}
			if probs := eval[[]string](a, "a11y checks", a11yProblems); len(probs) > 0 {
				t.Errorf("request page at %d px:\n  %s", w.width, strings.Join(probs, "\n  "))
			}
			a.setValue("#approval-comment", "customer called")
			a.click("#approve")
			a.waitJS("the decision", `!!document.getElementById('approval-decided')`)
			if got := a.text("#approval-decided"); !strings.Contains(got, "approved") {
				t.Fatalf("decided = %q", got)
			}
			// The page shows the request as it now is: the badge says approved, not a stale pending, and
			// who decided (issue 32).
			if badge := a.text("#approval-facts .badge"); badge != "approved" {
				t.Fatalf("status badge after the approval = %q", badge)
			}
			if facts := a.text("#approval-facts"); !strings.Contains(facts, "customer called") || !strings.Contains(facts, "anonymous") {
				t.Fatalf("facts after the approval = %q", facts)
			}
			if n := eval[int](a, "decision buttons", `document.querySelectorAll('#approve, #reject').length`); n != 0 {
				t.Fatal("the decided request still offers the buttons")
			}

			// The agent's grant lets that refund run once.
			var got map[string]any
			a.call("GET", "/api/v1/approvals/"+reqID, nil, http.StatusOK, &got)
			grant, _ := got["grant"].(string)
			if got["comment"] != "customer called" || grant == "" {
				t.Fatalf("approval = %v", got)
			}
			if ran := a.refund(2500, grant); ran["decision"] != "allow" {
				t.Fatalf("with the grant: %v", ran)
			}
			if again := a.refund(2500, grant); again["decision"] != "deny" {
				t.Fatalf("twice: %v", again)
			}

			// The history shows it decided; the page shows who decided and the use.
			a.goTo("#/approvals")
			if h := a.text(`#approvals-history tr[data-id="` + reqID + `"]`); !strings.Contains(h, "approved") {
				t.Fatalf("history row = %q", h)
			}
			a.goTo("#/approvals/" + reqID)
			if facts := a.text("#approval-facts"); !strings.Contains(facts, "anonymous") || !strings.Contains(facts, "customer called") || !strings.Contains(facts, "Used") {
				t.Fatalf("decided facts = %q", facts)
			}
			if n := eval[int](a, "decision buttons", `document.querySelectorAll('#approve, #reject').length`); n != 0 {
				t.Fatal("a decided request still offers the buttons")
			}
			a.noPageErrors()
		})
	}
}

// TestApprovalsReadOnlyKey: a regular key reads the inbox and the request; the buttons are disabled and
// the page says why.
func TestApprovalsReadOnlyKey(t *testing.T) {
	a := startApp(t, appOptions{auth: true})
	a.initAgent("support-bot", "answers customers")
	id := a.createControl("refund-over-limit", refundApprovalControl())
	a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil, http.StatusOK, nil)
	reqID := a.refund(4000, "")["approval"].(map[string]any)["id"].(string)
	a.load("#/approvals/" + reqID)
	a.waitRendered("login")
	a.setValue("#api-key", regularKey)
	a.click("#sign-in")
	a.waitRendered("#/approvals/" + reqID)
	if dis := eval[bool](a, "buttons disabled", `document.getElementById('approve').disabled && document.getElementById('reject').disabled`); !dis {
		t.Fatal("a read-only key may press approve")
	}
	if n := a.text("#approval-form"); !strings.Contains(n, "cannot decide") || !strings.Contains(n, "approve permission") {
		t.Fatalf("form = %q", n)
	}
	a.noPageErrors()
}

// approverKey is a key with the approve permission, limited to support-bot: the narrowest key
// docs/approvals.md recommends for approvers.
const approverKey = "approver-key-for-tests"

// TestApprovalsApproverKey (issue 32, item 9): signed in with an approve-only key, the inbox is usable:
// the buttons of a request of its agent are enabled, the approval goes through and the page shows it
// approved; a request covering two approval controls lists both; the other pages stay read-only, and a
// request of another agent is not found.
func TestApprovalsApproverKey(t *testing.T) {
	a := startApp(t, appOptions{auth: true, keys: []server.Key{
		{Name: "finance-approver", Key: approverKey, Approve: true, Agents: []string{"support-bot"}},
	}})
	a.initAgent("support-bot", "answers customers")
	a.initAgent("other-bot", "another team's agent")
	id := a.createControl("refund-over-limit", refundApprovalControl())
	second := refundApprovalControl()
	second["condition"] = map[string]any{"selector": map[string]any{"path": "input.order"},
		"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": "^A-"}}}
	second["action"] = map[string]any{"decision": "deny", "approval": map[string]any{"message": "Orders A- need the account team", "approvers": []string{"accounts"}}}
	id2 := a.createControl("orders-a-need-accounts", second)
	for _, agent := range []string{"support-bot", "other-bot"} {
		a.call("POST", fmt.Sprintf("/api/v1/agents/%s/controls/%d", agent, id), nil, http.StatusOK, nil)
	}
	a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id2), nil, http.StatusOK, nil)
	reqID := a.refund(2500, "")["approval"].(map[string]any)["id"].(string)
	var other map[string]any
	a.call("POST", "/api/v1/evaluation", map[string]any{"agent_name": "other-bot", "stage": "pre",
		"step": map[string]any{"type": "tool", "name": "refund", "input": map[string]any{"order": "B-1", "amount": 5000}}}, http.StatusOK, &other)
	otherID := other["approval"].(map[string]any)["id"].(string)

	a.load("#/approvals/" + reqID)
	a.signIn(approverKey)
	a.waitRendered("#/approvals/" + reqID)
	a.waitJS("the approver banner", `/Approver key/.test(document.getElementById('banner').textContent)`)
	if s := a.text("#session"); !strings.Contains(s, "approver key") {
		t.Fatalf("session box = %q", s)
	}
	if ctls := a.text("#approval-controls"); !strings.Contains(ctls, "refund-over-limit") || !strings.Contains(ctls, "orders-a-need-accounts") ||
		!strings.Contains(ctls, "Orders A- need the account team") {
		t.Fatalf("controls = %q", ctls)
	}
	if en := eval[bool](a, "buttons enabled", `!document.getElementById('approve').disabled && !document.getElementById('reject').disabled`); !en {
		t.Fatal("an approve key cannot press approve")
	}
	if n := a.text("#approval-form"); strings.Contains(n, "cannot decide") {
		t.Fatalf("form = %q", n)
	}
	a.click("#approve")
	a.waitJS("the decision", `!!document.getElementById('approval-decided')`)
	if badge := a.text("#approval-facts .badge"); badge != "approved" {
		t.Fatalf("status badge after the approval = %q", badge)
	}
	if facts := a.text("#approval-facts"); !strings.Contains(facts, "finance-approver") {
		t.Fatalf("decided by = %q", facts)
	}
	var got map[string]any
	a.call("GET", "/api/v1/approvals/"+reqID, nil, http.StatusOK, &got)
	if got["status"] != "approved" || got["decided_by"] != "finance-approver" {
		t.Fatalf("approval = %v", got)
	}
	// The inbox lists it decided, under both controls' names.
	a.goTo("#/approvals")
	if h := a.text(`#approvals-history tr[data-id="` + reqID + `"]`); !strings.Contains(h, "approved") || !strings.Contains(h, "orders-a-need-accounts") {
		t.Fatalf("history row = %q", h)
	}
	// Another agent's request does not exist for this key.
	a.goTo("#/approvals/" + otherID)
	a.waitJS("not found", `/not found/i.test(document.getElementById('main').textContent)`)
	// Everything else stays read-only.
	a.goTo("#/controls")
	if dis := eval[bool](a, "new control disabled", `document.getElementById('new-control').disabled === true`); !dis {
		t.Fatal("an approve key may create controls")
	}
	a.noPageErrors()
}
