package main

import (
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/store/storetest"
)

// TestStartupLineNeverShowsThePassword runs the server on PostgreSQL with a password in DATABASE_URL
// (the test server trusts every login, so any password connects): the start-up line names the version,
// the address, the database kind and host, auth and observability and the counts, and the password
// appears nowhere in stdout or stderr, through requests, errors and shutdown. A server that cannot
// connect, and a malformed URL, do not print it either.
func TestStartupLineNeverShowsThePassword(t *testing.T) {
	const password = "Pw-e2e-S3cret-41"
	u, err := url.Parse(storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), password)
	p := startServer(t, map[string]string{"DATABASE_URL": u.String()}, "serve", "--migrate")
	p.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "c1", "data": regex("x", "deny")})
	p.do("GET", "/api/v1/controls/999", nil, nil)
	p.do("GET", "/ready", nil, nil)
	p.stop()
	out := p.stdout.String() + p.stderr.String()
	for _, want := range []string{`"msg":"guard started"`, `"version":"` + version + `"`, `"database":"postgres"`,
		`"database_at":"` + u.Host + u.Path + `"`, `"auth":false`, `"observability":true`, `"controls":0`, `"agents":0`,
		`"addr":"` + strings.TrimPrefix(p.base, "http://") + `"`, `"msg":"request"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if n := strings.Count(out, `"msg":"guard started"`); n != 1 {
		t.Errorf("%d start-up lines, want 1", n)
	}
	if strings.Contains(out, password) {
		t.Fatalf("the password appears in the output:\n%s", out)
	}

	// A database that does not answer, and a URL that does not parse: the error names the variable, not the password.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for _, dbURL := range []string{
		"postgres://postgres:" + password + "@" + closed + "/x?sslmode=disable&connect_timeout=2",
		"postgres://postgres:" + password + "@127.0.0.1:notaport/x",
	} {
		got, err := runBin(buildServer(t), []string{"DATABASE_URL=" + dbURL}, "serve")
		if err == nil || strings.Contains(got, password) || !strings.Contains(got, "DATABASE_URL") {
			t.Errorf("serve on %s: %v\n%s", strings.ReplaceAll(dbURL, password, "PASSWORD"), err, strings.ReplaceAll(got, password, "PASSWORD"))
		}
	}
}

// TestDefaultHostAndExposureWarning: without HOST the server listens on 127.0.0.1 only and warns about
// nothing; HOST=0.0.0.0 with authentication off starts with a loud warning; with authentication on, it
// does not.
func TestDefaultHostAndExposureWarning(t *testing.T) {
	const warning = "WARNING: authentication is OFF"
	p := startServer(t, map[string]string{"HOST": ""}, "serve", "--migrate")
	if !strings.HasPrefix(p.base, "http://127.0.0.1:") || strings.Contains(p.stderr.String(), warning) {
		t.Errorf("default host: listening on %s\n%s", p.base, p.stderr)
	}
	p.stop()

	p = startServer(t, map[string]string{"HOST": "0.0.0.0"}, "serve", "--migrate")
	if strings.HasPrefix(p.base, "http://127.0.0.1:") || !strings.Contains(p.stderr.String(), warning) ||
		!strings.Contains(p.stderr.String(), `"level":"warn"`) {
		t.Errorf("HOST=0.0.0.0 without auth: listening on %s, no warning:\n%s", p.base, p.stderr)
	}
	p.stop()

	p = startServer(t, map[string]string{"HOST": "0.0.0.0", "GUARD_API_KEY_ENABLED": "true", "GUARD_ADMIN_API_KEYS": "admin-key-1"}, "serve", "--migrate")
	if strings.Contains(p.stderr.String(), warning) {
		t.Errorf("HOST=0.0.0.0 with auth warned:\n%s", p.stderr)
	}
	p.stop()
}
