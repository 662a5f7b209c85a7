package server

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// decodingRoute is one route of the decoding rule's table: a valid body (extra is spliced into an object
// of it), the status of success, whether unknown fields are skipped, and where an unknown field "zz" is.
type decodingRoute struct {
	name, method, path string
	body               func(extra string) string
	status             int
	lenient            bool
	unknownAt          string
}

// decodingTable starts a server with what every body route needs (an agent, a linked control, a captured
// step, a pending approval request) and returns the table of every route that takes a body.
func decodingTable(t *testing.T) (*tserver, []decodingRoute) {
	ts, _ := fullServer(t)
	ts.initAgent("bot")
	id := ts.createControl("c", regexData("bad", "deny"))
	ts.link("bot", id)
	// Replay refuses a range with nothing captured (a 422 naming start_time): give it a step to replay.
	if err := ts.st.InsertCapturedSteps(context.Background(), []guard.CapturedStep{{AgentName: "bot", Stage: guard.StagePre,
		StepType: "llm", StepName: "chat", Step: json.RawMessage(`{"type":"llm","name":"chat","input":"x"}`),
		Decision: guard.DecisionAllow, Time: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	// An approval request to decide.
	apvData := regexData("needs-approval", "deny")
	apvData["action"] = map[string]any{"decision": "deny", "approval": map[string]any{}}
	ts.link("bot", ts.createControl("ap", apvData))
	apv := ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": "pre",
		"step": map[string]any{"type": "llm", "name": "chat", "input": "needs-approval"}})["approval"].(map[string]any)["id"].(string)
	ctl := fmt.Sprintf("/api/v1/controls/%d", id)
	data := `{"condition":{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"x"}}},"action":{"decision":"deny"}%s}`
	event := `{"control_execution_id":"%s","agent_name":"bot","control_id":1,"control_name":"c","check_stage":"pre",` +
		`"applies_to":"llm_call","action":"deny","matched":true,"confidence":1,"timestamp":"2026-01-02T03:04:05Z"%s}`

	n := 0
	freshEvent := func(extra string) string {
		n++
		return fmt.Sprintf(event, fmt.Sprintf("00000000-0000-4000-8000-%012d", n), extra)
	}
	routes := []decodingRoute{
		{"create control", "PUT", "/api/v1/controls", func(x string) string {
			n++
			return `{"name":"k` + strconv.Itoa(n) + `","data":` + fmt.Sprintf(data, x) + `}`
		}, 200, false, "data.zz"},
		{"put control data", "PUT", ctl + "/data", func(x string) string { return `{"data":` + fmt.Sprintf(data, x) + `}` }, 200, false, "data.zz"},
		{"validate", "POST", "/api/v1/controls/validate", func(x string) string { return `{"data":` + fmt.Sprintf(data, x) + `}` }, 200, false, "data.zz"},
		{"patch control", "PATCH", ctl, func(x string) string { return `{"enabled":true` + x + `}` }, 200, false, "zz"},
		{"patch agent", "PATCH", "/api/v1/agents/bot", func(x string) string { return `{"agent_version":"2"` + x + `}` }, 200, false, "zz"},
		{"initAgent", "POST", "/api/v1/agents/initAgent", func(x string) string {
			return `{"agent":{"agent_name":"bot"` + x + `},"steps":[{"type":"llm","name":"chat"` + x + `}],"conflict_mode":"overwrite"}`
		}, 200, true, "agent.zz"},
		{"evaluation", "POST", "/api/v1/evaluation", func(x string) string {
			return `{"agent_name":"bot","stage":"pre","step":{"type":"llm","name":"chat","input":"hello"` + x + `},"target_type":null,"target_id":null}`
		}, 200, true, "step.zz"},
		{"post events", "POST", "/api/v1/observability/events", func(x string) string { return `{"events":[` + freshEvent(x) + `]}` }, 202, true, "events.0.zz"},
		{"query events", "POST", "/api/v1/observability/events/query", func(x string) string { return `{"agent_name":"bot","limit":5` + x + `}` }, 200, true, "zz"},
		{"test control", "POST", "/api/v1/controls/test", func(x string) string { return `{"data":` + fmt.Sprintf(data, x) + `}` }, 200, false, "data.zz"},
		{"try control", "POST", "/api/v1/controls/try", func(x string) string {
			return `{"data":` + fmt.Sprintf(data, x) + `,"stage":"pre","step":{"type":"llm","name":"chat","input":"x"}}`
		}, 200, false, "data.zz"},
		{"render template", "POST", "/api/v1/control-templates/us-ssn/render", func(x string) string { return `{"parameters":{"decision":"warn"}` + x + `}` }, 200, false, "zz"},
		{"replay", "POST", "/api/v1/controls/replay", func(x string) string {
			return `{"agent_name":"bot","controls":[{"id":` + strconv.FormatInt(id, 10) + `,"data":` + fmt.Sprintf(data, "") + `}]` + x + `}`
		}, 200, false, "zz"},
		{"create key", "POST", "/api/v1/keys", func(x string) string { return `{"name":"k` + strconv.Itoa(len(x)) + `","role":"read"` + x + `}` }, 201, false, "zz"},
		{"decide approval", "POST", "/api/v1/approvals/" + apv, func(x string) string { return `{"decision":"approve"` + x + `}` }, 200, false, "zz"},
		{"post captured steps", "POST", "/api/v1/steps/captured", func(x string) string {
			return `{"steps":[{"agent_name":"bot","stage":"pre","decision":"allow","step":{"type":"llm","name":"chat","input":"x"` + x + `}` + x + `}]}`
		}, 202, true, "steps.0.zz"},
	}
	return ts, routes
}

// TestDecodingRule checks the decoding rule route by route (docs/api.md, "Request bodies"): the control
// plane refuses unknown fields, runtime and registration routes skip them (counted in
// guard_unknown_fields_ignored_total{route}), and every body with a repeated key is a 422 naming it.
func TestDecodingRule(t *testing.T) {
	ts, routes := decodingTable(t)
	// Every route of the server that takes a body is in the table above: a new one must be given its
	// place in the rule (and in docs/api.md) before this test passes.
	bodyless := map[string]bool{
		"POST " + apiPrefix + "/agents/{agent_name}/controls/{control_id}":        true,
		"POST " + apiPrefix + "/controls/{control_id}/versions/{version}/restore": true,
		"POST " + apiPrefix + "/keys/{key_name}/rotate":                           true,
	}
	for _, sr := range ts.srv.routes() {
		if sr.method != "POST" && sr.method != "PUT" && sr.method != "PATCH" || bodyless[sr.method+" "+sr.path] {
			continue
		}
		segs := strings.Split(sr.path, "/")
		for i, seg := range segs {
			if strings.HasPrefix(seg, "{") {
				segs[i] = `[^/]+`
			} else {
				segs[i] = regexp.QuoteMeta(seg)
			}
		}
		re := regexp.MustCompile("^" + strings.Join(segs, "/") + "$")
		found := false
		for _, rt := range routes {
			found = found || rt.method == sr.method && re.MatchString(rt.path)
		}
		if !found {
			t.Errorf("%s %s takes a body and is not in the decoding rule's table", sr.method, sr.path)
		}
	}
	// Each lenient route's counter is exported from the start (at 0), so that a rate over it is defined.
	metrics := string(ts.do("GET", "/metrics", nil).Body)
	for _, rt := range routes {
		if line := `guard_unknown_fields_ignored_total{route="` + rt.method + " " + rt.path + `"} 0`; rt.lenient && !strings.Contains(metrics, line) {
			t.Errorf("/metrics lacks %s before any unknown field", line)
		}
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			ts.ok(rt.status, rt.method, rt.path, rt.body(""))

			before := ignoredCount(t, ts, rt.method+" "+rt.path)
			r := ts.do(rt.method, rt.path, rt.body(`,"zz":{"secret":"s3cr3t"}`))
			if rt.lenient {
				if r.Code != rt.status {
					t.Fatalf("unknown field: status %d, want %d: %s", r.Code, rt.status, r.Body)
				}
				if after := ignoredCount(t, ts, rt.method+" "+rt.path); after <= before {
					t.Fatalf("unknown_fields_ignored_total did not grow (%v -> %v)", before, after)
				}
			} else {
				if r.Code != 422 {
					t.Fatalf("unknown field: status %d, want 422: %s", r.Code, r.Body)
				}
				if p := r.problem(t); p.Errors[0].Field != rt.unknownAt || p.Errors[0].Code != "unknown_field" {
					t.Fatalf("problem %+v, want unknown_field on %s", p.Errors, rt.unknownAt)
				}
			}
			// A repeated key, at the top of the body's inner object and inside free-form JSON.
			for _, extra := range []string{`,"zz":1,"zz":2`, `,"m":{"a":[{"k":1,"k":2}]}`} {
				r := ts.do(rt.method, rt.path, rt.body(extra))
				if r.Code != 422 {
					t.Fatalf("repeated key %s: status %d: %s", extra, r.Code, r.Body)
				}
				p := r.problem(t)
				if p.Errors[0].Code != "duplicate_key" || !strings.HasSuffix(p.Errors[0].Field, map[bool]string{true: "zz", false: "m.a.0.k"}[strings.Contains(extra, "zz")]) {
					t.Fatalf("repeated key %s: problem %+v", extra, p.Errors)
				}
				if strings.Contains(string(r.Body), "s3cr3t") {
					t.Fatalf("value echoed: %s", r.Body)
				}
			}
		})
	}
}

// TestRepeatedDecisionIsRefused is the case that motivated the rule: encoding/json keeps the last key, so
// {"decision":"deny","decision":"allow"} used to be stored as allow.
func TestRepeatedDecisionIsRefused(t *testing.T) {
	ts := newTS(t)
	body := `{"name":"d","data":{"condition":{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"x"}}},"action":{"decision":"deny","decision":"allow"}}}`
	p := ts.expectProblem(422, problem.CodeValidation, "PUT", "/api/v1/controls", body)
	if p.Errors[0].Field != "data.action.decision" || p.Errors[0].Code != "duplicate_key" {
		t.Fatalf("problem %+v", p.Errors)
	}
	ts.ok(200, "GET", "/api/v1/controls?name=d", nil) // and nothing was stored
	if m := ts.ok(200, "GET", "/api/v1/controls?name=d", nil); len(m["controls"].([]any)) != 0 {
		t.Fatalf("a control was stored: %v", m)
	}
}

var ignoredLine = regexp.MustCompile(`(?m)^guard_unknown_fields_ignored_total\{route="([^"]+)"\} (\S+)$`)

// ignoredCount reads guard_unknown_fields_ignored_total for one route pattern from /metrics.
func ignoredCount(t *testing.T, ts *tserver, route string) float64 {
	t.Helper()
	r := ts.do("GET", "/metrics", nil)
	for _, m := range ignoredLine.FindAllStringSubmatch(string(r.Body), -1) {
		if m[1] == route {
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	return 0
}
