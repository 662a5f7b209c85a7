package ui_test

// The dashboard's HTTP handler, alone and mounted in the server (no browser needed).

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/server"
	"github.com/guardrail-control/guard/server/ui"
	"github.com/guardrail-control/guard/store/storetest"
)

func TestHandler(t *testing.T) {
	h := ui.Handler()
	cases := []struct {
		method, path string
		status       int
		ctype        string // prefix of Content-Type
		body         string // in the body
		location     string
	}{
		{"GET", "/ui/", 200, "text/html", `<script type="module" src="/ui/app.js">`, ""},
		{"GET", "/ui/index.html", 200, "text/html", "<main", ""},
		{"HEAD", "/ui/", 200, "text/html", "", ""},
		{"GET", "/ui/app.js", 200, "text/javascript", "import", ""},
		{"GET", "/ui/style.css", 200, "text/css", ":root", ""},
		{"GET", "/ui/agents/whatever", 200, "text/html", "<main", ""}, // client-side routes get the page
		{"GET", "/ui/../../etc/passwd", 200, "text/html", "<main", ""},
		{"GET", "/ui/missing.js", 404, "", "", ""}, // a missing asset is not the page
		{"GET", "/ui/static/app.css", 404, "", "", ""},
		{"GET", "/ui", 301, "", "", "/ui/"},
		{"POST", "/ui/", 405, "", "", ""},
		{"DELETE", "/ui/app.js", 405, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			req := httptest.NewRequest(c.method, c.path, nil)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != c.status {
				t.Fatalf("status = %d, want %d", w.Code, c.status)
			}
			if ct := w.Header().Get("Content-Type"); c.ctype != "" && !strings.HasPrefix(ct, c.ctype) {
				t.Fatalf("Content-Type = %q, want %s...", ct, c.ctype)
			}
			if c.body != "" && !strings.Contains(w.Body.String(), c.body) {
				t.Fatalf("body lacks %q", c.body)
			}
			if loc := w.Header().Get("Location"); loc != c.location {
				t.Fatalf("Location = %q, want %q", loc, c.location)
			}
			if c.status == 200 {
				if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
					t.Fatalf("Content-Security-Policy = %q", csp)
				}
				if w.Header().Get("X-Content-Type-Options") != "nosniff" {
					t.Fatal("no X-Content-Type-Options: nosniff")
				}
			}
		})
	}
}

// TestNoExternalResources keeps the dashboard self-contained: no CDN, no remote fonts, scripts or
// styles, and no innerHTML (every value from the API goes in as text).
func TestNoExternalResources(t *testing.T) {
	remote := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|@import|url\(\s*["']?https?:|fetch\(\s*["']https?:`)
	for _, name := range []string{"index.html", "app.js", "api.js", "dom.js", "agents.js", "chart.js", "controls.js", "diff.js", "evaluators.js", "events.js", "history.js", "style.css"} {
		req := httptest.NewRequest("GET", "/ui/"+name, nil)
		w := httptest.NewRecorder()
		ui.Handler().ServeHTTP(w, req)
		if w.Code != 200 {
			t.Fatalf("%s: status %d", name, w.Code)
		}
		body := w.Body.String()
		if m := remote.FindString(body); m != "" {
			t.Errorf("%s loads something remote: %q", name, m)
		}
		if strings.Contains(body, "innerHTML") || strings.Contains(body, "insertAdjacentHTML") || strings.Contains(body, "document.write") {
			t.Errorf("%s writes HTML from strings", name)
		}
	}
}

// TestMountedInServer checks how the server binary mounts the dashboard: server.WithUI(ui.Handler())
// serves it at /ui/, redirects / there, and keeps it public when authentication is on.
func TestMountedInServer(t *testing.T) {
	srv, err := server.New(storetest.SQLite(t), server.WithUI(ui.Handler()), server.WithAuth(true, []string{"r"}, []string{"a"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	res, err := noRedirect.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode/100 != 3 || res.Header.Get("Location") != "/ui/" {
		t.Fatalf("GET / = %d Location %q, want a redirect to /ui/", res.StatusCode, res.Header.Get("Location"))
	}
	for _, p := range []string{"/ui/", "/ui/app.js", "/ui/style.css"} {
		res, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || len(b) == 0 {
			t.Fatalf("GET %s without a key = %d (%d bytes), want 200: the dashboard's files are public", p, res.StatusCode, len(b))
		}
	}
	res, err = http.Get(ts.URL + "/api/v1/agents")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("GET /api/v1/agents without a key = %d, want 401", res.StatusCode)
	}
}
