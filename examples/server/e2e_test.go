package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrail-control/guard/store/storetest"
)

// decide posts an evaluation of an llm step named chat and returns its decision.
func (p *proc) decide(agent, stage, input string) string {
	p.t.Helper()
	m := p.call(200, "POST", "/api/v1/evaluation", map[string]any{
		"agent_name": agent, "stage": stage, "step": map[string]any{"type": "llm", "name": "chat", "input": input}})
	return m["decision"].(string)
}

func regex(pattern, decision string) map[string]any {
	d := map[string]any{
		"condition": map[string]any{"selector": map[string]any{"path": "input"},
			"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": pattern}}},
		"action": map[string]any{"decision": decision},
	}
	if decision == "steer" {
		d["action"].(map[string]any)["steering_context"] = map[string]any{"message": "ask for consent first"}
	}
	return d
}

// typicalFlow is the flow of issue 4 point 8.
func typicalFlow(t *testing.T, p *proc) {
	id := int64(p.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "block-ssn"})["control_id"].(float64))
	c := fmt.Sprintf("/api/v1/controls/%d", id)
	p.call(200, "PUT", c+"/data", map[string]any{"data": regex(`\b\d{3}-\d{2}-\d{4}\b`, "deny")})
	steer := int64(p.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "steer-email", "data": regex(`send email`, "steer")})["control_id"].(float64))
	warn := int64(p.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "warn-refund", "data": regex(`refund`, "warn")})["control_id"].(float64))
	p.call(200, "POST", "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": "support-bot"},
		"steps": []any{map[string]any{"type": "llm", "name": "chat"}, map[string]any{"type": "tool", "name": "search", "input_schema": map[string]any{"type": "object"}}},
	})
	for _, x := range []int64{id, steer, warn} {
		p.call(200, "POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", x), nil)
	}
	for input, want := range map[string]string{"my ssn is 123-45-6789": "deny", "please send email": "steer", "hello": "allow", "refund me": "allow"} {
		if got := p.decide("support-bot", "pre", input); got != want {
			t.Fatalf("%q: %s, want %s", input, got, want)
		}
	}
	m := p.call(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "support-bot", "stage": "pre",
		"step": map[string]any{"type": "llm", "name": "chat", "input": "refund me"}})
	if len(m["matches"].([]any)) != 1 || m["matches"].([]any)[0].(map[string]any)["action"] != "warn" {
		t.Fatalf("warn match: %v", m)
	}
	// Edit data: the new behaviour applies at once.
	p.call(200, "PUT", c+"/data", map[string]any{"data": regex(`hello`, "deny")})
	if got := p.decide("support-bot", "pre", "hello"); got != "deny" {
		t.Fatalf("after edit: %s", got)
	}
	if got := p.decide("support-bot", "pre", "my ssn is 123-45-6789"); got != "allow" {
		t.Fatalf("after edit, old pattern: %s", got)
	}
	// Unlink, then delete: 409 while linked elsewhere... relink, 409, then force.
	p.call(200, "DELETE", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil)
	if got := p.decide("support-bot", "pre", "hello"); got != "allow" {
		t.Fatalf("after unlink: %s", got)
	}
	m = p.call(409, "DELETE", fmt.Sprintf("/api/v1/controls/%d", steer), nil)
	if m["error_code"] != "CONTROL_IN_USE" {
		t.Fatalf("409: %v", m)
	}
	p.call(200, "DELETE", fmt.Sprintf("/api/v1/controls/%d?force=true", steer), nil)
	if got := p.decide("support-bot", "pre", "please send email"); got != "allow" {
		t.Fatalf("after force delete: %s", got)
	}
	p.call(200, "DELETE", c, nil)
	p.call(404, "GET", c, nil)
}

func TestEndToEndSQLite(t *testing.T) {
	db := filepath.Join(t.TempDir(), "guard.db")
	p := startServer(t, map[string]string{"DB_URL": db}, "serve", "--migrate")
	typicalFlow(t, p)
	p.call(200, "GET", "/openapi.json", nil)
	p.stop()

	// The data survives a restart; the schema is current, so plain serve starts.
	p = startServer(t, map[string]string{"DB_URL": "sqlite://" + db})
	m := p.call(200, "GET", "/api/v1/controls", nil)
	if len(m["controls"].([]any)) != 1 {
		t.Fatalf("after restart: %v", m)
	}
	p.stop()
}

func TestEndToEndAuthAndPages(t *testing.T) {
	db := filepath.Join(t.TempDir(), "guard.db")
	p := startServer(t, map[string]string{"DB_URL": db, "GUARD_API_KEY_ENABLED": "true",
		"GUARD_API_KEYS": "reg-key", "GUARD_ADMIN_API_KEYS": "adm-key", "DEBUG": "true"}, "serve", "--migrate")
	for _, tc := range []struct {
		method, path, key string
		want              int
	}{
		{"GET", "/api/v1/controls", "", 401},
		{"GET", "/api/v1/controls", "wrong", 401},
		{"GET", "/api/v1/controls", "reg-key", 200},
		{"PUT", "/api/v1/controls", "reg-key", 403},
		{"PUT", "/api/v1/controls", "adm-key", 200},
		{"GET", "/health", "", 200},
		{"GET", "/docs", "", 200},
		{"GET", "/metrics", "", 200},
		{"GET", "/ui/", "", 200},
		{"GET", "/", "", 200}, // redirected to the dashboard
	} {
		req, _ := http.NewRequest(tc.method, p.base+tc.path, strings.NewReader(`{"name":"k"}`))
		req.Header.Set("Content-Type", "application/json")
		if tc.key != "" {
			req.Header.Set("X-API-Key", tc.key)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != tc.want {
			t.Errorf("%s %s (key %q): %d, want %d", tc.method, tc.path, tc.key, r.StatusCode, tc.want)
		}
	}
	p.stop()
}

// TestGracefulShutdownFinishesInFlight: a request whose body is still arriving when SIGTERM or SIGINT
// comes is completed, new connections are refused, and the process exits 0 (issue 4 point 6).
func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	for name, sig := range map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "SIGINT": syscall.SIGINT} {
		t.Run(name, func(t *testing.T) { gracefulShutdown(t, sig) })
	}
}

// gracefulShutdown sends sig while a request is in flight and checks the request completes and the
// process exits with code 0.
func gracefulShutdown(t *testing.T, sig syscall.Signal) {
	p := startServer(t, map[string]string{"DB_URL": filepath.Join(t.TempDir(), "guard.db")}, "serve", "--migrate")
	host := strings.TrimPrefix(p.base, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"name":"in-flight"}`
	// Expect: 100-continue makes the server answer "100 Continue" when the handler starts reading the
	// body: from then on the request is in flight.
	fmt.Fprintf(conn, "PUT /api/v1/controls HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", host, len(body))
	br := bufio.NewReader(conn)
	cont, err := http.ReadResponse(br, nil)
	if err != nil || cont.StatusCode != http.StatusContinue {
		t.Fatalf("100 Continue: %v %v", cont, err)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for { // wait until the listener is closed: shutdown has begun
		c, err := net.DialTimeout("tcp", host, 200*time.Millisecond)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the listener stayed open after %v", sig)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := conn.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("in-flight request: %v\n%s", err, p.stderr)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("in-flight request: %d", resp.StatusCode)
	}
	if !p.exitedWithin(30 * time.Second) {
		t.Fatal("no exit after the in-flight request finished")
	}
	if p.err != nil || p.cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("exit after %v: %v (code %d), want a graceful exit with code 0\n%s", sig, p.err, p.cmd.ProcessState.ExitCode(), p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "shutting down") {
		t.Fatalf("no \"shutting down\" log line after %v: the signal did not go through the graceful path\n%s", sig, p.stderr)
	}
}

func TestEndToEndPostgres(t *testing.T) {
	url := storetest.PostgresURL(t)
	p := startServer(t, map[string]string{"DATABASE_URL": url}, "serve", "--migrate")
	typicalFlow(t, p)
	p.stop()
}

// TestReplicasPostgres: two server processes on one PostgreSQL database; a change made through A is
// enforced by B within one second.
func TestReplicasPostgres(t *testing.T) {
	url := storetest.PostgresURL(t)
	a := startServer(t, map[string]string{"DATABASE_URL": url}, "serve", "--migrate")
	b := startServer(t, map[string]string{"DATABASE_URL": url})
	a.call(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "bot"}})
	id := int64(a.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "c", "data": regex("secret", "deny")})["control_id"].(float64))
	a.call(200, "POST", fmt.Sprintf("/api/v1/agents/bot/controls/%d", id), nil)
	if got := b.decide("bot", "pre", "a secret"); got != "deny" {
		t.Fatalf("B: %s", got)
	}
	for _, step := range []struct {
		change func()
		want   string
	}{
		{func() { a.call(200, "PATCH", fmt.Sprintf("/api/v1/controls/%d", id), map[string]any{"enabled": false}) }, "allow"},
		{func() { a.call(200, "PATCH", fmt.Sprintf("/api/v1/controls/%d", id), map[string]any{"enabled": true}) }, "deny"},
		{func() {
			a.call(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", id), map[string]any{"data": regex("other", "deny")})
		}, "allow"},
	} {
		step.change()
		start := time.Now()
		for b.decide("bot", "pre", "a secret") != step.want {
			if time.Since(start) > time.Second {
				t.Fatalf("B did not enforce the change within 1s (want %s)", step.want)
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("B enforced the change after %v", time.Since(start))
	}
	a.stop()
	b.stop()
}

func TestServeRefusesPendingMigrations(t *testing.T) {
	storetest.SkipWithoutSQLite(t)
	bin := buildServer(t)
	db := filepath.Join(t.TempDir(), "fresh.db")
	out, err := runBin(bin, []string{"DB_URL=" + db, "PORT=0", "HOST=127.0.0.1"}, "serve")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(out, "migrate") {
		t.Fatalf("serve on a fresh database: %v\n%s", err, out)
	}
	if out, err := runBin(bin, []string{"DB_URL=" + db}, "migrate"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
}

func TestMalformedEnvironmentStops(t *testing.T) {
	bin := buildServer(t)
	for _, kv := range []string{"PORT=http", "DEBUG=perhaps", "GUARD_API_KEY_ENABLED=true"} {
		out, err := runBin(bin, []string{kv, "DB_URL=" + filepath.Join(t.TempDir(), "x.db")}, "serve", "--migrate")
		name := strings.SplitN(kv, "=", 2)[0]
		if err == nil || !strings.Contains(out, name) {
			t.Errorf("%s: %v\n%s", kv, err, out)
		}
	}
}
