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
	if n := a.text("#approval-form"); !strings.Contains(n, "read-only key cannot decide") {
		t.Fatalf("form = %q", n)
	}
	a.noPageErrors()
}
