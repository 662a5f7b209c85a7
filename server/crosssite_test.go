package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/server/problem"
	"github.com/guardrail-control/guard/store/storetest"
)

// crossSitePayloads holds, for every route that is not GET, a JSON body that would change the server (or,
// for the read-only POSTs, that the route accepts). A new mutating route must be added here.
func crossSitePayloads(c1 int64) map[string]string {
	return map[string]string{
		"POST /api/v1/agents/initAgent":                                 `{"agent":{"agent_name":"pwned"},"steps":[{"type":"llm","name":"chat"}]}`,
		"PATCH /api/v1/agents/{agent_name}":                             `{"agent_description":"pwned"}`,
		"POST /api/v1/agents/{agent_name}/controls/{control_id}":        ``,
		"DELETE /api/v1/agents/{agent_name}/controls/{control_id}":      ``,
		"PUT /api/v1/controls":                                          `{"name":"pwned"}`,
		"POST /api/v1/controls/validate":                                `{"data":{"condition":{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"x"}}},"action":{"decision":"allow"}}}`,
		"POST /api/v1/controls/test":                                    `{"data":{"condition":{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"x"}}},"action":{"decision":"allow"}}}`,
		"POST /api/v1/controls/try":                                     `{"data":{"condition":{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"x"}}},"action":{"decision":"deny"}},"stage":"pre","step":{"type":"llm","name":"chat","input":"x"}}`,
		"POST /api/v1/control-templates/{template_name}/render":         `{"parameters":{"decision":"warn"}}`,
		"PATCH /api/v1/controls/{control_id}":                           `{"enabled":false}`,
		"DELETE /api/v1/controls/{control_id}":                          ``,
		"PUT /api/v1/controls/{control_id}/data":                        `{"data":{"condition":{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"pwned"}}},"action":{"decision":"allow"}}}`,
		"POST /api/v1/controls/{control_id}/versions/{version}/restore": ``,
		"POST /api/v1/evaluation":                                       `{"agent_name":"a1","stage":"pre","step":{"type":"llm","name":"chat","input":"x"}}`,
		"POST /api/v1/observability/events": fmt.Sprintf(`{"events":[{"control_execution_id":"0f8fad5b-d9cb-469f-a165-70867728950e","agent_name":"a1","control_id":%d,`+
			`"control_name":"c1","check_stage":"pre","step_type":"llm","step_name":"chat","action":"deny","matched":true,"confidence":1,"timestamp":"2026-01-01T00:00:00Z"}]}`, c1),
		"POST /api/v1/observability/events/query": `{"agent_name":"a1"}`,
		"POST /api/v1/steps/captured":             `{"steps":[{"agent_name":"a1","stage":"pre","decision":"allow","step":{"type":"llm","name":"chat","input":"x"}}]}`,
		"POST /api/v1/approvals/{approval_id}":    `{"decision":"approve","comment":"pwned"}`,
		"POST /api/v1/keys":                       `{"name":"k1","role":"admin"}`,
		"POST /api/v1/keys/{key_name}/rotate":     ``,
		"DELETE /api/v1/keys/{key_name}":          ``,
		"POST /api/v1/controls/replay": fmt.Sprintf(`{"agent_name":"a1","controls":[{"id":%d,"data":{"condition":{"selector":{"path":"input"},`+
			`"evaluator":{"name":"regex","config":{"pattern":"pwned"}}},"action":{"decision":"deny"}}}]}`, c1),
	}
}

// crossSiteTarget turns a route pattern into a path that acts on the fixture: control c1 (linked to a1,
// two versions), control c2 (not linked), approval request apv (pending).
func crossSiteTarget(rt route, c1, c2 int64, apv string) string {
	id := c1
	if rt.method == "POST" && strings.HasSuffix(rt.path, "/controls/{control_id}") {
		id = c2 // linking c1 again would change nothing
	}
	p := strings.NewReplacer("{agent_name}", "a1", "{control_id}", fmt.Sprint(id), "{version}", "1", "{template_name}", "us-ssn", "{approval_id}", apv, "{key_name}", "k1").Replace(rt.path)
	if rt.method == "DELETE" && rt.path == apiPrefix+"/controls/{control_id}" {
		p += "?force=true"
	}
	return p
}

// TestCrossSiteWritesChangeNothing sends every mutating route of the route table, over real HTTP, the
// requests a page on another site can make a browser send (form posts, no-cors fetches with text/plain
// bodies, sandboxed frames, DNS rebinding), and checks each is refused and nothing stored changed; then
// that the same requests from the server's own origin (the dashboard) are not refused.
func TestCrossSiteWritesChangeNothing(t *testing.T) {
	st := storetest.SQLite(t)
	rec := observability.NewRecorder(st, observability.RecorderConfig{})
	t.Cleanup(func() { _ = rec.Close(context.Background()) })

	// The listener comes first so that the server knows its loopback address, as examples/server does.
	hs := httptest.NewUnstartedServer(nil)
	addr := hs.Listener.Addr().String()
	ts := newTSOn(t, st, WithObservability(true, rec), WithListenAddr(addr))
	hs.Config.Handler = ts.srv
	hs.Start()
	t.Cleanup(hs.Close)

	setup := newTSOn(t, st) // the fixture, through a server that does not check Host
	setup.initAgent("a1")
	c1 := setup.createControl("c1", regexData("x", "deny"))
	setup.ok(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", c1), map[string]any{"data": regexData("xy", "deny")})
	c2 := setup.createControl("c2", regexData("z", "deny"))
	setup.link("a1", c1)
	// A pending approval request: deciding it is a write like any other.
	apvData := regexData("needs-approval", "deny")
	apvData["action"] = map[string]any{"decision": "deny", "approval": map[string]any{}}
	setup.link("a1", setup.createControl("c3", apvData))
	apv := setup.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "a1", "stage": "pre",
		"step": map[string]any{"type": "llm", "name": "chat", "input": "needs-approval"}})["approval"].(map[string]any)["id"].(string)
	own := []string{"Host", addr} // the in-process requests of dump() come from the server's own host
	snapshot := func() string {
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := ts.do("POST", "/api/v1/observability/events/query", `{"agent_name":"a1"}`, own...)
		keys := ts.do("GET", "/api/v1/keys", nil, own...)
		return ts.dumpAs(own...) + fmt.Sprintf("events %d %s\nkeys %d %s\n", r.Code, r.Body, keys.Code, keys.Body)
	}
	before := snapshot()

	const evil = "http://evil.example"
	attacks := []struct {
		name, contentType, origin, fetchSite, host string
		formBody                                   bool // send "x=1" instead of the route's JSON payload
		status                                     int
		code                                       string
	}{
		{"form post", "application/x-www-form-urlencoded", evil, "cross-site", "", true, 403, problem.CodeOriginNotAllowed},
		{"multipart form", "multipart/form-data; boundary=b", evil, "cross-site", "", true, 403, problem.CodeOriginNotAllowed},
		{"no-cors fetch", "text/plain;charset=UTF-8", evil, "cross-site", "", false, 403, problem.CodeOriginNotAllowed},
		{"browser without Sec-Fetch-Site", "text/plain", evil, "", "", false, 403, problem.CodeOriginNotAllowed},
		{"Sec-Fetch-Site without Origin", "text/plain", "", "cross-site", "", false, 403, problem.CodeOriginNotAllowed},
		{"same site, other port", "text/plain", "http://127.0.0.1:1", "same-site", "", false, 403, problem.CodeOriginNotAllowed},
		{"sandboxed frame", "text/plain", "null", "cross-site", "", false, 403, problem.CodeOriginNotAllowed},
		{"JSON from another origin", "application/json", evil, "cross-site", "", false, 403, problem.CodeOriginNotAllowed},
		{"DNS rebinding", "application/json", "http://rebind.example:1234", "same-origin", "rebind.example:1234", false, 421, problem.CodeHostNotAllowed},
		{"text/plain without Origin", "text/plain", "", "", "", false, 415, problem.CodeUnsupportedMediaType},
	}
	payloads := crossSitePayloads(c1)
	mutating := 0
	for _, rt := range ts.srv.routes() {
		if safeMethod(rt.method) || rt.method == "" { // "": the any-method /policies answers, which change nothing
			continue
		}
		mutating++
		payload, ok := payloads[rt.pattern()]
		if !ok {
			t.Errorf("%s: no payload in crossSitePayloads; add one", rt.pattern())
			continue
		}
		path := crossSiteTarget(rt, c1, c2, apv)
		for _, a := range attacks {
			body := payload
			if a.formBody || (body == "" && a.code == problem.CodeUnsupportedMediaType) {
				body = "x=1"
			}
			req, err := http.NewRequest(rt.method, hs.URL+path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", a.contentType)
			if a.origin != "" {
				req.Header.Set("Origin", a.origin)
			}
			if a.fetchSite != "" {
				req.Header.Set("Sec-Fetch-Site", a.fetchSite)
				req.Header.Set("Sec-Fetch-Mode", "no-cors")
			}
			if a.host != "" {
				req.Host = a.host
			}
			res, err := hs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			r := &resp{Code: res.StatusCode, Header: res.Header, Body: raw}
			if r.Code != a.status {
				t.Errorf("%s %s (%s): %d, want %d: %s", rt.method, path, a.name, r.Code, a.status, raw)
				continue
			}
			if b := r.problem(t); b.ErrorCode != a.code {
				t.Errorf("%s %s (%s): %s, want %s", rt.method, path, a.name, b.ErrorCode, a.code)
			}
		}
	}
	if mutating < 13 {
		t.Fatalf("only %d mutating routes in the table", mutating)
	}
	if after := snapshot(); after != before {
		t.Fatalf("cross-site requests changed the server:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// The dashboard's requests: same origin, JSON. None is refused by the cross-site checks.
	for _, rt := range ts.srv.routes() {
		payload, ok := payloads[rt.pattern()]
		if !ok {
			continue
		}
		path := crossSiteTarget(rt, c1, c2, apv)
		hdr := []string{"Origin", "http://" + addr, "Sec-Fetch-Site", "same-origin", "Host", addr}
		var body any
		if payload != "" {
			body = payload
		}
		r := ts.do(rt.method, path, body, hdr...)
		if r.Code == 403 || r.Code == 415 || r.Code == 421 || r.Code >= 500 {
			t.Errorf("same-origin %s %s: %d %s", rt.method, path, r.Code, r.Body)
		}
	}
	if after := snapshot(); after == before {
		t.Fatal("the same-origin requests changed nothing: the payloads do not exercise the routes")
	}
}

// dumpAs is dump with extra header pairs on every request.
func (ts *tserver) dumpAs(hdr ...string) string {
	ts.t.Helper()
	var b strings.Builder
	get := func(path string) map[string]any {
		r := ts.do("GET", path, nil, hdr...)
		fmt.Fprintf(&b, "%s %d %s\n", path, r.Code, r.Body)
		if r.Code != 200 {
			ts.t.Fatalf("GET %s: %d %s", path, r.Code, r.Body)
		}
		return r.obj(ts.t)
	}
	for _, c := range get("/api/v1/controls?limit=100")["controls"].([]any) {
		id := int64(c.(map[string]any)["control_id"].(float64))
		get(fmt.Sprintf("/api/v1/controls/%d", id))
		get(fmt.Sprintf("/api/v1/controls/%d/versions?limit=100", id))
	}
	for _, a := range get("/api/v1/agents?limit=100")["agents"].([]any) {
		name := a.(map[string]any)["agent_name"].(string)
		get("/api/v1/agents/" + name)
		get("/api/v1/agents/" + name + "/controls")
	}
	get("/api/v1/approvals?limit=100")
	return requestIDField.ReplaceAllString(b.String(), `"request_id":"-"`)
}

// TestOriginCheck: which Origin and Sec-Fetch-Site combinations reach a mutating route, with and without
// an allowed origin; safe methods are never refused.
func TestOriginCheck(t *testing.T) {
	ts := newTS(t, WithAllowedOrigins([]string{" https://App.Example:443/ ", "http://localhost:5173"}))
	const host = "guard.internal:8000" // not loopback: only the Origin check applies
	cases := []struct {
		method, origin, fetchSite string
		want                      int
	}{
		{"POST", "", "", 200},                                      // curl, SDKs, the Go client
		{"POST", "http://guard.internal:8000", "", 200},            // own origin, older browser
		{"POST", "https://guard.internal:8000", "", 200},           // own origin behind a TLS-terminating proxy
		{"POST", "http://guard.internal:8000", "same-origin", 200}, // the dashboard
		{"POST", "", "none", 200},                                  // typed into the address bar / bookmark
		{"POST", "http://evil.example", "", 403},
		{"POST", "http://evil.example", "cross-site", 403},
		{"POST", "", "cross-site", 403},
		{"POST", "", "same-site", 403},
		{"POST", "http://guard.internal:9000", "same-site", 403}, // another port is another origin
		{"POST", "http://guard.internal", "", 403},
		{"POST", "null", "", 403},
		{"POST", "not a url", "", 403},
		{"POST", "https://app.example", "cross-site", 200}, // allowed (normalised from the option)
		{"POST", "http://app.example", "cross-site", 403},  // allowed is exact: scheme counts
		{"POST", "http://localhost:5173", "", 200},
		{"POST", "http://localhost:5174", "", 403},
		{"GET", "http://evil.example", "cross-site", 200}, // reads are not writes (and get no CORS headers)
		{"HEAD", "http://evil.example", "cross-site", 200},
	}
	for _, tc := range cases {
		path, body := "/api/v1/controls/validate", any(`{"data":{"condition":{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"x"}}},"action":{"decision":"deny"}}}`)
		if tc.method != "POST" {
			path, body = "/api/v1/controls", nil
		}
		hdr := []string{"Host", host}
		if tc.origin != "" {
			hdr = append(hdr, "Origin", tc.origin)
		}
		if tc.fetchSite != "" {
			hdr = append(hdr, "Sec-Fetch-Site", tc.fetchSite)
		}
		r := ts.do(tc.method, path, body, hdr...)
		if r.Code != tc.want {
			t.Errorf("%s Origin %q Sec-Fetch-Site %q: %d, want %d: %s", tc.method, tc.origin, tc.fetchSite, r.Code, tc.want, r.Body)
			continue
		}
		if tc.want == 403 {
			b := r.problem(t)
			if b.ErrorCode != problem.CodeOriginNotAllowed || strings.Contains(string(r.Body), "evil") {
				t.Errorf("Origin %q: %s", tc.origin, r.Body)
			}
		}
	}
}

// TestHostCheck: on a loopback listener only loopback host names (and allowed origins' hosts) are served,
// whatever the route; on another listener Host is not checked.
func TestHostCheck(t *testing.T) {
	cases := []struct {
		listen, host string
		want         int
	}{
		{"127.0.0.1:8000", "127.0.0.1:8000", 200},
		{"127.0.0.1:8000", "localhost:8000", 200},
		{"127.0.0.1:8000", "LocalHost:8000", 200},
		{"127.0.0.1:8000", "[::1]:8000", 200},
		{"127.0.0.1:8000", "127.0.0.2", 200},
		{"127.0.0.1:8000", "dash.localhost:8000", 200},
		{"127.0.0.1:8000", "localhost:9000", 200},  // port forwarding (ssh -L 9000:localhost:8000)
		{"127.0.0.1:8000", "", 200},                // HTTP/1.0 without Host: not a browser
		{"127.0.0.1:8000", "guard.test:8000", 200}, // the host of an allowed origin
		{"127.0.0.1:8000", "evil.example:8000", 421},
		{"127.0.0.1:8000", "evil.example", 421},
		{"127.0.0.1:8000", "127.0.0.1.nip.io:8000", 421},
		{"127.0.0.1:8000", "localhost.evil.example:8000", 421},
		{"127.0.0.1:8000", "[::2]:8000", 421},
		{"127.0.0.1:8000", "10.0.0.1:8000", 421},
		{"[::1]:8000", "evil.example:8000", 421},
		{"[::1]:8000", "[::1]:8000", 200},
		{"localhost:8000", "evil.example:8000", 421},
		{"0.0.0.0:8000", "evil.example:8000", 200},
		{":8000", "evil.example:8000", 200},
		{"10.1.2.3:8000", "evil.example:8000", 200},
		{"", "evil.example:8000", 200},
	}
	for _, tc := range cases {
		ts := newTS(t, WithListenAddr(tc.listen), WithAllowedOrigins([]string{"http://guard.test:8000"}))
		for _, rq := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/health", nil},
			{"GET", "/api/v1/controls", nil},
			{"POST", "/api/v1/agents/initAgent", `{"agent":{"agent_name":"a"}}`},
		} {
			r := ts.do(rq.method, rq.path, rq.body, "Host", tc.host)
			if r.Code != tc.want {
				t.Errorf("listen %q Host %q %s %s: %d, want %d: %s", tc.listen, tc.host, rq.method, rq.path, r.Code, tc.want, r.Body)
				continue
			}
			if tc.want == 421 {
				if b := r.problem(t); b.ErrorCode != problem.CodeHostNotAllowed || strings.Contains(string(r.Body), "evil") {
					t.Errorf("Host %q: %s", tc.host, r.Body)
				}
			}
		}
	}
}

// TestRequestMediaType: a request with a body must say application/json; body-less writes need nothing.
func TestRequestMediaType(t *testing.T) {
	ts := newTS(t)
	id := ts.createControl("c1", regexData("x", "deny"))
	validate := `{"data":{"condition":{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"x"}}},"action":{"decision":"deny"}}}`
	for _, tc := range []struct {
		contentType string
		want        int
	}{
		{"application/json", 200},
		{"Application/JSON", 200},
		{"application/json; charset=utf-8", 200},
		{"application/json;charset=UTF-8", 200},
		{`application/json; charset="utf-8"`, 200},
		{"application/json ; charset=utf-8", 200},
		{"", 415},
		{"text/plain", 415},
		{"text/plain; charset=utf-8", 415},
		{"application/x-www-form-urlencoded", 415},
		{"multipart/form-data; boundary=x", 415},
		{"application/problem+json", 415},
		{"application/jsonp", 415},
		{"application/json-seq", 415},
		{"application/json; charset=iso-8859-1", 415},
		{"text/json", 415},
	} {
		hdr := []string{"Content-Type", tc.contentType}
		r := ts.do("POST", "/api/v1/controls/validate", validate, hdr...)
		if r.Code != tc.want {
			t.Errorf("Content-Type %q: %d, want %d: %s", tc.contentType, r.Code, tc.want, r.Body)
			continue
		}
		if tc.want == 415 {
			if b := r.problem(t); b.ErrorCode != problem.CodeUnsupportedMediaType || (tc.contentType != "" && strings.Contains(string(r.Body), tc.contentType)) {
				t.Errorf("Content-Type %q: %s", tc.contentType, r.Body)
			}
		}
	}
	// Writes without a body need no Content-Type (curl -X POST .../restore); a body on them still does.
	ts.ok(200, "POST", fmt.Sprintf("/api/v1/controls/%d/versions/1/restore", id), nil)
	ts.expectProblem(415, problem.CodeUnsupportedMediaType, "DELETE", fmt.Sprintf("/api/v1/controls/%d", id), "x=1", "Content-Type", "text/plain")
	// A chunked body (unknown length) counts as a body.
	req := httptest.NewRequest("PUT", "/api/v1/controls", io.NopCloser(strings.NewReader(`{"name":"c2"}`)))
	req.ContentLength = -1
	req.Header.Set("Content-Type", "text/plain")
	w := httptest.NewRecorder()
	ts.srv.ServeHTTP(w, req)
	if w.Code != 415 {
		t.Errorf("chunked text/plain body: %d", w.Code)
	}
	// GET bodies are not read, so they are not checked.
	ts.ok(200, "GET", "/api/v1/controls", "x=1", "Content-Type", "text/plain")
	// Authentication answers before the media type: a caller without a key learns nothing more.
	ta := newTS(t, WithAuth(true, nil, []string{"adm"}))
	ta.expectProblem(401, problem.CodeAuthMissingKey, "PUT", "/api/v1/controls", `{"name":"x"}`, "Content-Type", "text/plain")
	ta.expectProblem(415, problem.CodeUnsupportedMediaType, "PUT", "/api/v1/controls", `{"name":"x"}`, "Content-Type", "text/plain", APIKeyHeader, "adm")
}

// TestAllowedOriginsRefused: New refuses a value that is not an origin, without repeating it.
func TestAllowedOriginsRefused(t *testing.T) {
	st := storetest.SQLite(t)
	for _, o := range []string{"example.com", "ftp://example.com", "http://example.com/app", "http://example.com?x", "http://user@example.com", "http://", "http://exa mple.com"} {
		_, err := New(st, WithAllowedOrigins([]string{"http://ok.example", o}))
		if err == nil {
			t.Errorf("%q: accepted", o)
			continue
		}
		if !strings.Contains(err.Error(), "GUARD_ALLOWED_ORIGINS") || !strings.Contains(err.Error(), "origin 2") || strings.Contains(err.Error(), "example.com") {
			t.Errorf("%q: %v", o, err)
		}
	}
	for _, o := range []string{"http://Example.COM:80", "https://x.example:443/", "http://[::1]:8000", "  ", ""} {
		if _, err := New(st, WithAllowedOrigins([]string{o})); err != nil {
			t.Errorf("%q: %v", o, err)
		}
	}
}

// TestNormalizeOrigin: allowed origins are compared as browsers send them.
func TestNormalizeOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://Example.COM:80":  "http://example.com",
		"https://x.example:443/": "https://x.example",
		"https://x.example:8443": "https://x.example:8443",
		"HTTP://[::1]:8000":      "http://[::1]:8000",
		"http://localhost:5173":  "http://localhost:5173",
	} {
		got, _, err := normalizeOrigin(in)
		if err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
}

// TestEveryResponseIsNosniff: every response, errors and the server-root pages included, carries
// X-Content-Type-Options: nosniff.
func TestEveryResponseIsNosniff(t *testing.T) {
	ts, _ := fullServer(t)
	for _, rt := range ts.srv.routes() {
		if rt.method == "" { // the any-method /policies answers are a 404 that changes nothing, not operations
			continue
		}
		path := strings.NewReplacer("{agent_name}", "a1", "{control_id}", "1", "{version}", "1", "{$}", "").Replace(rt.path)
		var body any
		if !safeMethod(rt.method) {
			body = "{}"
		}
		r := ts.do(rt.method, path, body)
		if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s (%d): X-Content-Type-Options %q", rt.method, path, r.Code, got)
		}
	}
	for _, path := range []string{"/nope", "/api/v1/evaluation"} {
		if r := ts.do("GET", path, nil); r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s (%d): no nosniff", path, r.Code)
		}
	}
}

// TestNonObjectBodies: every body of the API is a JSON object; null, a list or a scalar is a 422 on every
// route that reads a body (a PATCH of null used to answer 200 and change nothing).
func TestNonObjectBodies(t *testing.T) {
	ts, _ := fullServer(t)
	ts.initAgent("a1")
	id := ts.createControl("c1", regexData("x", "deny"))
	for _, p := range []string{
		"POST /api/v1/agents/initAgent",
		"PATCH /api/v1/agents/a1",
		"PUT /api/v1/controls",
		"POST /api/v1/controls/validate",
		"POST /api/v1/controls/test",
		"POST /api/v1/controls/try",
		fmt.Sprintf("PATCH /api/v1/controls/%d", id),
		fmt.Sprintf("PUT /api/v1/controls/%d/data", id),
		"POST /api/v1/evaluation",
		"POST /api/v1/observability/events",
		"POST /api/v1/observability/events/query",
	} {
		method, path, _ := strings.Cut(p, " ")
		for _, body := range []string{"null", " null\n", "[]", `[{"name":"x"}]`, "1", `"x"`, "true"} {
			r := ts.do(method, path, body)
			if r.Code != 422 {
				t.Errorf("%s %s: %d, want 422: %s", p, body, r.Code, r.Body)
				continue
			}
			b := r.problem(t)
			if b.ErrorCode != problem.CodeValidation || len(b.Errors) != 1 || b.Errors[0].Field != "" || b.Errors[0].Code != "type" {
				t.Errorf("%s %s: %s", p, body, r.Body)
			}
		}
		ts.expectProblem(400, problem.CodeInvalidJSON, method, path, "nul")
	}
	got := ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d", id), nil)
	if got["enabled"] != true || got["name"] != "c1" {
		t.Fatalf("the control changed: %v", got)
	}
}

// TestDocsPageCannotBeFramed: /docs keeps its CSP (the page renders: see docs_browser_test.go) and adds
// frame-ancestors 'none'.
func TestDocsPageCannotBeFramed(t *testing.T) {
	ts := newTS(t)
	r := ts.do("GET", "/docs", nil)
	csp := r.Header.Get("Content-Security-Policy")
	if r.Code != 200 || !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'self'") {
		t.Fatalf("/docs: %d CSP %q", r.Code, csp)
	}
	if r.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("/docs: X-Frame-Options %q", r.Header.Get("X-Frame-Options"))
	}
}

// TestStatsControlIDMustBePositive: /observability/stats/controls/0 is a 422 like /controls/0.
func TestStatsControlIDMustBePositive(t *testing.T) {
	ts, _ := fullServer(t)
	for _, id := range []string{"0", "-1", "abc", "00"} {
		b := ts.expectProblem(422, problem.CodeValidation, "GET", "/api/v1/observability/stats/controls/"+id+"?agent_name=a1", nil)
		if len(b.Errors) != 1 || b.Errors[0].Field != "control_id" {
			t.Errorf("%s: %+v", id, b.Errors)
		}
	}
	// A well-formed id of nothing is a 404 (issue 32); a control without events, live or deleted, is 200.
	b := ts.expectProblem(404, problem.CodeControlNotFound, "GET", "/api/v1/observability/stats/controls/999?agent_name=a1", nil)
	if strings.Contains(b.Detail, "999") {
		t.Errorf("the id is echoed: %s", b.Detail)
	}
	id := ts.createControl("quiet", regexData("x", "deny"))
	path := fmt.Sprintf("/api/v1/observability/stats/controls/%d?agent_name=a1", id)
	if st := ts.ok(200, "GET", path, nil); st["control_id"] != float64(id) {
		t.Fatalf("%v", st)
	}
	ts.ok(200, "DELETE", fmt.Sprintf("/api/v1/controls/%d", id), nil)
	ts.ok(200, "GET", path, nil)
}

// TestOpenAPIDocumentsCrossSiteAnswers: the document describes the cross-site answers of every route: 421
// on all of them (loopback listener), 403 and 415 on every route that is not GET.
func TestOpenAPIDocumentsCrossSiteAnswers(t *testing.T) {
	st := storetest.SQLite(t)
	m, err := observability.NewMetrics("guard")
	if err != nil {
		t.Fatal(err)
	}
	rec := observability.NewRecorder(st, observability.RecorderConfig{Metrics: m})
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	ts := newTSOn(t, st, WithMetrics(m), WithObservability(true, rec), WithListenAddr("127.0.0.1:8000"))
	v := newValidator(t)
	ts.onResponse = func(req *http.Request, r *resp) {
		if _, pattern := ts.srv.mux.Handler(req); pattern != "" {
			v.check(req, r, pattern)
		}
	}
	want := 0
	for _, rt := range ts.srv.routes() {
		if rt.method == "" { // the any-method /policies answers are a 404 that changes nothing, not operations
			continue
		}
		path := strings.NewReplacer("{agent_name}", "a1", "{control_id}", "1", "{version}", "1").Replace(rt.path)
		var body any
		if !safeMethod(rt.method) {
			body = "{}"
		}
		if r := ts.do(rt.method, path, body, "Host", "rebind.example:8000"); r.Code != 421 {
			t.Errorf("%s: %d, want 421", rt.pattern(), r.Code)
		}
		want++
		if safeMethod(rt.method) {
			continue
		}
		if r := ts.do(rt.method, path, body, "Host", "127.0.0.1:8000", "Origin", "http://evil.example"); r.Code != 403 {
			t.Errorf("%s: %d, want 403", rt.pattern(), r.Code)
		}
		if r := ts.do(rt.method, path, body, "Host", "127.0.0.1:8000", "Content-Type", "text/plain"); r.Code != 415 {
			t.Errorf("%s: %d, want 415", rt.pattern(), r.Code)
		}
		want += 2
	}
	if len(v.seen) != want {
		t.Fatalf("%d (route, status) pairs validated, want %d", len(v.seen), want)
	}
}
