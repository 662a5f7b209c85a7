package ui_test

// The Keys page (issue 36): an admin makes a key from the dashboard and sees its secret once; the key
// works; the list never shows a secret; revoking it from its row makes the server refuse it. A regular key
// gets the server's 403 on the page.

import (
	"net/http"
	"strings"
	"testing"
)

// statusWith is the status of GET /api/v1/agents with key.
func statusWith(t *testing.T, a *app, key string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", a.url+"/api/v1/agents", nil)
	req.Header.Set("X-API-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func TestKeysPage(t *testing.T) {
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			a := startApp(t, appOptions{auth: true, width: w.width, height: w.height})
			a.load("#/keys")
			a.signIn(adminKey)
			a.waitRendered("#/keys")
			if got := a.text("#main table"); !strings.Contains(got, "unnamed-admin-1") || !strings.Contains(got, "environment") {
				t.Fatalf("keys table = %q", got)
			}
			a.setValue(`#new-key input[name="name"]`, "wall-screen")
			a.setValue(`#new-key select[name="role"]`, "read")
			a.setValue(`#new-key input[name="expires_in"]`, "720h")
			a.click(`#new-key button[type="submit"]`)
			a.waitJS("the new secret", `!!document.getElementById('new-secret')`)
			secret := eval[string](a, "secret", `document.getElementById('new-secret').value`)
			if !strings.HasPrefix(secret, "gk_") {
				t.Fatalf("secret shown = %q", secret)
			}
			if got := statusWith(t, a, secret); got != http.StatusOK {
				t.Fatalf("the new key answers %d", got)
			}
			if strings.Contains(a.text("#main table"), secret) {
				t.Fatal("the table shows a secret")
			}
			if probs := eval[[]string](a, "a11y checks", a11yProblems); len(probs) > 0 {
				t.Errorf("keys page at %d px:\n  %s", w.width, strings.Join(probs, "\n  "))
			}
			a.do("accept confirmations", evalVoid(`window.confirm = () => true`))
			a.click(`tr[data-key="wall-screen"] button.revoke`)
			a.waitJS("the revoked status", `/revoked/.test((document.querySelector('tr[data-key="wall-screen"]') || {}).textContent || '')`)
			if got := statusWith(t, a, secret); got != http.StatusUnauthorized {
				t.Fatalf("the revoked key answers %d", got)
			}
			if a.text("#new-secret") != "" {
				t.Fatal("the secret is still shown after another change")
			}
			a.noPageErrors()
		})
	}
}

func TestKeysPageRegularKey(t *testing.T) {
	a := startApp(t, appOptions{auth: true})
	a.load("#/keys")
	a.signIn(regularKey)
	a.waitJS("the refusal", `/admin API key/.test(document.getElementById('main').textContent)`)
}
