package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const auditPolicy = `controls:
  - name: block-drop
    data:
      scope: {stages: [pre]}
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: 'drop table'}}}
      action: {decision: deny}
  - name: billing-only
    data:
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: 'refund'}}}
      action: {decision: deny}
agents:
  - name: support-bot
    controls: [block-drop]
  - name: billing-bot
    controls: [billing-only]
`

// TestNamedKeysAndAuditEndToEnd: the binary reads GUARD_API_KEYS_FILE (one admin key given by its
// SHA-256, one runtime key scoped to support-bot); `guard apply` with the admin key, then a change of
// block-drop from deny to warn, are in `guard audit` with the key's name and the diff; the scoped key
// sees support-bot only (agents, audit, billing-bot a 404); the plaintext of the hashed key is printed
// nowhere (server logs included).
func TestNamedKeysAndAuditEndToEnd(t *testing.T) {
	dir := t.TempDir()
	const adminSecret = "e2e-release-manager-9c1d"
	const scopedSecret = "e2e-support-runtime-44ab"
	keyFile := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keyFile, []byte(fmt.Sprintf(`{"keys": [
		{"name": "release-manager", "sha256": "%x", "admin": true},
		{"name": "support-team", "key": %q, "agents": ["support-*"]}]}`, sha256.Sum256([]byte(adminSecret)), scopedSecret)), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServer(t, map[string]string{"DB_URL": filepath.Join(dir, "guard.db"), "GUARD_API_KEY_ENABLED": "true",
		"GUARD_API_KEYS_FILE": keyFile}, "serve", "--migrate")
	admin := []string{"GUARD_URL=" + p.base, "GUARD_API_KEY=" + adminSecret}
	scoped := []string{"GUARD_URL=" + p.base, "GUARD_API_KEY=" + scopedSecret}
	expectGuard(t, admin, 0, []string{"Applied."}, "apply", "-f", writePolicyFile(t, dir, "p.yaml", auditPolicy))
	expectGuard(t, admin, 0, []string{"Applied."}, "apply", "-f", writePolicyFile(t, dir, "warn.yaml",
		strings.Replace(auditPolicy, "action: {decision: deny}", "action: {decision: warn}", 1)))

	out := expectGuard(t, admin, 0, []string{"release-manager", "control.data_replaced control 2 v2 agents support-bot",
		`~ data.action.decision: "deny" -> "warn"`, "release-manager", "agent.control_linked"}, "audit", "--agent", "support-bot")
	if strings.Contains(out, "billing") {
		t.Errorf("--agent support-bot shows another agent's changes:\n%s", out)
	}
	expectGuard(t, admin, 0, []string{"agent.control_linked control 1 v1 agents billing-bot", "control.created control 1 v1",
		`+ name: "billing-only"`}, "audit", "--control", "1")
	// The scoped key: its agent's changes only; billing-bot is not there for it.
	out = expectGuard(t, scoped, 0, []string{"control.data_replaced control 2 v2"}, "audit")
	if strings.Contains(out, "billing") {
		t.Errorf("the scoped key reads billing-bot's changes:\n%s", out)
	}
	expectGuard(t, scoped, 1, []string{"agent not found"}, "audit", "--agent", "billing-bot")
	code, _, body := p.do("GET", "/api/v1/agents", nil, map[string]string{"X-API-Key": scopedSecret})
	if code != 200 || strings.Contains(string(body), "billing") || !strings.Contains(string(body), "support-bot") {
		t.Errorf("agents for the scoped key: %d %s", code, body)
	}
	if code, _, _ := p.do("GET", "/api/v1/agents/billing-bot", nil, map[string]string{"X-API-Key": scopedSecret}); code != 404 {
		t.Errorf("billing-bot for the scoped key: %d, want 404", code)
	}
	p.stop()
	if logs := p.stdout.String() + p.stderr.String(); strings.Contains(logs, adminSecret) || !strings.Contains(logs, `"key":"release-manager"`) {
		t.Errorf("server logs: the secret is shown or the key's name is not:\n%s", logs)
	}
}
