package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard/apikey"
	"github.com/guardrail-control/guard/server/problem"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestRuntimeKeys walks the life of a key made at runtime, as an operator would: create (the secret
// shown once), use, list (never a secret), rotate (the old secret refused at once), revoke (refused at
// once), each change in the audit trail without the secret.
func TestRuntimeKeys(t *testing.T) {
	ts := newTS(t, WithAuth(true, nil, []string{"root-admin"}), WithKeyPollInterval(0))
	admin := []string{APIKeyHeader, "root-admin"}
	ts.initAgentAs("support-bot", admin...)

	created := ts.ok(201, "POST", "/api/v1/keys", map[string]any{"name": "support-bot", "role": "runtime",
		"agents": []string{"support-bot"}, "expires_in": "720h"}, admin...)
	secret, _ := created["key"].(string)
	if !strings.HasPrefix(secret, "gk_") || created["status"] != "active" || created["source"] != "api" || created["created_by"] != "unnamed-admin-1" {
		t.Fatalf("created: %v", created)
	}
	use := []string{APIKeyHeader, secret}
	eval := map[string]any{"agent_name": "support-bot", "stage": "pre", "step": map[string]any{"type": "llm", "name": "chat", "input": "hi"}}
	ts.ok(200, "POST", "/api/v1/evaluation", eval, use...)
	// Its scope holds: another agent is not there for it; admin routes are refused.
	ts.expectProblem(404, problem.CodeAgentNotFound, "GET", "/api/v1/agents/other-bot", nil, use...)
	ts.expectProblem(403, problem.CodeAuthInsufficient, "PUT", "/api/v1/controls", map[string]any{"name": "x"}, use...)

	// Listing never shows a secret, and names the configured keys too.
	list := ts.do("GET", "/api/v1/keys", nil, admin...)
	if list.Code != 200 || strings.Contains(string(list.Body), secret) || strings.Contains(string(list.Body), apikey.Digest(secret)) {
		t.Fatalf("list: %d %s", list.Code, list.Body)
	}
	for _, want := range []string{`"name":"support-bot"`, `"source":"api"`, `"name":"unnamed-admin-1"`, `"source":"environment"`} {
		if !strings.Contains(string(list.Body), want) {
			t.Errorf("list lacks %s: %s", want, list.Body)
		}
	}

	// Rotation: a new secret works, the old one is refused at once.
	rotated := ts.ok(200, "POST", "/api/v1/keys/support-bot/rotate", nil, admin...)
	newSecret, _ := rotated["key"].(string)
	if newSecret == "" || newSecret == secret || rotated["rotated_at"] == nil {
		t.Fatalf("rotated: %v", rotated)
	}
	ts.expectProblem(401, problem.CodeAuthInvalidKey, "POST", "/api/v1/evaluation", eval, use...)
	ts.ok(200, "POST", "/api/v1/evaluation", eval, APIKeyHeader, newSecret)

	// Revocation: refused at once; a revoked key can be neither rotated nor revoked again, and its name stays taken.
	revoked := ts.ok(200, "DELETE", "/api/v1/keys/support-bot", nil, admin...)
	if revoked["status"] != "revoked" || revoked["revoked_by"] != "unnamed-admin-1" {
		t.Fatalf("revoked: %v", revoked)
	}
	ts.expectProblem(401, problem.CodeAuthInvalidKey, "POST", "/api/v1/evaluation", eval, APIKeyHeader, newSecret)
	ts.expectProblem(409, CodeKeyRevoked, "POST", "/api/v1/keys/support-bot/rotate", nil, admin...)
	ts.expectProblem(409, CodeKeyRevoked, "DELETE", "/api/v1/keys/support-bot", nil, admin...)
	ts.expectProblem(409, CodeKeyExists, "POST", "/api/v1/keys", map[string]any{"name": "support-bot", "role": "runtime"}, admin...)
	ts.expectProblem(404, CodeKeyNotFound, "DELETE", "/api/v1/keys/nobody", nil, admin...)

	// The audit trail has the three changes with who made them, never a secret.
	audit := ts.do("GET", "/api/v1/audit", nil, admin...)
	for _, want := range []string{"key.created", "key.rotated", "key.revoked"} {
		if !strings.Contains(string(audit.Body), want) {
			t.Errorf("audit trail lacks %s: %s", want, audit.Body)
		}
	}
	for _, s := range []string{secret, newSecret, apikey.Digest(secret), apikey.Digest(newSecret)} {
		if strings.Contains(string(audit.Body), s) {
			t.Errorf("the audit trail holds a secret or its digest")
		}
	}
}

// TestRuntimeKeyRoles: each role reaches what the key file's keys of that kind reach; a read key reads.
func TestRuntimeKeyRoles(t *testing.T) {
	ts := newTS(t, WithAuth(true, nil, []string{"root-admin"}), WithKeyPollInterval(0))
	admin := []string{APIKeyHeader, "root-admin"}
	ts.initAgentAs("a1", admin...)
	secrets := map[string]string{}
	for _, role := range apikey.Roles {
		b := ts.ok(201, "POST", "/api/v1/keys", map[string]any{"name": "k-" + string(role), "role": string(role)}, admin...)
		secrets[string(role)] = b["key"].(string)
	}
	eval := map[string]any{"agent_name": "a1", "stage": "pre", "step": map[string]any{"type": "llm", "name": "chat", "input": "hi"}}
	for _, c := range []struct {
		role           string
		read, evaluate int
		createControl  int
		keys           int
	}{
		{"admin", 200, 200, 200, 200},
		{"runtime", 200, 200, 403, 403},
		{"approve", 200, 200, 403, 403},
		{"read", 200, 403, 403, 403},
	} {
		key := []string{APIKeyHeader, secrets[c.role]}
		if r := ts.do("GET", "/api/v1/agents/a1", nil, key...); r.Code != c.read {
			t.Errorf("%s: GET agent %d, want %d", c.role, r.Code, c.read)
		}
		if r := ts.do("POST", "/api/v1/observability/events/query", map[string]any{"agent_name": "a1"}, key...); c.read == 200 && r.Code == 403 {
			t.Errorf("%s: the events query is a read: %d", c.role, r.Code)
		}
		if r := ts.do("POST", "/api/v1/evaluation", eval, key...); r.Code != c.evaluate {
			t.Errorf("%s: evaluation %d, want %d %s", c.role, r.Code, c.evaluate, r.Body)
		}
		if r := ts.do("PUT", "/api/v1/controls", map[string]any{"name": "c-" + c.role}, key...); r.Code != c.createControl {
			t.Errorf("%s: create control %d, want %d", c.role, r.Code, c.createControl)
		}
		if r := ts.do("GET", "/api/v1/keys", nil, key...); r.Code != c.keys {
			t.Errorf("%s: list keys %d, want %d", c.role, r.Code, c.keys)
		}
	}
}

// TestRuntimeKeyExpiry: an expired key is refused at the first request past its expiry, without waiting
// for a poll.
func TestRuntimeKeyExpiry(t *testing.T) {
	ts := newTS(t, WithAuth(true, nil, []string{"root-admin"}), WithKeyPollInterval(0))
	admin := []string{APIKeyHeader, "root-admin"}
	b := ts.ok(201, "POST", "/api/v1/keys", map[string]any{"name": "short", "role": "read", "expires_in": "1s"}, admin...)
	key := []string{APIKeyHeader, b["key"].(string)}
	ts.ok(200, "GET", "/api/v1/agents", nil, key...)
	exp, err := time.Parse(time.RFC3339Nano, b["expires_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(exp) + time.Millisecond) // the expiry itself is what is tested
	ts.expectProblem(401, problem.CodeAuthInvalidKey, "GET", "/api/v1/agents", nil, key...)
	if got := ts.ok(200, "GET", "/api/v1/keys/short", nil, admin...); got["status"] != "expired" {
		t.Errorf("status %v, want expired", got["status"])
	}
}

// TestRuntimeKeysBadInput: every bad field in one 422, strict fields, reserved and configured names, and a
// key limited to agents may not manage keys.
func TestRuntimeKeysBadInput(t *testing.T) {
	named := []Key{{Name: "file-admin", Key: "file-admin-secret", Admin: true}, {Name: "team-admin", Key: "team-secret", Admin: true, Agents: []string{"team-*"}}}
	ts := newTS(t, WithAuth(true, nil, []string{"root-admin"}), WithKeys(named), WithKeyPollInterval(0))
	admin := []string{APIKeyHeader, "root-admin"}
	b := ts.expectProblem(422, problem.CodeValidation, "POST", "/api/v1/keys", map[string]any{"name": "bad name", "role": "root",
		"agents": []string{""}, "expires_at": "2001-01-01T00:00:00Z"}, admin...)
	fields := map[string]bool{}
	for _, p := range b.Errors {
		fields[p.Field] = true
	}
	for _, f := range []string{"name", "role", "agents.0", "expires_at"} {
		if !fields[f] {
			t.Errorf("422 does not name %s: %+v", f, b.Errors)
		}
	}
	ts.expectProblem(422, problem.CodeValidation, "POST", "/api/v1/keys", map[string]any{"name": "k", "role": "read", "secret": "mine"}, admin...)
	ts.expectProblem(422, problem.CodeValidation, "POST", "/api/v1/keys", map[string]any{"name": "unnamed-x", "role": "read"}, admin...)
	ts.expectProblem(422, problem.CodeValidation, "POST", "/api/v1/keys", map[string]any{"name": "k", "role": "read", "expires_in": "-1h"}, admin...)
	ts.expectProblem(409, CodeKeyExists, "POST", "/api/v1/keys", map[string]any{"name": "file-admin", "role": "read"}, admin...)
	ts.expectProblem(403, CodeAuthOutOfScope, "POST", "/api/v1/keys", map[string]any{"name": "k", "role": "admin"}, APIKeyHeader, "team-secret")
	// A configured key is listed and read, but not rotated or revoked here.
	if got := ts.ok(200, "GET", "/api/v1/keys/file-admin", nil, admin...); got["source"] != "file" || got["role"] != "admin" {
		t.Errorf("file key: %v", got)
	}
	ts.expectProblem(404, CodeKeyNotFound, "DELETE", "/api/v1/keys/file-admin", nil, admin...)
}

// TestKeyFileReload: SetKeyFile puts a new key file in force at once; a refused file leaves the old one.
func TestKeyFileReload(t *testing.T) {
	ts := newTS(t, WithAuth(true, nil, []string{"root-admin"}), WithKeys([]Key{{Name: "old", Key: "old-secret"}}), WithKeyPollInterval(0))
	ts.ok(200, "GET", "/api/v1/agents", nil, APIKeyHeader, "old-secret")
	if err := ts.srv.SetKeyFile([]Key{{Name: "new", Key: "new-secret"}}); err != nil {
		t.Fatal(err)
	}
	ts.expectProblem(401, problem.CodeAuthInvalidKey, "GET", "/api/v1/agents", nil, APIKeyHeader, "old-secret")
	ts.ok(200, "GET", "/api/v1/agents", nil, APIKeyHeader, "new-secret")
	if err := ts.srv.SetKeyFile([]Key{{Name: "dup", Key: "root-admin"}}); err == nil {
		t.Fatal("a key file sharing a secret with GUARD_ADMIN_API_KEYS was accepted")
	}
	ts.ok(200, "GET", "/api/v1/agents", nil, APIKeyHeader, "new-secret")
}

// TestRuntimeKeysAcrossServers: two servers on one database; a key made on one works on the other after
// its poll, and a revocation on one is refused by the other within the poll interval.
func TestRuntimeKeysAcrossServers(t *testing.T) {
	st := storetest.SQLite(t)
	a := newTSOn(t, st, WithAuth(true, nil, []string{"root-admin"}), WithKeyPollInterval(20*time.Millisecond))
	b := newTSOn(t, st, WithAuth(true, nil, []string{"root-admin"}), WithKeyPollInterval(20*time.Millisecond))
	admin := []string{APIKeyHeader, "root-admin"}
	secret := a.ok(201, "POST", "/api/v1/keys", map[string]any{"name": "shared", "role": "read"}, admin...)["key"].(string)
	waitStatus(t, b, secret, 200)
	a.ok(200, "DELETE", "/api/v1/keys/shared", nil, admin...)
	waitStatus(t, b, secret, 401)
}

// waitStatus polls GET /agents with key until the answer has status want (the other server's poll).
func waitStatus(t *testing.T, ts *tserver, key string, want int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		if r := ts.do("GET", "/api/v1/agents", nil, APIKeyHeader, key); r.Code == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the other server never answered %d", want)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// initAgentAs registers an agent with one llm step, with the given headers (a key).
func (ts *tserver) initAgentAs(name string, hdr ...string) {
	ts.t.Helper()
	ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": name}, "steps": []map[string]any{{"type": "llm", "name": "chat"}}}, hdr...)
}
