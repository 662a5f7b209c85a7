package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrail-control/guard/store/storetest"
)

// TestKeysAtRuntimeTwoReplicas: two real `guard serve` processes on one PostgreSQL database. A key made
// through `guard keys create` on replica A works on B; revoked through A, it is refused by B within 1 s;
// rotated, its old secret is refused by both. The file key bootstraps; the audit trail has every change.
func TestKeysAtRuntimeTwoReplicas(t *testing.T) {
	url := storetest.PostgresURL(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keyFile, []byte(`{"keys":[{"name":"ops","key":"ops-bootstrap-secret","admin":true}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": url, "GUARD_API_KEY_ENABLED": "true", "GUARD_API_KEYS_FILE": keyFile}
	a := startServer(t, env, "serve", "--migrate")
	b := startServer(t, env, "serve")
	bin := buildServer(t)
	guard := func(key string, args ...string) string {
		t.Helper()
		out, err := runBin(bin, []string{"GUARD_URL=" + a.base, "GUARD_API_KEY=" + key}, args...)
		if err != nil {
			t.Fatalf("guard %v: %v\n%s", args, err, out)
		}
		return out
	}
	ops := map[string]string{"X-API-Key": "ops-bootstrap-secret"}
	status := func(p *proc, key string) int {
		code, _, _ := p.do("GET", "/api/v1/agents", nil, map[string]string{"X-API-Key": key})
		return code
	}
	waitFor := func(p *proc, key string, want int, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for status(p, key) != want {
			if time.Since(start) > within {
				t.Fatalf("%s still answers %d, not %d, %v after the change", p.base, status(p, key), want, within)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return time.Since(start)
	}

	out := guard("ops-bootstrap-secret", "keys", "create", "dashboard-wall", "--role", "read", "--agents", "support-*")
	secret := lastLine(out)
	if !strings.HasPrefix(secret, "gk_") {
		t.Fatalf("guard keys create printed %q", out)
	}
	waitFor(b, secret, 200, time.Second)
	// A read key reads and does nothing else, on either replica.
	if code, _, body := b.do("POST", "/api/v1/evaluation", map[string]any{"agent_name": "support-bot", "stage": "pre",
		"step": map[string]any{"type": "llm", "name": "chat", "input": "x"}}, map[string]string{"X-API-Key": secret}); code != 403 {
		t.Errorf("a read key evaluated: %d %s", code, body)
	}
	list := guard("ops-bootstrap-secret", "keys", "list")
	if !strings.Contains(list, "dashboard-wall") || !strings.Contains(list, "read") || strings.Contains(list, secret) {
		t.Errorf("guard keys list:\n%s", list)
	}

	// Rotation through A: the old secret is refused by both replicas within 1 s, the new one works.
	rotated := lastLine(guard("ops-bootstrap-secret", "keys", "rotate", "dashboard-wall"))
	waitFor(a, secret, 401, time.Second)
	t.Logf("rotation refused on B after %v", waitFor(b, secret, 401, time.Second))
	waitFor(b, rotated, 200, time.Second)

	// Revocation through A: refused by B within 1 s.
	guard("ops-bootstrap-secret", "keys", "revoke", "dashboard-wall")
	t.Logf("revocation refused on B after %v", waitFor(b, rotated, 401, time.Second))

	// The audit trail, read on B, has the three changes by ops, and no secret.
	_, _, audit := b.do("GET", "/api/v1/audit?action=key.revoked", nil, ops)
	if !strings.Contains(string(audit), `"key_name":"ops"`) {
		t.Errorf("audit: %s", audit)
	}
	_, _, all := b.do("GET", "/api/v1/audit", nil, ops)
	for _, s := range []string{secret, rotated} {
		if strings.Contains(string(all), s) {
			t.Error("the audit trail holds a secret")
		}
	}
	var page struct {
		Entries []struct{ Action string } `json:"entries"`
	}
	_ = json.Unmarshal(all, &page)
	actions := map[string]bool{}
	for _, e := range page.Entries {
		actions[e.Action] = true
	}
	for _, want := range []string{"key.created", "key.rotated", "key.revoked"} {
		if !actions[want] {
			t.Errorf("the audit trail lacks %s: %v", want, actions)
		}
	}
	for _, p := range []*proc{a, b} {
		if strings.Contains(p.stderr.String(), secret) || strings.Contains(p.stderr.String(), rotated) {
			t.Error("a secret is in the server's log")
		}
	}

	// The key file is read again without a restart: on SIGHUP, and when it changes.
	if err := os.WriteFile(keyFile, []byte(`{"keys":[{"name":"ops2","key":"ops-second-secret","admin":true}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(a, "ops-second-secret", 200, 5*time.Second)
	waitFor(a, "ops-bootstrap-secret", 401, time.Second)
	waitFor(b, "ops-second-secret", 200, 10*time.Second) // B saw the file change (checked every 2 s)
	// A file that does not load leaves the keys in force.
	if err := os.WriteFile(keyFile, []byte(`{"keys":[{"name":"ops2","key":"ops-second-secret","admin":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(a.stderr.String(), "the key file was not reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("no log of the refused key file:\n%s", a.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if status(a, "ops-second-secret") != 200 {
		t.Error("a bad key file locked the admin out")
	}
}

// lastLine is the last non-empty line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
