package ui_test

// On-call papercuts (issue 36): an event's detail says which API key sent the step and why it was
// refused; an event of a step an approval control refused links to its request; the approvals inbox tells two
// requests of the same tool apart by their arguments and shows times with their time zone.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestEventDetailSaysWhoAndWhy(t *testing.T) {
	a := startApp(t, appOptions{auth: true})
	a.initAgent("support-bot", "answers customers")
	data := regexControl(`\b\d{3}-\d{2}-\d{4}\b`, "deny")
	data["action"] = map[string]any{"decision": "deny", "metadata": map[string]any{"reason": "no SSNs in prompts"}}
	id := a.createControl("block-ssn", data)
	a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil, http.StatusOK, nil)
	if got := a.evaluate("support-bot", "pre", "my ssn is 123-45-6789"); got != "deny" {
		t.Fatalf("decision %s", got)
	}
	approval := a.createControl("refund-over-limit", refundApprovalControl())
	a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", approval), nil, http.StatusOK, nil)
	apv := a.refund(2500, "")["approval"].(map[string]any)["id"].(string)
	a.refund(1200, "")
	a.flushEvents()

	a.load(fmt.Sprintf("#/events?control=%d&matched=true", id))
	a.signIn(adminKey)
	a.waitJS("the denial", `document.querySelectorAll('#events-results tbody tr').length === 1`)
	a.click(`#events-results button[data-details]`)
	a.waitJS("the detail dialog", `!!document.querySelector('#event-detail[open]')`)
	if got := a.text("#event-reason"); !strings.Contains(got, "no SSNs in prompts") {
		t.Errorf("reason shown = %q", got)
	}
	if got := a.text("#event-key"); got != "unnamed-admin-1" {
		t.Errorf("key shown = %q", got)
	}
	a.click("#close-event")

	a.goTo(fmt.Sprintf("#/events?control=%d&matched=true", approval))
	a.waitJS("the approval events", `document.querySelectorAll('#events-results tbody tr').length === 2`)
	a.click(`#events-results button[data-details]`)
	a.waitJS("the detail dialog", `!!document.querySelector('#event-detail[open]')`)
	href := eval[string](a, "approval link", `(document.getElementById('event-approval') || {}).getAttribute ? document.getElementById('event-approval').getAttribute('href') : ''`)
	if !strings.HasPrefix(href, "#/approvals/") {
		t.Fatalf("approval link = %q", href)
	}
	a.click("#event-approval")
	a.waitJS("the request page", `location.hash.startsWith('#/approvals/') && document.getElementById('main').getAttribute('aria-busy') === 'false'`)

	a.goTo("#/approvals")
	a.waitRendered("#/approvals")
	row := a.text(`#approvals-pending tr[data-id="` + apv + `"]`)
	if !strings.Contains(row, "amount=2500") {
		t.Errorf("inbox row = %q: no argument summary", row)
	}
	if !strings.Contains(a.text("#approvals-pending"), "amount=1200") {
		t.Errorf("the second refund is not told apart: %q", a.text("#approvals-pending"))
	}
	if !eval[bool](a, "zone in times", `[...document.querySelectorAll('#approvals-pending tbody td')].some(td => /(UTC|GMT|[A-Z]{3,4})$/.test(td.textContent.trim()))`) {
		t.Error("the inbox's times carry no time zone")
	}
	a.noPageErrors()
}
