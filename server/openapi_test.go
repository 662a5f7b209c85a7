package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/server/openapi"
	"github.com/guardrail-control/guard/store/storetest"
)

const docURL = "https://guard.local/openapi.json"

type oaDoc struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Responses map[string]json.RawMessage `json:"responses"`
	} `json:"components"`
}

var httpMethods = map[string]bool{"get": true, "put": true, "post": true, "patch": true, "delete": true, "head": true, "options": true}

func loadDoc(t *testing.T) oaDoc {
	t.Helper()
	var d oaDoc
	if err := json.Unmarshal(openapi.Document, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// fullServer has every optional route: metrics and observability, whose event recorder it returns.
func fullServer(t *testing.T) (*tserver, *observability.Recorder) {
	st := storetest.SQLite(t)
	m, err := observability.NewMetrics("guard")
	if err != nil {
		t.Fatal(err)
	}
	rec := observability.NewRecorder(st, observability.RecorderConfig{Metrics: m})
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	return newTSOn(t, st, WithMetrics(m), WithObservability(true, rec)), rec
}

// TestOpenAPIMatchesRoutes: every operation of the document is a route of the server and vice versa.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	d := loadDoc(t)
	ts, _ := fullServer(t)
	var docOps, routeOps []string
	for path, item := range d.Paths {
		for m := range item {
			if httpMethods[m] {
				docOps = append(docOps, strings.ToUpper(m)+" "+path)
			}
		}
	}
	for _, rt := range ts.srv.routes() {
		if rt.method == "" { // any method: documented for each method, a subtree as one {path} parameter
			path := subtreePath(rt.path)
			for _, m := range []string{"GET", "PUT", "POST", "PATCH", "DELETE"} {
				routeOps = append(routeOps, m+" "+path)
			}
			continue
		}
		routeOps = append(routeOps, rt.pattern())
	}
	sort.Strings(docOps)
	sort.Strings(routeOps)
	if strings.Join(docOps, "\n") != strings.Join(routeOps, "\n") {
		t.Fatalf("the OpenAPI document and the routes differ:\ndocument:\n%s\n\nroutes:\n%s", strings.Join(docOps, "\n"), strings.Join(routeOps, "\n"))
	}
	r := ts.do("GET", "/openapi.json", nil)
	if r.Code != 200 || !json.Valid(r.Body) || !bytes.Contains(r.Body, []byte(`"openapi":"3.1.0"`)) {
		t.Fatalf("GET /openapi.json: %d", r.Code)
	}
	r = ts.do("GET", "/docs", nil)
	if r.Code != 200 || !bytes.Contains(r.Body, []byte("/openapi.json")) || bytes.Contains(r.Body, []byte("https://")) || bytes.Contains(r.Body, []byte("http://")) {
		t.Fatalf("GET /docs must render the document with no external asset: %d", r.Code)
	}
}

// subtreePath names a subtree route (a path ending in /, any method) as the document does: the rest of the
// path is one parameter.
func subtreePath(p string) string {
	if !strings.HasSuffix(p, "/") {
		return p
	}
	if strings.HasSuffix(p, "/control-bindings/") {
		return p + "{binding_path}"
	}
	return p + "{policy_path}"
}

// validator compiles response schemas of the document on demand.
type validator struct {
	t     *testing.T
	doc   oaDoc
	c     *jsonschema.Compiler
	mu    sync.Mutex
	cache map[string]*jsonschema.Schema
	seen  map[string]bool
}

func newValidator(t *testing.T) *validator {
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(openapi.Document))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(docURL, raw); err != nil {
		t.Fatal(err)
	}
	return &validator{t: t, doc: loadDoc(t), c: c, cache: map[string]*jsonschema.Schema{}, seen: map[string]bool{}}
}

func ptrEscape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// check validates one response against the document's description of its route and status.
func (v *validator) check(req *http.Request, r *resp, pattern string) {
	t := v.t
	t.Helper()
	method, path, ok := strings.Cut(pattern, " ")
	if !ok { // an any-method route
		method, path = req.Method, subtreePath(pattern)
	}
	item, ok := v.doc.Paths[path]
	if !ok {
		t.Errorf("%s: route not in the document", pattern)
		return
	}
	var op struct {
		Responses map[string]json.RawMessage `json:"responses"`
	}
	if err := json.Unmarshal(item[strings.ToLower(method)], &op); err != nil {
		t.Errorf("%s: operation not in the document", pattern)
		return
	}
	code := strconv.Itoa(r.Code)
	rawResp, ok := op.Responses[code]
	if !ok {
		t.Errorf("%s: status %d is not documented (body %s)", pattern, r.Code, r.Body)
		return
	}
	ptr := "/paths/" + ptrEscape(path) + "/" + strings.ToLower(method) + "/responses/" + code
	var ref struct {
		Ref string `json:"$ref"`
	}
	_ = json.Unmarshal(rawResp, &ref)
	if ref.Ref != "" {
		ptr = strings.TrimPrefix(ref.Ref, "#")
		rawResp = v.doc.Components.Responses[ref.Ref[strings.LastIndex(ref.Ref, "/")+1:]]
	}
	var rd struct {
		Content map[string]json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(rawResp, &rd)
	if len(rd.Content) == 0 {
		if len(r.Body) != 0 {
			t.Errorf("%s %d: undocumented body", pattern, r.Code)
		}
		return
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if _, ok := rd.Content[ct]; !ok {
		t.Errorf("%s %d: content type %q not documented", pattern, r.Code, ct)
		return
	}
	v.mu.Lock()
	v.seen[pattern+" "+code] = true
	v.mu.Unlock()
	if ct != "application/json" && ct != "application/problem+json" {
		return
	}
	loc := docURL + "#" + ptr + "/content/" + ptrEscape(ct) + "/schema"
	v.mu.Lock()
	sch, ok := v.cache[loc]
	if !ok {
		var err error
		sch, err = v.c.Compile(loc)
		if err != nil {
			v.mu.Unlock()
			t.Fatalf("compile %s: %v", loc, err)
		}
		v.cache[loc] = sch
	}
	v.mu.Unlock()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Body))
	if err != nil {
		t.Errorf("%s %d: body is not JSON: %v", pattern, r.Code, err)
		return
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s %d: the response does not match the document:\n%v\nbody: %s", pattern, r.Code, err, r.Body)
	}
}

// TestOpenAPIResponses validates real responses of the main endpoints (successes and errors) against the
// document's response schemas.
func TestOpenAPIResponses(t *testing.T) {
	ts, _ := fullServer(t)
	v := newValidator(t)
	ts.onResponse = func(req *http.Request, r *resp) {
		_, pattern := ts.srv.mux.Handler(req)
		if pattern == "" {
			return // 404/405 of unknown routes: checked by the handler tests
		}
		v.check(req, r, pattern)
	}
	ts.do("GET", "/health", nil)
	ts.do("GET", "/ready", nil)
	ts.do("GET", "/metrics", nil)
	ts.do("GET", "/openapi.json", nil)
	ts.do("GET", "/docs", nil)
	ts.do("GET", "/api/v1/evaluators", nil)
	ts.do("GET", "/api/v1/access", nil)
	ts.do("PUT", "/api/v1/policies", map[string]any{"name": "p"})
	ts.do("GET", "/api/v1/policies/9/controls", nil)
	ts.initAgent("bot", map[string]any{"type": "tool", "name": "search", "input_schema": map[string]any{"type": "object"}})
	ts.initAgent("bot")
	ts.do("POST", "/api/v1/agents/initAgent", `{"agent":{"agent_name":"bot"},"steps":[{"type":"tool","name":"search","input_schema":{"type":"string"}}]}`)
	ts.do("POST", "/api/v1/agents/initAgent", `{"agent":{}}`)
	ts.do("POST", "/api/v1/agents/initAgent", `{`)
	ts.do("GET", "/api/v1/agents", nil)
	ts.do("GET", "/api/v1/agents?limit=0", nil)
	ts.do("GET", "/api/v1/agents/bot", nil)
	ts.do("GET", "/api/v1/agents/ghost", nil)
	ts.do("PATCH", "/api/v1/agents/bot", map[string]any{"agent_metadata": map[string]any{"a": 1}})
	id := ts.createControl("deny-x", regexData("x", "deny", "pre"))
	steer := ts.createControl("steer-y", regexData("y", "steer"))
	empty := ts.createControl("empty", nil)
	ts.do("PUT", "/api/v1/controls", map[string]any{"name": "deny-x"})
	ts.do("PUT", "/api/v1/controls", `{"name":"x","data":{}}`)
	ts.link("bot", id)
	ts.link("bot", steer)
	ts.do("POST", "/api/v1/agents/bot/controls/999", nil)
	ts.do("POST", "/api/v1/agents/bot/controls/abc", nil)
	r := ts.do("GET", "/api/v1/agents/bot/controls", nil)
	ts.do("GET", "/api/v1/agents/bot/controls", nil, "If-None-Match", r.Header.Get("ETag"))
	ts.initAgent("sess-bot")
	ts.link("sess-bot", ts.createControl("sess-rule-of-two", ruleOfTwoData(t)))
	ts.sessionStep("sess-bot", "fetch_page", "s1")
	ts.do("GET", "/api/v1/agents/sess-bot/sessions/s1", nil)
	ts.do("GET", "/api/v1/agents/bot/sessions/none", nil)
	ts.do("GET", "/api/v1/agents/bot/sessions/"+strings.Repeat("s", 129), nil)
	ts.do("GET", "/api/v1/controls?limit=1", nil)
	ts.do("GET", "/api/v1/controls?stage=x", nil)
	c := fmt.Sprintf("/api/v1/controls/%d", id)
	ts.do("GET", c, nil)
	ts.do("GET", fmt.Sprintf("/api/v1/controls/%d", empty), nil)
	ts.do("GET", "/api/v1/controls/999", nil)
	ts.do("GET", c+"/data", nil)
	ts.do("GET", fmt.Sprintf("/api/v1/controls/%d/data", empty), nil)
	ts.do("PUT", c+"/data", map[string]any{"data": regexData("xx", "deny")})
	ts.do("PUT", c+"/data", `{"data":{"action":{}}}`)
	ts.do("PATCH", c, map[string]any{"enabled": true})
	ts.do("PATCH", c, map[string]any{"name": "steer-y"})
	ts.do("POST", "/api/v1/controls/validate", map[string]any{"data": regexData("a", "deny")})
	ts.do("POST", "/api/v1/controls/validate", `{"data":{}}`)
	ts.do("POST", "/api/v1/controls/try", map[string]any{"data": regexData("a", "deny"), "stage": "pre", "step": map[string]any{"type": "llm", "name": "chat", "input": "a"}})
	ts.do("POST", "/api/v1/controls/try", `{"data":{},"stage":"later"}`)
	ts.do("GET", c+"/versions", nil)
	ts.do("GET", c+"/versions/1", nil)
	ts.do("GET", c+"/versions/99", nil)
	ts.do("POST", c+"/versions/1/restore", nil)
	for _, in := range []string{"x", "y", "z"} {
		ts.eval("bot", "pre", in)
	}
	ts.do("POST", "/api/v1/evaluation", `{"agent_name":"ghost","stage":"pre","step":{"type":"llm","name":"a"}}`)
	ts.do("POST", "/api/v1/evaluation", `{"agent_name":"bot","stage":"later","step":{"type":"llm","name":"a"}}`)
	ts.do("POST", "/api/v1/observability/events", map[string]any{"events": []any{map[string]any{
		"control_execution_id": "0f8fad5b-d9cb-469f-a165-70867728950e", "agent_name": "bot", "control_id": 1, "control_name": "deny-x",
		"check_stage": "pre", "step_type": "llm", "step_name": "chat", "action": "deny", "matched": true, "confidence": 1,
		"timestamp": "2026-01-01T00:00:00Z", "source": "sdk"}}})
	ts.do("POST", "/api/v1/observability/events/query", map[string]any{"agent_name": "bot"})
	ts.do("GET", "/api/v1/observability/stats?agent_name=bot&include_timeseries=true", nil)
	ts.do("GET", "/api/v1/observability/stats/controls/1?agent_name=bot", nil)
	ts.do("GET", "/api/v1/observability/stats?include_timeseries=true&include_p95=true", nil)
	ts.do("GET", "/api/v1/observability/stats/controls/1?include_timeseries=true", nil)
	ts.do("DELETE", c, nil)
	ts.do("DELETE", fmt.Sprintf("/api/v1/agents/bot/controls/%d", steer), nil)
	ts.do("DELETE", c+"?force=true", nil)

	if len(v.seen) < 40 {
		t.Fatalf("only %d (route, status) pairs were validated", len(v.seen))
	}
}
