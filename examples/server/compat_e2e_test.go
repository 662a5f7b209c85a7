package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The compatibility end-to-end test replays every request that the reference implementation's unmodified
// Python SDK (agent-control 8.4.0) sent, recorded in /work/shared/compat (issue 11), against the real
// server binary, and checks that every answer is a success (or, for /policies, the documented 404) and
// carries every field the SDK reads from it.

// compatFixture is the recording, relative to this package's directory.
const compatFixture = "../../../shared/compat/agent-control-python-sdk-8.4.jsonl"

// recorded is one line of the fixture.
type recorded struct {
	Method  string          `json:"method"`
	Path    string          `json:"path"`
	Route   string          `json:"route"`
	Request json.RawMessage `json:"request"`
}

// body returns the request body as the SDK sent it: the JSON value, or the text of a body recorded as a
// string. A string body whose recording was cut short ("...[N chars]") keeps its complete events.
func (r *recorded) body(t *testing.T) []byte {
	t.Helper()
	if bytes.Equal(bytes.TrimSpace(r.Request), []byte("null")) || len(r.Request) == 0 {
		return nil
	}
	if r.Request[0] != '"' {
		return r.Request
	}
	var s string
	if err := json.Unmarshal(r.Request, &s); err != nil {
		t.Fatal(err)
	}
	if json.Valid([]byte(s)) {
		return []byte(s)
	}
	// The recorder truncated this body: keep the events before the last one, which is cut.
	cut := strings.LastIndex(s, `}, {"control_execution_id"`)
	if cut < 0 || !strings.HasPrefix(s, `{"events": [`) {
		t.Fatalf("%s %s: a truncated body that is not an event batch", r.Method, r.Path)
	}
	s = s[:cut+1] + "]}"
	if !json.Valid([]byte(s)) {
		t.Fatalf("%s %s: the truncated event batch cannot be repaired", r.Method, r.Path)
	}
	return []byte(s)
}

// loadFixture reads the recording; without it the test skips, except under CI=true.
func loadFixture(t *testing.T) []recorded {
	t.Helper()
	f, err := os.Open(compatFixture)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the SDK recording %s is required under CI: %v", compatFixture, err)
		}
		t.Skipf("the SDK recording %s is absent (%v): nothing to replay", compatFixture, err)
	}
	defer f.Close()
	var out []recorded
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r recorded
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("fixture line: %v", err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("the fixture holds no request")
	}
	return out
}

// adapter turns the recorded names and ids into fresh ones: every agent name becomes the test's agent
// (the recording used one agent per SDK test), every control name a fresh name, every execution id a
// fresh UUID, and control ids in paths the ids of this run's controls.
type adapter struct {
	agent      string
	names      map[string]string // recorded control (and policy) name -> fresh
	controlIDs map[string]string // recorded control id -> this run's
	uuids      map[string]string
	suffix     string
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func newAdapter(fixture []recorded) *adapter {
	suffix := strings.ReplaceAll(uuid.NewString(), "-", "")[:8]
	a := &adapter{agent: "compat-" + suffix, names: map[string]string{}, controlIDs: map[string]string{}, uuids: map[string]string{}, suffix: suffix}
	n := 0
	fresh := func(old string) {
		if _, ok := a.names[old]; !ok && old != "" {
			n++
			a.names[old] = fmt.Sprintf("compat-%s-c%d", suffix, n)
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && (k == "control_name" || k == "name" && x["data"] != nil) {
					fresh(s)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, r := range fixture {
		var v any
		if json.Unmarshal(r.Request, &v) == nil {
			if s, ok := v.(string); ok {
				_ = json.Unmarshal([]byte(s), &v)
			}
			walk(v)
			if m, ok := v.(map[string]any); ok && (r.Route == "/api/v1/controls/{control_id}" || r.Route == "/api/v1/policies") {
				if s, ok := m["name"].(string); ok {
					fresh(s) // a rename or a policy name
				}
			}
		}
	}
	return a
}

// agentNames are the recorded agent names, found in paths and bodies.
var agentNameRE = regexp.MustCompile(`"agent_name": ?"([^"]+)"`)

// body adapts a recorded body (its text, so that everything else stays byte for byte).
func (a *adapter) body(b []byte) []byte {
	if b == nil {
		return nil
	}
	s := string(b)
	s = agentNameRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := agentNameRE.FindStringSubmatch(m)
		return strings.Replace(m, `"`+sub[1]+`"`, `"`+a.agent+`"`, 1)
	})
	for old, fresh := range a.names {
		s = strings.ReplaceAll(s, `"`+old+`"`, `"`+fresh+`"`)
	}
	s = uuidRE.ReplaceAllStringFunc(s, func(old string) string {
		if n, ok := a.uuids[old]; ok {
			return n
		}
		n := uuid.NewString()
		a.uuids[old] = n
		return n
	})
	return []byte(s)
}

// path adapts the recorded path segment by segment along its route.
func (a *adapter) path(r *recorded) string {
	p, query, _ := strings.Cut(r.Path, "?")
	segs, route := strings.Split(p, "/"), strings.Split(r.Route, "/")
	if len(segs) == len(route) {
		for i, rs := range route {
			switch rs {
			case "{agent_name}":
				segs[i] = a.agent
			case "{control_id}":
				if id, ok := a.controlIDs[segs[i]]; ok {
					segs[i] = id
				}
			}
		}
	}
	out := strings.Join(segs, "/")
	if query != "" {
		out += "?" + query
	}
	return out
}

// compatKey picks the key the SDK would need: the regular key where it suffices, else the admin key.
func compatKey(method, route string) string {
	switch {
	case method == http.MethodGet,
		route == "/api/v1/agents/initAgent", route == "/api/v1/evaluation",
		route == "/api/v1/observability/events", route == "/api/v1/observability/events/query":
		return "compat-regular"
	}
	return "compat-admin"
}

// send sends a body (raw bytes) with the key for route and returns status, header and the decoded body.
func (p *proc) send(method, path, route string, body []byte) (int, http.Header, map[string]any, []byte) {
	p.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-Key", compatKey(method, route))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return res.StatusCode, res.Header, m, raw
}

// sdkReads lists, per route, the fields the SDK reads from a successful answer (dotted paths; "[]" is
// every element of a list, which must not be empty where the replay guarantees elements).
var sdkReads = map[string][]string{
	"GET /health":                     {"status", "version"},
	"POST /api/v1/agents/initAgent":   {"created", "controls"},
	"GET /api/v1/agents/{agent_name}": {"agent.agent_name", "agent.agent_description", "agent.agent_version", "agent.agent_metadata", "steps[].type", "steps[].name"},
	"GET /api/v1/agents/{agent_name}/controls": {"controls[].id", "controls[].name", "controls[].control.action.decision",
		"controls[].control.condition", "controls[].control.scope", "controls[].control.execution", "controls[].control.enabled"},
	"PUT /api/v1/controls": {"control_id"},
	"POST /api/v1/agents/{agent_name}/controls/{control_id}":   {"success"},
	"PUT /api/v1/controls/{control_id}/data":                   {"success"},
	"DELETE /api/v1/agents/{agent_name}/controls/{control_id}": {"success", "removed_direct_association", "control_still_active"},
	"GET /api/v1/agents":                                   {"agents[].agent_name", "pagination.limit", "pagination.total", "pagination.next_cursor", "pagination.has_more"},
	"GET /api/v1/controls":                                 {"controls[].id", "controls[].name", "controls[].enabled", "pagination.limit", "pagination.total", "pagination.next_cursor", "pagination.has_more"},
	"GET /api/v1/controls/{control_id}":                    {"id", "name", "data.action.decision"},
	"POST /api/v1/controls/validate":                       {"success"},
	"PATCH /api/v1/controls/{control_id}":                  {"success", "name", "enabled"},
	"GET /api/v1/controls/{control_id}/versions":           {"versions[].version_num", "versions[].event_type", "versions[].created_at", "pagination.total"},
	"GET /api/v1/controls/{control_id}/versions/{version}": {"version_num", "event_type", "created_at"},
	"POST /api/v1/evaluation":                              {"is_safe", "confidence", "matches", "errors", "non_matches"},
	"DELETE /api/v1/controls/{control_id}":                 {"success", "dissociated_from_agents"},
	"GET /api/v1/evaluators":                               {"regex.name", "regex.config_schema"},
	"POST /api/v1/observability/events":                    {"received", "enqueued", "dropped", "status"},
	"POST /api/v1/observability/events/query":              {"events[].control_execution_id", "events[].action", "events[].matched", "total", "limit", "offset"},
}

// lookup returns the values at a dotted path ("a.b[].c"), failing when a step is missing.
func lookup(v any, path string) ([]any, error) {
	vals := []any{v}
	for _, seg := range strings.Split(path, ".") {
		list := strings.HasSuffix(seg, "[]")
		seg = strings.TrimSuffix(seg, "[]")
		var next []any
		for _, cur := range vals {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: not an object", seg)
			}
			e, ok := m[seg]
			if !ok {
				return nil, fmt.Errorf("%s: missing", seg)
			}
			if list {
				arr, ok := e.([]any)
				if !ok {
					return nil, fmt.Errorf("%s: not a list", seg)
				}
				if len(arr) == 0 {
					return nil, fmt.Errorf("%s: empty list", seg)
				}
				next = append(next, arr...)
			} else {
				next = append(next, e)
			}
		}
		vals = next
	}
	return vals, nil
}

func TestCompatReplayReferenceSDK(t *testing.T) {
	fixture := loadFixture(t)
	dbURL := "sqlite://" + filepath.Join(t.TempDir(), "guard.db")
	p := startServer(t, map[string]string{"DATABASE_URL": dbURL, "GUARD_API_KEY_ENABLED": "true",
		"GUARD_API_KEYS": "compat-regular", "GUARD_ADMIN_API_KEYS": "compat-admin", "DEBUG": "true",
		"OBSERVABILITY_ENABLED": "true", "OBSERVABILITY_FLUSH_INTERVAL_SECONDS": "1"}, "serve", "--migrate")
	ad := newAdapter(fixture)

	// Set-up with the SDK's own request kinds: the recording's agents and controls came from earlier
	// SDK calls. A second agent (so that the agent list has a page 2), and the deny, steer and observe
	// controls (recorded ids 2, 3, 4) that the recorded events and the recorded PATCH refer to.
	var initRec, createRec *recorded
	for i := range fixture {
		switch fixture[i].Route {
		case "/api/v1/agents/initAgent":
			initRec = &fixture[i]
		case "/api/v1/controls":
			if fixture[i].Method == http.MethodPut {
				createRec = &fixture[i]
			}
		}
	}
	if initRec == nil || createRec == nil {
		t.Fatal("the fixture lacks initAgent or PUT /controls")
	}
	second := bytes.Replace(ad.body(initRec.body(t)), []byte(`"`+ad.agent+`"`), []byte(`"`+ad.agent+`-second"`), 1)
	if st, _, _, raw := p.send("POST", "/api/v1/agents/initAgent", initRec.Route, second); st != 200 {
		t.Fatalf("set-up: second agent: %d %s", st, raw)
	}
	if st, _, _, raw := p.send("POST", "/api/v1/agents/initAgent", initRec.Route, ad.body(initRec.body(t))); st != 200 {
		t.Fatalf("set-up: agent: %d %s", st, raw)
	}
	for id, action := range map[string]string{
		"2": `{"decision": "deny"}`,
		"3": `{"decision": "steer", "steering_context": {"message": "rephrase"}}`,
		"4": `{"decision": "observe"}`,
	} {
		var c map[string]any
		if err := json.Unmarshal(createRec.body(t), &c); err != nil {
			t.Fatal(err)
		}
		c["name"] = fmt.Sprintf("compat-%s-setup-%s", ad.suffix, id)
		data := c["data"].(map[string]any)
		var act any
		_ = json.Unmarshal([]byte(action), &act)
		data["action"] = act
		data["condition"].(map[string]any)["evaluator"].(map[string]any)["config"] = map[string]any{"pattern": map[string]string{"2": `\bssn\b`, "3": `rm -rf`, "4": `weather`}[id]}
		b, _ := json.Marshal(c)
		st, _, m, raw := p.send("PUT", "/api/v1/controls", "/api/v1/controls", b)
		if st != 200 {
			t.Fatalf("set-up: control %s: %d %s", id, st, raw)
		}
		ad.controlIDs[id] = strconv.Itoa(int(m["control_id"].(float64)))
		if st, _, _, raw := p.send("POST", "/api/v1/agents/"+ad.agent+"/controls/"+ad.controlIDs[id], "", nil); st != 200 {
			t.Fatalf("set-up: link %s: %d %s", id, st, raw)
		}
	}

	var evalIDs []string // control_execution_ids the server evaluated (and recorded) in /evaluation
	sdkEvents := map[string]bool{}
	for i := range fixture {
		r := &fixture[i]
		path := ad.path(r)
		body := ad.body(r.body(t))
		if r.Route == "/api/v1/observability/events/query" {
			p.waitForEvents(ad.agent) // the SDK's query ran after a flush; the replay is faster than that
		}
		status, header, m, raw := p.send(r.Method, path, r.Route, body)
		what := fmt.Sprintf("#%d %s %s (recorded %s)", i, r.Method, path, r.Path)
		if v := header.Get("X-Agent-Control-Server-Version"); !strings.HasPrefix(v, "8.") {
			t.Errorf("%s: X-Agent-Control-Server-Version %q", what, v)
		}
		if strings.HasPrefix(r.Route, "/api/v1/policies") {
			if status != 404 || !strings.Contains(fmt.Sprint(m["detail"]), "policies are not part of this service") {
				t.Errorf("%s: %d %s, want the documented 404", what, status, raw)
			}
			continue
		}
		if status < 200 || status > 299 {
			t.Errorf("%s: status %d: %s", what, status, raw)
			continue
		}
		for _, f := range sdkReads[r.Method+" "+r.Route] {
			if _, err := lookup(m, f); err != nil {
				t.Errorf("%s: the SDK reads %s: %v in %s", what, f, err, raw)
			}
		}
		if _, ok := sdkReads[r.Method+" "+r.Route]; !ok {
			t.Errorf("%s: no list of the fields the SDK reads for this route", what)
		}

		switch r.Method + " " + r.Route {
		case "PUT /api/v1/controls":
			ad.controlIDs["1"] = strconv.Itoa(int(m["control_id"].(float64)))
		case "GET /api/v1/agents/{agent_name}/controls":
			ds, _ := lookup(m, "controls[].control.action.decision")
			for _, d := range ds {
				if d != "deny" && d != "steer" && d != "observe" {
					t.Errorf("%s: decision %v: the SDK reads only deny, steer, observe", what, d)
				}
			}
		case "GET /api/v1/agents", "GET /api/v1/controls":
			checkLowercasedCursor(t, p, r.Route, m, what)
		case "POST /api/v1/evaluation":
			for _, list := range []string{"matches", "errors", "non_matches"} {
				items, _ := m[list].([]any)
				for _, it := range items {
					cr := it.(map[string]any)
					for _, f := range []string{"control_execution_id", "control_id", "control_name", "action", "result.matched", "result.confidence"} {
						if _, err := lookup(cr, f); err != nil {
							t.Errorf("%s: %s[].%s: %v", what, list, f, err)
						}
					}
					evalIDs = append(evalIDs, cr["control_execution_id"].(string))
				}
			}
		case "POST /api/v1/observability/events":
			var b struct {
				Events []struct {
					ID string `json:"control_execution_id"`
				} `json:"events"`
			}
			if err := json.Unmarshal(body, &b); err != nil {
				t.Fatal(err)
			}
			for _, e := range b.Events {
				sdkEvents[e.ID] = true
			}
			if m["received"] != float64(len(b.Events)) || m["dropped"] != 0.0 || m["status"] != "queued" {
				t.Errorf("%s: %s", what, raw)
			}
		}
	}
	if t.Failed() {
		return
	}
	if len(evalIDs) == 0 || len(sdkEvents) == 0 {
		t.Fatalf("the replay evaluated %d controls and posted %d events", len(evalIDs), len(sdkEvents))
	}

	// The SDK posts its own copy of what the server evaluated (same control_execution_id), and retries
	// batches: neither is stored twice. A sentinel posted last shows when everything before it is written.
	var copies []map[string]any
	for _, id := range evalIDs {
		copies = append(copies, map[string]any{"control_execution_id": id, "agent_name": ad.agent, "control_id": 1,
			"control_name": "copy", "check_stage": "pre", "applies_to": "llm_call", "action": "deny", "matched": false,
			"confidence": 1.0, "timestamp": time.Now().UTC().Format(time.RFC3339Nano)})
	}
	for id := range sdkEvents { // the retry
		copies = append(copies, map[string]any{"control_execution_id": id, "agent_name": ad.agent, "control_id": 1,
			"check_stage": "pre", "applies_to": "tool_call", "action": "observe", "matched": true, "confidence": 1.0,
			"timestamp": time.Now().UTC().Format(time.RFC3339Nano)})
	}
	sentinel := uuid.NewString()
	copies = append(copies, map[string]any{"control_execution_id": sentinel, "agent_name": ad.agent, "control_id": 1,
		"check_stage": "pre", "applies_to": "tool_call", "action": "observe", "matched": true, "confidence": 1.0,
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano)})
	b, _ := json.Marshal(map[string]any{"events": copies})
	if st, _, _, raw := p.send("POST", "/api/v1/observability/events", "/api/v1/observability/events", b); st != 202 {
		t.Fatalf("copies: %d %s", st, raw)
	}
	type ev struct {
		ID       string `json:"control_execution_id"`
		Source   string `json:"source"`
		StepType string `json:"step_type"`
	}
	var q struct {
		Events []ev `json:"events"`
		Total  int  `json:"total"`
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		qb, _ := json.Marshal(map[string]any{"agent_name": ad.agent, "limit": 1000})
		st, _, _, raw := p.send("POST", "/api/v1/observability/events/query", "/api/v1/observability/events/query", qb)
		if st != 200 || json.Unmarshal(raw, &q) != nil {
			t.Fatalf("query: %d %s", st, raw)
		}
		found := false
		for _, e := range q.Events {
			found = found || e.ID == sentinel
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sentinel event was not written within a minute (%d events)", q.Total)
		}
		time.Sleep(50 * time.Millisecond)
	}
	seen := map[string]ev{}
	for _, e := range q.Events {
		if _, dup := seen[e.ID]; dup {
			t.Errorf("event %s is stored twice", e.ID)
		}
		seen[e.ID] = e
	}
	if want := len(evalIDs) + len(sdkEvents) + 1; q.Total != want || len(seen) != want {
		t.Errorf("stored %d events (%d distinct), want %d: the server's %d, the SDK's %d and the sentinel",
			q.Total, len(seen), want, len(evalIDs), len(sdkEvents))
	}
	for _, id := range evalIDs {
		if e := seen[id]; e.Source != "server" {
			t.Errorf("evaluated control %s: stored %+v, want the server's own record", id, e)
		}
	}
	for id := range sdkEvents {
		if e := seen[id]; e.Source != "sdk" || e.StepType != "llm" {
			t.Errorf("SDK event %s: stored %+v, want source sdk and applies_to llm_call as step type llm", id, e)
		}
	}

	// initAgent's agent_created_at was ignored: counted, and logged (path, never value) at debug level.
	_, _, _, metrics := p.send("GET", "/metrics", "", nil)
	if !regexp.MustCompile(`unknown_fields_ignored_total\{route="POST /api/v1/agents/initAgent"\} [1-9]`).Match(metrics) {
		t.Errorf("unknown_fields_ignored_total does not count initAgent's agent_created_at")
	}
	if logs := p.stderr.String(); !strings.Contains(logs, "agent.agent_created_at") || strings.Contains(logs, "2026-11-23T07:30:12") {
		t.Errorf("the debug log must name agent.agent_created_at and never its value")
	}
}

// checkLowercasedCursor follows a list's next_cursor the way the SDK does: an agent cursor lower-cased,
// after checking it is at least 10 characters; a control cursor as an integer (list_controls takes
// cursor: int, and the SDK's own example passes int(next_cursor)).
func checkLowercasedCursor(t *testing.T, p *proc, route string, m map[string]any, what string) {
	t.Helper()
	pg, _ := m["pagination"].(map[string]any)
	cur, _ := pg["next_cursor"].(string)
	if route == "/api/v1/controls" {
		n, err := strconv.ParseInt(cur, 10, 64)
		if err != nil || n <= 0 {
			t.Errorf("%s: next_cursor %q: the SDK sends int(next_cursor)", what, cur)
			return
		}
		cur = strconv.FormatInt(n, 10)
	} else if len(cur) < 10 {
		t.Errorf("%s: next_cursor %q: the SDK needs at least 10 characters and a next page exists", what, cur)
		return
	}
	st, _, next, raw := p.send("GET", route+"?limit=1&cursor="+strings.ToLower(cur), route, nil)
	if st != 200 {
		t.Errorf("%s: page 2 with the lower-cased cursor: %d %s", what, st, raw)
		return
	}
	if _, err := lookup(next, "pagination.total"); err != nil {
		t.Errorf("%s: page 2: %v", what, err)
	}
}

// waitForEvents waits (at most a minute) until some event of agent is written.
func (p *proc) waitForEvents(agent string) {
	p.t.Helper()
	qb, _ := json.Marshal(map[string]any{"agent_name": agent, "limit": 1})
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, _, m, raw := p.send("POST", "/api/v1/observability/events/query", "/api/v1/observability/events/query", qb)
		if st != 200 {
			p.t.Fatalf("query: %d %s", st, raw)
		}
		if n, _ := m["total"].(float64); n > 0 {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no event of %s was written within a minute", agent)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
