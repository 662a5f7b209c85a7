package ui_test

// The dashboard on a server with API-key authentication.

import (
	"fmt"
	"strings"
	"testing"
)

// signIn submits key through the login form.
func (a *app) signIn(key string) {
	a.t.Helper()
	a.waitJS("the login form", `!!document.getElementById('api-key') && document.getElementById('main').dataset.route === 'login'`)
	a.setValue("#api-key", key)
	a.click("#sign-in")
}

func TestLoginWrongKey(t *testing.T) {
	a := startApp(t, appOptions{auth: true})
	a.load("#/agents")
	a.waitJS("the login form", `document.getElementById('main').dataset.route === 'login'`)
	if got := a.text("#main"); !strings.Contains(got, "requires an API key") {
		t.Fatalf("login page = %q", got)
	}
	a.signIn("not-a-key")
	a.waitJS("the rejection message", `/was not accepted/.test((document.getElementById('login-error') || {}).textContent || '')`)
	// The rejected key is not kept, the form is still there and focused.
	if k := eval[string](a, "stored key", `sessionStorage.getItem('guard.apiKey') || ''`); k != "" {
		t.Fatalf("a rejected key is kept in the session: %q", k)
	}
	if id := eval[string](a, "focus", `document.activeElement ? document.activeElement.id : ''`); id != "api-key" {
		t.Fatalf("focus after a rejected key is on %q, want the key input", id)
	}
	a.noPageErrors()
}

func TestLoginAdminKeyCanWrite(t *testing.T) {
	a := startApp(t, appOptions{auth: true})
	a.load("#/controls")
	a.signIn(adminKey)
	a.waitRendered("#/controls")
	if b := a.text("#banner"); b != "" {
		t.Fatalf("banner for an admin key = %q", b)
	}
	if !eval[bool](a, "new control link", `document.getElementById('new-control').tagName === 'A'`) {
		t.Fatal("the New control link is not active for an admin key")
	}
	// The key is kept for the session: a reload stays signed in.
	a.open("#/controls/new")
	a.waitJS("the editor enabled", `!document.getElementById('save-control').disabled`)
	a.noPageErrors()
}

func TestReadOnlyKey(t *testing.T) {
	a := startApp(t, appOptions{auth: true})
	a.initAgent("support-bot", "answers customers")
	id := a.createControl("block-ssn", regexControl(`\d{3}-\d{2}-\d{4}`, "deny", "pre"))
	a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil, 200, nil)
	a.call("PUT", fmt.Sprintf("/api/v1/controls/%d/data", id), map[string]any{"data": regexControl(`\d{9}`, "warn", "pre")}, 200, nil)

	a.load("#/agents")
	a.signIn(regularKey)
	a.waitRendered("#/agents")
	a.waitJS("the read-only banner", `/Read-only/.test(document.getElementById('banner').textContent)`)
	if s := a.text("#session"); !strings.Contains(s, "read-only") {
		t.Fatalf("session box = %q", s)
	}

	// Every write control is disabled, on every page.
	pages := []struct {
		route    string
		disabled []string
	}{
		{"#/controls", []string{"#new-control"}},
		{fmt.Sprintf("#/controls/%d", id), []string{"#save-control", "#delete-control", "#toggle-enabled", "#ctl-name", "#ctl-condition"}},
		{"#/controls/new", []string{"#save-control"}},
		{fmt.Sprintf("#/controls/%d/history", id), []string{`button[data-restore="1"]`}},
		{"#/agents/support-bot", []string{fmt.Sprintf("#enabled-%d", id), fmt.Sprintf(`button[data-unlink="%d"]`, id), "#link-submit", "#link-control"}},
	}
	for _, p := range pages {
		a.goTo(p.route)
		for _, sel := range p.disabled {
			if !eval[bool](a, "disabled "+sel, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.disabled === true; })()`, sel)) {
				t.Errorf("%s: %s is missing or not disabled for a read-only key", p.route, sel)
			}
		}
	}
	// Reading still works: the statistics and the history diff load.
	a.goTo("#/agents/support-bot")
	a.waitJS("statistics", `!!document.querySelector('[data-stat="execution_count"]')`)
	a.goTo(fmt.Sprintf("#/controls/%d/history", id))
	a.waitJS("the diff", `!!document.querySelector('#diff-output .add')`)
	a.noPageErrors()
}
