package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/store/storetest"
)

// TestCrossSiteProtectionEndToEnd: the binary on loopback (HOST=127.0.0.1, authentication off) refuses a
// non-JSON body, a write from another origin and a foreign Host, and serves an origin allowed with
// GUARD_ALLOWED_ORIGINS, also behind a reverse proxy that rewrites Host.
func TestCrossSiteProtectionEndToEnd(t *testing.T) {
	db := filepath.Join(t.TempDir(), "guard.db")
	p := startServer(t, map[string]string{"DB_URL": db, "GUARD_ALLOWED_ORIGINS": "http://guard.test:8000, https://guard.example.com"},
		"serve", "--migrate")
	hostPort := strings.TrimPrefix(p.base, "http://")
	body := `{"agent":{"agent_name":"a1"},"steps":[{"type":"llm","name":"chat"}]}`
	for _, tc := range []struct {
		name, contentType, origin, host string
		want                            int
		code                            string
	}{
		{"curl with JSON", "application/json", "", "", 200, ""},
		{"text/plain body", "text/plain", "", "", 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"form post", "application/x-www-form-urlencoded", "http://evil.example", "", 403, "ORIGIN_NOT_ALLOWED"},
		{"JSON from another origin", "application/json", "http://evil.example", "", 403, "ORIGIN_NOT_ALLOWED"},
		{"DNS rebinding", "application/json", "http://evil.example:8000", "evil.example:8000", 421, "HOST_NOT_ALLOWED"},
		{"the dashboard", "application/json", "http://" + hostPort, "", 200, ""},
		{"localhost", "application/json", "", "localhost:" + strings.Split(hostPort, ":")[1], 200, ""},
		{"allowed origin and host", "application/json", "http://guard.test:8000", "guard.test:8000", 200, ""},
		{"reverse proxy rewriting Host", "application/json", "https://guard.example.com", "", 200, ""},
	} {
		req, err := http.NewRequest("POST", p.base+"/api/v1/agents/initAgent", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", tc.contentType)
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.want || (tc.code != "" && !strings.Contains(string(b), `"error_code":"`+tc.code+`"`)) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, res.StatusCode, b, tc.want, tc.code)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no X-Content-Type-Options: nosniff", tc.name)
		}
	}
	p.stop()
}

// TestMalformedAllowedOriginsStop: a value of GUARD_ALLOWED_ORIGINS that is not an origin stops the start
// with a message naming the variable.
func TestMalformedAllowedOriginsStop(t *testing.T) {
	storetest.SkipWithoutSQLite(t) // the server opens its SQLite database before it checks the origins
	bin := buildServer(t)
	out, err := runBin(bin, []string{"GUARD_ALLOWED_ORIGINS=http://ok.example,evil.example/path", "DB_URL=" + filepath.Join(t.TempDir(), "x.db")}, "serve", "--migrate")
	if err == nil || !strings.Contains(out, "GUARD_ALLOWED_ORIGINS") || strings.Contains(out, "evil.example") {
		t.Fatalf("%v\n%s", err, out)
	}
}
