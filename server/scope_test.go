package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/capture"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/store/storetest"
)

// scopeFixture is a server with a global admin key, keys scoped to the agents alpha-* (regular, by
// pattern) and alpha-1 (admin, by name, given by its SHA-256), and two agents: alpha-1 with its control,
// bravo-1 with its own ("bravo-only"), a control linked to both ("shared-ctl") and one linked to none.
// Everything of bravo-1 carries "bravo" in its name, so that a leak shows as that word in an answer.
type scopeFixture struct {
	ts                               *tserver
	rec                              *observability.Recorder
	alpha, bravo, shared, unlinked   int64
	bravoJob                         string
	globalKey, scopedKey, scopedAdm  string
	bravoEvents, bravoCaptured       int
	bravoVersion, sharedVersion      float64
	bravoAgentBody, bravoControlBody string
	bravoApproval, bravoApprovalBody string
	bravoTrace                       string // the trace id of one of bravo-1's events
}

const (
	scopeGlobal    = "global-admin-secret"
	scopeRegular   = "alpha-runtime-secret"
	scopeAdminText = "alpha-admin-secret"
)

func newScopeFixture(t *testing.T) *scopeFixture {
	t.Helper()
	keys, err := ParseKeys([]byte(fmt.Sprintf(`{"keys": [
		{"name": "ops", "key": %q, "admin": true},
		{"name": "alpha-runtime", "key": %q, "agents": ["alpha-*"]},
		{"name": "alpha-admin", "sha256": %q, "admin": true, "agents": ["alpha-1"]}
	]}`, scopeGlobal, scopeRegular, fmt.Sprintf("%x", digest(scopeAdminText)))))
	if err != nil {
		t.Fatal(err)
	}
	m, err := observability.NewMetrics("guard")
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.SQLite(t)
	rec := observability.NewRecorder(st, observability.RecorderConfig{Metrics: m})
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	crec, err := capture.New(st, capture.Config{Agents: []string{"*"}, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crec.Close(context.Background()) })
	ts := newTSOn(t, st, WithAuth(true, nil, nil), WithKeys(keys), WithMetrics(m), WithObservability(true, rec),
		WithDurableEvents(true), WithCapture(crec), WithPprof(true), WithUI(http.NotFoundHandler()))
	f := &scopeFixture{ts: ts, rec: rec, globalKey: scopeGlobal, scopedKey: scopeRegular, scopedAdm: scopeAdminText}
	g := []string{APIKeyHeader, scopeGlobal}
	for _, a := range []string{"alpha-1", "bravo-1"} {
		ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": a,
			"agent_description": a + " description"}, "steps": []any{}}, g...)
	}
	mk := func(name string, agents ...string) int64 {
		c := ts.ok(200, "PUT", "/api/v1/controls", map[string]any{"name": name, "data": denyData("drop")}, g...)
		id := int64(c["control_id"].(float64))
		for _, a := range agents {
			ts.ok(200, "POST", fmt.Sprintf("/api/v1/agents/%s/controls/%d", a, id), nil, g...)
		}
		return id
	}
	f.alpha = mk("alpha-ctl", "alpha-1")
	f.bravo = mk("bravo-only", "bravo-1")
	f.shared = mk("shared-ctl", "alpha-1", "bravo-1")
	f.unlinked = mk("draft-ctl")
	// An approval request of bravo-1: a refund its approval control refused.
	refund := mk("bravo-refund", "bravo-1")
	ts.ok(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", refund), map[string]any{"data": refundControl("^[0-9]{4,}")}, g...)
	res := ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "bravo-1", "stage": "pre",
		"step": map[string]any{"type": "tool", "name": "refund", "input": map[string]any{"amount": 5000}}}, g...)
	if apv, ok := res["approval"].(map[string]any); ok {
		f.bravoApproval, _ = apv["id"].(string)
	}
	if f.bravoApproval == "" {
		t.Fatalf("no approval request in %v", res)
	}
	now := time.Now()
	for _, a := range []string{"alpha-1", "bravo-1"} {
		// events of both agents, through the recorder
		ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": a, "stage": "pre",
			"step": map[string]any{"type": "tool", "name": "sql", "input": map[string]any{"text": "drop table"}}}, g...)
		step := []byte(`{"type":"tool","name":"sql","input":{"text":"drop ` + a + `"}}`)
		if err := st.InsertCapturedSteps(context.Background(), []guard.CapturedStep{{AgentName: a, Stage: guard.StagePre,
			StepType: "tool", StepName: "sql", Step: step, Decision: guard.DecisionAllow, Time: now.Add(-time.Minute)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	job := ts.ok(200, "POST", "/api/v1/controls/replay", map[string]any{"agent_name": "bravo-1",
		"controls": []any{map[string]any{"id": f.bravo, "data": denyData("drop|delete")}}}, g...)
	f.bravoJob, _ = job["job_id"].(string)
	if f.bravoJob == "" {
		t.Fatalf("no replay job id in %v", job)
	}
	f.snapshot()
	return f
}

// snapshot records what bravo-1 has, to check afterwards that no scoped request changed it.
func (f *scopeFixture) snapshot() {
	ts, g := f.ts, []string{APIKeyHeader, f.globalKey}
	bq := ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{"agent_name": "bravo-1"}, g...)
	f.bravoEvents = int(bq["total"].(float64))
	f.bravoTrace = "no-trace"
	for _, e := range bq["events"].([]any) {
		if id, _ := e.(map[string]any)["trace_id"].(string); id != "" {
			f.bravoTrace = id
			if tr := ts.ok(200, "GET", "/api/v1/observability/traces/"+id, nil, g...); tr["total"].(float64) < 1 {
				ts.t.Fatalf("the global key does not see bravo-1's trace: %v", tr)
			}
			break
		}
	}
	f.bravoCaptured = len(ts.ok(200, "GET", "/api/v1/steps/captured?agent_name=bravo-1", nil, g...)["steps"].([]any))
	f.bravoVersion = ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d", f.bravo), nil, g...)["version"].(float64)
	f.sharedVersion = ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d", f.shared), nil, g...)["version"].(float64)
	f.bravoAgentBody = string(ts.do("GET", "/api/v1/agents/bravo-1", nil, g...).Body)
	f.bravoControlBody = string(ts.do("GET", "/api/v1/agents/bravo-1/controls", nil, g...).Body)
	f.bravoApprovalBody = string(ts.do("GET", "/api/v1/approvals/"+f.bravoApproval, nil, g...).Body)
}

// scopeCase is one request of a scoped key at something of bravo-1. want is the status (404 or 403); 200
// means a list or statistic that must answer without a trace of bravo-1.
type scopeCase struct {
	path string
	body any
	want int
}

// scopeCases is, per route pattern, the requests a key scoped to alpha-* makes at bravo-1's things. Every
// route of the server must be here (TestScopedKeyEveryRoute fails on a route without cases), so that a new
// route is decided on when it is added.
func (f *scopeFixture) scopeCases() map[string][]scopeCase {
	b, sh, u := fmt.Sprint(f.bravo), fmt.Sprint(f.shared), fmt.Sprint(f.unlinked)
	evalBody := map[string]any{"agent_name": "bravo-1", "stage": "pre", "step": map[string]any{"type": "tool", "name": "sql", "input": map[string]any{"text": "x"}}}
	event := map[string]any{"control_execution_id": "6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f", "agent_name": "bravo-1", "control_id": f.bravo, "control_name": "bravo-only",
		"check_stage": "pre", "applies_to": "tool_call", "action": "deny", "matched": true, "confidence": 1, "timestamp": time.Now().Format(time.RFC3339Nano)}
	public := []scopeCase{{want: 0}} // public routes: not key-checked, answer no agent's data
	none := []scopeCase{{want: 200}} // routes that hold no agent's data: answered, without bravo
	return map[string][]scopeCase{
		"GET /health": public, "GET /ready": public, "GET /openapi.json": public, "GET /docs": public,
		"GET /metrics": public, "GET /ui/": public, "GET /{$}": public,
		"/api/v1/policies": public, "/api/v1/policies/": public,
		// The reference's policy and binding routes: a 404 that explains, whatever the agent.
		"/api/v1/agents/{agent_name}/policies": public, "/api/v1/agents/{agent_name}/policies/": public,
		"/api/v1/agents/{agent_name}/policy": public, "/api/v1/agents/{agent_name}/policy/": public,
		"/api/v1/control-bindings": public, "/api/v1/control-bindings/": public,
		"GET /api/v1/observability/status": none, // the recorder's own health: no agent's data
		"GET /api/v1/audit":                {{path: "/api/v1/audit", want: 200}, {path: "/api/v1/audit?agent_name=bravo-1", want: 404}, {path: "/api/v1/audit?control_id=" + b, want: 200}},
		"GET /api/v1/evaluators":           none,
		// Keys: only a key that reaches every agent manages keys (one that could would widen its own reach).
		"GET /api/v1/keys":                                              {{path: "/api/v1/keys", want: 403}},
		"POST /api/v1/keys":                                             {{path: "/api/v1/keys", body: map[string]any{"name": "k", "role": "runtime", "agents": []string{"alpha-1"}}, want: 403}},
		"GET /api/v1/keys/{key_name}":                                   {{path: "/api/v1/keys/k", want: 403}},
		"POST /api/v1/keys/{key_name}/rotate":                           {{path: "/api/v1/keys/k/rotate", want: 403}},
		"DELETE /api/v1/keys/{key_name}":                                {{path: "/api/v1/keys/k", want: 403}},
		"GET /api/v1/access":                                            none, // the key's own permissions and agents: never another's
		"GET /api/v1/approvals":                                         {{path: "/api/v1/approvals", want: 200}, {path: "/api/v1/approvals?agent_name=bravo-1", want: 404}},
		"GET /api/v1/approvals/{approval_id}":                           {{path: "/api/v1/approvals/" + f.bravoApproval, want: 404}, {path: "/api/v1/approvals/" + f.bravoApproval + "?wait=1", want: 404}},
		"POST /api/v1/approvals/{approval_id}":                          {{path: "/api/v1/approvals/" + f.bravoApproval, body: map[string]any{"decision": "approve"}, want: 404}},
		"GET /api/v1/control-templates":                                 none,
		"GET /api/v1/control-templates/{template_name}":                 {{path: "/api/v1/control-templates/us-ssn", want: 200}},
		"POST /api/v1/control-templates/{template_name}/render":         {{path: "/api/v1/control-templates/us-ssn/render", body: map[string]any{}, want: 200}},
		"POST /api/v1/controls/validate":                                {{body: map[string]any{"data": denyData("x")}, want: 200}},
		"POST /api/v1/controls/test":                                    {{body: map[string]any{"data": denyData("x")}, want: 200}},
		"POST /api/v1/controls/try":                                     {{body: map[string]any{"data": denyData("x"), "stage": "pre", "step": map[string]any{"type": "tool", "name": "t"}}, want: 200}},
		"PUT /api/v1/controls":                                          {{body: map[string]any{"name": "alpha-new"}, want: 200}},
		"GET /api/v1/agents":                                            {{path: "/api/v1/agents", want: 200}, {path: "/api/v1/agents?name=bravo", want: 200}},
		"POST /api/v1/agents/initAgent":                                 {{body: map[string]any{"agent": map[string]any{"agent_name": "bravo-1", "agent_description": "taken"}, "steps": []any{}, "conflict_mode": "overwrite"}, want: 404}},
		"GET /api/v1/agents/{agent_name}":                               {{path: "/api/v1/agents/bravo-1", want: 404}},
		"PATCH /api/v1/agents/{agent_name}":                             {{path: "/api/v1/agents/bravo-1", body: map[string]any{"agent_description": "taken"}, want: 404}},
		"GET /api/v1/agents/{agent_name}/controls":                      {{path: "/api/v1/agents/bravo-1/controls", want: 404}},
		"GET /api/v1/agents/{agent_name}/config":                        {{path: "/api/v1/agents/bravo-1/config", want: 404}},
		"GET /api/v1/controls/schema":                                   {{path: "/api/v1/controls/schema", want: 404}}, // no control: the same 404 for every key
		"GET /api/v1/observability/traces/{trace_id}":                   {{path: "/api/v1/observability/traces/" + f.bravoTrace, want: 200}},
		"GET /api/v1/agents/{agent_name}/sessions/{session_id}":         {{path: "/api/v1/agents/bravo-1/sessions/s1", want: 404}},
		"POST /api/v1/agents/{agent_name}/controls/{control_id}":        {{path: "/api/v1/agents/bravo-1/controls/" + u, want: 404}, {path: "/api/v1/agents/alpha-1/controls/" + b, want: 404}},
		"DELETE /api/v1/agents/{agent_name}/controls/{control_id}":      {{path: "/api/v1/agents/bravo-1/controls/" + b, want: 404}, {path: "/api/v1/agents/bravo-1/controls/" + sh, want: 404}},
		"GET /api/v1/controls":                                          {{path: "/api/v1/controls", want: 200}, {path: "/api/v1/controls?name=bravo", want: 200}},
		"GET /api/v1/controls/{control_id}":                             {{path: "/api/v1/controls/" + b, want: 404}},
		"PATCH /api/v1/controls/{control_id}":                           {{path: "/api/v1/controls/" + b, body: map[string]any{"enabled": false}, want: 404}, {path: "/api/v1/controls/" + sh, body: map[string]any{"enabled": false}, want: 403}},
		"DELETE /api/v1/controls/{control_id}":                          {{path: "/api/v1/controls/" + b + "?force=true", want: 404}, {path: "/api/v1/controls/" + sh + "?force=true", want: 403}},
		"GET /api/v1/controls/{control_id}/data":                        {{path: "/api/v1/controls/" + b + "/data", want: 404}},
		"PUT /api/v1/controls/{control_id}/data":                        {{path: "/api/v1/controls/" + b + "/data", body: map[string]any{"data": denyData("y")}, want: 404}, {path: "/api/v1/controls/" + sh + "/data", body: map[string]any{"data": denyData("y")}, want: 403}},
		"GET /api/v1/controls/{control_id}/versions":                    {{path: "/api/v1/controls/" + b + "/versions", want: 404}},
		"GET /api/v1/controls/{control_id}/versions/{version}":          {{path: "/api/v1/controls/" + b + "/versions/1", want: 404}},
		"POST /api/v1/controls/{control_id}/versions/{version}/restore": {{path: "/api/v1/controls/" + b + "/versions/1/restore", want: 404}, {path: "/api/v1/controls/" + sh + "/versions/1/restore", want: 403}},
		"POST /api/v1/evaluation":                                       {{body: evalBody, want: 404}},
		"POST /api/v1/steps/captured":                                   {{body: map[string]any{"steps": []any{map[string]any{"agent_name": "bravo-1", "stage": "pre", "step": evalBody["step"], "decision": "allow"}}}, want: 404}},
		"GET /api/v1/steps/captured":                                    {{path: "/api/v1/steps/captured?agent_name=bravo-1", want: 404}},
		"POST /api/v1/controls/replay":                                  {{body: map[string]any{"agent_name": "bravo-1", "controls": []any{}}, want: 404}, {body: map[string]any{"controls": []any{}}, want: 403}, {body: map[string]any{"agent_name": "alpha-1", "controls": []any{map[string]any{"id": f.bravo, "data": denyData("z")}}}, want: 404}},
		"GET /api/v1/controls/replay/jobs/{job_id}":                     {{path: "/api/v1/controls/replay/jobs/" + f.bravoJob, want: 404}},
		"POST /api/v1/observability/events":                             {{body: map[string]any{"events": []any{event}}, want: 404}},
		"POST /api/v1/observability/events/query":                       {{body: map[string]any{}, want: 200}, {body: map[string]any{"agent_name": "bravo-1"}, want: 404}},
		"GET /api/v1/observability/stats":                               {{path: "/api/v1/observability/stats", want: 200}, {path: "/api/v1/observability/stats?agent_name=bravo-1", want: 404}},
		"GET /api/v1/observability/stats/controls/{control_id}":         {{path: "/api/v1/observability/stats/controls/" + b, want: 200}, {path: "/api/v1/observability/stats/controls/" + sh, want: 200}},
		"GET /debug/pprof/{$}":                                          {{path: "/debug/pprof/", want: 403}},
		"GET /debug/pprof/cmdline":                                      {{want: 403}},
		"GET /debug/pprof/profile":                                      {{want: 403}},
		"GET /debug/pprof/symbol":                                       {{want: 403}},
		"GET /debug/pprof/trace":                                        {{want: 403}},
		"GET /debug/pprof/{profile}":                                    {{path: "/debug/pprof/heap", want: 403}},
		"POST /debug/pprof/symbol":                                      {{want: 403}},
	}
}

// TestScopedKeyEveryRoute walks the server's route list with keys scoped to alpha-* touching everything of
// bravo-1: every answer is a 404 or 403 (documented in docs/api.md "Authentication"), or, for a list or a
// statistic, an answer without bravo-1 in it; afterwards bravo-1's controls, agent, events and captured
// steps are as they were.
func TestScopedKeyEveryRoute(t *testing.T) {
	f := newScopeFixture(t)
	ts := f.ts
	cases := f.scopeCases()
	for _, rt := range ts.srv.routes() {
		cs, ok := cases[rt.pattern()]
		if !ok {
			t.Errorf("route %s has no case in scopeCases: decide what a key scoped to other agents gets there", rt.pattern())
			continue
		}
		for _, c := range cs {
			path := c.path
			if path == "" {
				path = strings.Replace(rt.path, "{$}", "", 1)
			}
			method := rt.method
			if method == "" {
				method = "GET"
			}
			var body any
			if c.body != nil {
				body = c.body
			} else if method != "GET" && method != "DELETE" {
				body = "{}"
			}
			for _, key := range []string{f.scopedKey, f.scopedAdm} {
				r := ts.do(method, path, body, APIKeyHeader, key)
				name := fmt.Sprintf("%s %s (key %s…)", method, path, key[:5])
				if c.want == 0 { // public
					if r.Code >= 500 {
						t.Errorf("%s: %d %s", name, r.Code, r.Body)
					}
					if rt.path != "/metrics" && strings.Contains(string(r.Body), "bravo") {
						t.Errorf("%s: a public route shows bravo: %.300s", name, r.Body)
					}
					continue
				}
				admin := rt.level == levelAdmin || rt.level == levelApprove
				switch {
				case admin && key == f.scopedKey:
					if r.Code != 403 {
						t.Errorf("%s: regular key on an admin route: %d, want 403", name, r.Code)
					}
				case c.want >= 400:
					if r.Code != c.want {
						t.Errorf("%s: %d, want %d; %.300s", name, r.Code, c.want, r.Body)
					} else {
						_ = r.problem(t)
					}
				default:
					if r.Code != c.want {
						t.Errorf("%s: %d, want %d; %.300s", name, r.Code, c.want, r.Body)
					}
					if strings.Contains(string(r.Body), "bravo") {
						t.Errorf("%s: the answer shows bravo: %.500s", name, r.Body)
					}
				}
			}
		}
	}
	// Nothing of bravo-1 changed.
	g := []string{APIKeyHeader, f.globalKey}
	before := *f
	f.snapshot()
	if f.bravoEvents != before.bravoEvents || f.bravoCaptured != before.bravoCaptured || f.bravoVersion != before.bravoVersion ||
		f.sharedVersion != before.sharedVersion || f.bravoAgentBody != before.bravoAgentBody || f.bravoControlBody != before.bravoControlBody ||
		f.bravoApprovalBody != before.bravoApprovalBody {
		t.Errorf("bravo-1 changed: events %d->%d captured %d->%d version %v->%v shared %v->%v\nagent %s\n->    %s\ncontrols %s\n->       %s",
			before.bravoEvents, f.bravoEvents, before.bravoCaptured, f.bravoCaptured, before.bravoVersion, f.bravoVersion,
			before.sharedVersion, f.sharedVersion, before.bravoAgentBody, f.bravoAgentBody, before.bravoControlBody, f.bravoControlBody)
	}
	ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d", f.shared), nil, g...)
}

// TestScopedKeySeesItsOwn: what the same keys may do with alpha-1's things, so that the denials above are
// the scope and not a broken key.
func TestScopedKeySeesItsOwn(t *testing.T) {
	f := newScopeFixture(t)
	ts := f.ts
	k := []string{APIKeyHeader, f.scopedKey}
	a := []string{APIKeyHeader, f.scopedAdm}
	list := ts.ok(200, "GET", "/api/v1/agents", nil, k...)
	if agents := list["agents"].([]any); len(agents) != 1 || agents[0].(map[string]any)["agent_name"] != "alpha-1" {
		t.Fatalf("agents of a key scoped to alpha-*: %v", list)
	}
	ctls := ts.ok(200, "GET", "/api/v1/controls", nil, k...)
	var names []string
	for _, c := range ctls["controls"].([]any) {
		names = append(names, c.(map[string]any)["name"].(string))
	}
	if got := strings.Join(names, ","); got != "draft-ctl,shared-ctl,alpha-ctl" {
		t.Errorf("controls of a key scoped to alpha-*: %s, want draft-ctl,shared-ctl,alpha-ctl (its agent's, and the unlinked one)", got)
	}
	ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "alpha-1", "stage": "pre",
		"step": map[string]any{"type": "tool", "name": "sql", "input": map[string]any{"text": "hello"}}}, k...)
	ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d", f.shared), nil, k...) // visible: it reaches alpha-1
	ts.ok(200, "PATCH", fmt.Sprintf("/api/v1/controls/%d", f.alpha), map[string]any{"enabled": false}, a...)
	ts.ok(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", f.unlinked), map[string]any{"data": denyData("q")}, a...)
	ts.ok(200, "POST", fmt.Sprintf("/api/v1/agents/alpha-1/controls/%d", f.unlinked), nil, a...)
	ts.ok(200, "DELETE", fmt.Sprintf("/api/v1/agents/alpha-1/controls/%d", f.shared), nil, a...) // changes alpha-1 only
	if err := f.rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev := ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{}, k...)
	if ev["total"].(float64) < 1 {
		t.Errorf("the scoped key sees no event of its agent: %v", ev)
	}
	for _, e := range ev["events"].([]any) {
		if n := e.(map[string]any)["agent_name"]; n != "alpha-1" {
			t.Errorf("event of %v", n)
		}
	}
	// Events name the key of the request that evaluated (the fixture's with "ops", the one above with
	// "alpha-runtime"), never the key itself.
	keyNames := map[any]bool{}
	for _, e := range ev["events"].([]any) {
		keyNames[e.(map[string]any)["key_name"]] = true
	}
	if !keyNames["ops"] || !keyNames["alpha-runtime"] || strings.Contains(fmt.Sprint(ev), scopeRegular) {
		t.Errorf("the events' key names: %v", keyNames)
	}
	st := ts.ok(200, "GET", "/api/v1/observability/stats", nil, k...)
	if ag := st["agents"].([]any); len(ag) != 1 || ag[0].(map[string]any)["agent_name"] != "alpha-1" {
		t.Errorf("stats agents %v", st["agents"])
	}
}

// TestKeyFileProblems: every problem of a key file in one error, never the secret.
func TestKeyFileProblems(t *testing.T) {
	cases := []struct {
		name, file string
		want       []string
	}{
		{"not json", `keys:`, []string{"not a JSON object"}},
		{"unknown field", `{"keys": [{"name": "a", "key": "k", "admn": true}]}`, []string{"unknown field"}},
		// Keys compared exactly (issue 32): "Admin" is not "admin", and a key given twice is refused.
		{"field in another case", `{"keys": [{"name": "a", "key": "sekrit-k", "Admin": true}]}`, []string{"keys.0.Admin", "unknown field"}},
		{"KEYS", `{"KEYS": [{"name": "a", "key": "sekrit-k"}]}`, []string{"KEYS", "unknown field"}},
		{"repeated key", `{"keys": [{"name": "a", "key": "sekrit-k", "admin": false, "admin": true}]}`, []string{"keys.0.admin", "more than once"}},
		{"empty", `{"keys": []}`, []string{"configures no key"}},
		{"every problem", `{"keys": [{"key": "sekrit-1"}, {"name": "b c", "sha256": "abc"}, {"name": "d", "key": "sekrit-2", "sha256": "00"},
			{"name": "e"}, {"name": "unnamed-x", "key": "sekrit-3"}, {"name": "f", "key": "sekrit-1", "agents": ["[", ""]}, {"name": "f", "key": "z"}]}`,
			[]string{"keys[0]: name is required", "keys[1] (b c): name must be", "keys[1] (b c): sha256 must be 64",
				"keys[2] (d): give either key or sha256", "keys[3] (e): key or sha256 is required", "keys[4] (unnamed-x): name may not start",
				"keys[5] (f): the same secret as keys[0]", `keys[5] (f): agents[0]: "[" is not a valid pattern`, "keys[5] (f): agents[1]: is empty",
				"keys[6] (f): name is also the name of keys[5]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseKeys([]byte(c.file))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "sekrit") {
				t.Errorf("the error shows a secret: %v", err)
			}
		})
	}
	keys, err := ParseKeys([]byte(`{"keys": [{"name": "ops", "sha256": "` + strings.Repeat("ab", 32) + `", "admin": true, "agents": ["a-*", "b"]}]}`))
	if err != nil || len(keys) != 1 || !keys[0].Admin || len(keys[0].Agents) != 2 {
		t.Fatalf("%v %v", keys, err)
	}
}

// TestKeyNameInContextAndLog: the handler sees the key's name (KeyName), the access log records it, the
// secret appears in neither; the keys of GUARD_API_KEYS / GUARD_ADMIN_API_KEYS are named by position.
func TestKeyNameInContext(t *testing.T) {
	keys, err := ParseKeys([]byte(`{"keys": [{"name": "ci-bot", "sha256": "` + fmt.Sprintf("%x", digest("hashed-secret")) + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, err := newAuthenticator(true, []string{"r1", "r2"}, []string{"a1", "r2"}, keys)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ key, name string }{{"hashed-secret", "ci-bot"}, {"r1", "unnamed-regular-1"}, {"r2", "unnamed-admin-2"}, {"a1", "unnamed-admin-1"}} {
		var got string
		h := a.wrap(levelRuntime, false, "", http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = KeyName(r.Context()) }))
		r, _ := http.NewRequest("GET", "/x", nil)
		r.Header.Set(APIKeyHeader, c.key)
		h.ServeHTTP(&discardWriter{h: http.Header{}}, r)
		if got != c.name {
			t.Errorf("key %s: KeyName %q, want %q", c.key, got, c.name)
		}
	}
	if _, err := newAuthenticator(true, nil, []string{"same"}, []Key{{Name: "dup", Key: "same"}}); err == nil {
		t.Error("a named key with the secret of an unnamed one is accepted")
	}
}

// TestKeyFileExampleInDocs: the key file shown in docs/operations.md is one ParseKeys accepts.
func TestKeyFileExampleInDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```json\n{\"keys\"")
	if !ok {
		t.Fatal("docs/operations.md shows no key file")
	}
	block, _, _ = strings.Cut(block, "```")
	keys, err := ParseKeys([]byte(`{"keys"` + block))
	if err != nil || len(keys) != 3 || keys[1].Agents[0] != "support-*" {
		t.Fatalf("%v %v", keys, err)
	}
}
