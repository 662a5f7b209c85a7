package server

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/server/problem"
)

// TestReferenceFieldNames: responses carry the reference implementation's field names beside guard's
// (additively), where its SDKs read them.
func TestReferenceFieldNames(t *testing.T) {
	ts := newTS(t)
	ts.initAgent("bot")
	id := ts.createControl("c", regexData("x", "deny"))
	ts.link("bot", id)
	ctl := fmt.Sprintf("/api/v1/controls/%d", id)
	want := func(where string, m map[string]any, fields map[string]any) {
		t.Helper()
		for k, v := range fields {
			if got, ok := m[k]; !ok || !reflect.DeepEqual(got, v) {
				t.Errorf("%s: %s = %#v (present %v), want %#v in %v", where, k, got, ok, v, m)
			}
		}
	}
	fid := float64(id)
	want("GET control", ts.ok(200, "GET", ctl, nil), map[string]any{"id": fid, "control_id": fid})
	want("PATCH control", ts.ok(200, "PATCH", ctl, map[string]any{"enabled": true}), map[string]any{"success": true, "id": fid, "control_id": fid, "enabled": true})
	want("restore", ts.ok(200, "POST", ctl+"/versions/1/restore", nil), map[string]any{"id": fid})
	want("validate", ts.ok(200, "POST", "/api/v1/controls/validate", map[string]any{"data": regexData("a", "deny")}), map[string]any{"valid": true, "success": true})
	sum := ts.ok(200, "GET", "/api/v1/controls", nil)["controls"].([]any)[0].(map[string]any)
	want("control summary", sum, map[string]any{"id": fid, "control_id": fid, "used_by_agents_count": 1.0, "agent_count": 1.0})
	ag := ts.ok(200, "GET", "/api/v1/agents", nil)["agents"].([]any)[0].(map[string]any)
	want("agent summary", ag, map[string]any{"control_count": 1.0, "active_controls_count": 1.0})
	v := ts.ok(200, "GET", ctl+"/versions", nil)["versions"].([]any)[0].(map[string]any)
	want("version row", v, map[string]any{"version_num": v["version"], "event_type": v["event"]})
	want("version", ts.ok(200, "GET", ctl+"/versions/1", nil), map[string]any{"version_num": 1.0, "event_type": "created", "version": 1.0, "event": "created"})

	unlink := fmt.Sprintf("/api/v1/agents/bot/controls/%d", id)
	want("unlink", ts.ok(200, "DELETE", unlink, nil), map[string]any{"success": true, "removed": true, "removed_direct_association": true, "control_still_active": false})
	want("unlink again", ts.ok(200, "DELETE", unlink, nil), map[string]any{"removed": false, "removed_direct_association": false, "control_still_active": false})
	ts.link("bot", id)
	want("force delete", ts.ok(200, "DELETE", ctl+"?force=true", nil), map[string]any{"success": true,
		"unlinked_agents": []any{"bot"}, "dissociated_from_agents": []any{"bot"}, "dissociated_from_policies": []any{}, "dissociated_from": []any{}})
}

// TestReferenceVersionHeader: every response, errors included, carries both version headers: guard's
// own version in X-Guard-Server-Version, the reference API version (major 8, which the SDKs compare
// with theirs) in X-Agent-Control-Server-Version.
func TestReferenceVersionHeader(t *testing.T) {
	ts := newTS(t, WithAuth(true, []string{"regular"}, []string{"admin"}))
	for _, r := range []*resp{
		ts.do("GET", "/health", nil),
		ts.do("GET", "/api/v1/agents", nil),                                 // 401
		ts.do("GET", "/api/v1/agents", nil, APIKeyHeader, "regular"),        // 200
		ts.do("GET", "/api/v1/nothing", nil, APIKeyHeader, "regular"),       // 404
		ts.do("DELETE", "/api/v1/controls/1", nil, APIKeyHeader, "regular"), // 403
	} {
		if r.Header.Get("X-Agent-Control-Server-Version") != "8.4.0" || r.Header.Get(VersionHeader) != "test-1.2.3" {
			t.Errorf("status %d: headers %v", r.Code, r.Header)
		}
	}
}

// TestPoliciesAreNotPartOfThisService: every method on every /policies path is a 404 problem that says why.
func TestPoliciesAreNotPartOfThisService(t *testing.T) {
	ts := newTS(t, WithAuth(true, []string{"regular"}, []string{"admin"}))
	for _, method := range []string{"GET", "PUT", "POST", "PATCH", "DELETE"} {
		for _, path := range []string{"/api/v1/policies", "/api/v1/policies/", "/api/v1/policies/7", "/api/v1/policies/7/controls/3"} {
			p := ts.expectProblem(404, problem.CodeNotFound, method, path, `{"name":"p"}`)
			if !strings.Contains(p.Detail, "policies are not part of this service") || !strings.Contains(p.Detail, "controls link to agents directly") {
				t.Fatalf("%s %s: detail %q", method, path, p.Detail)
			}
		}
	}
}

// TestReferenceRoutesExplainThemselves: the reference's agent policy and control binding routes, whatever
// the method, are 404 problems that say what to use instead, not the generic 404 of an unknown route.
func TestReferenceRoutesExplainThemselves(t *testing.T) {
	ts := newTS(t, WithAuth(true, []string{"regular"}, []string{"admin"}))
	for _, tc := range []struct {
		paths []string
		says  []string
	}{
		{[]string{"/api/v1/agents/my-agent-01/policies", "/api/v1/agents/my-agent-01/policies/3", "/api/v1/agents/my-agent-01/policy",
			"/api/v1/agents/my-agent-01/policy/3"},
			[]string{"policies are not part of this service", "GET /api/v1/agents/{agent_name}/controls"}},
		{[]string{"/api/v1/control-bindings", "/api/v1/control-bindings/4", "/api/v1/control-bindings/4/enabled"},
			[]string{"control bindings", "not part of this service", "POST /api/v1/agents/{agent_name}/controls/{control_id}"}},
	} {
		for _, method := range []string{"GET", "PUT", "POST", "PATCH", "DELETE"} {
			for _, path := range tc.paths {
				p := ts.expectProblem(404, problem.CodeNotFound, method, path, `{"policy_id":1}`)
				for _, want := range tc.says {
					if !strings.Contains(p.Detail, want) {
						t.Errorf("%s %s: detail %q does not say %q", method, path, p.Detail, want)
					}
				}
			}
		}
	}
}

// TestCursorsOverHTTP: agent cursors survive lower-casing (the reference SDKs lower-case them) and are at
// least 10 characters; a forged cursor of the right shape is a 422 like garbage. Control cursors are the
// reference's integers (TestControlCursorsOverHTTP).
func TestCursorsOverHTTP(t *testing.T) {
	ts := newTS(t)
	for i := range 3 {
		ts.initAgent(fmt.Sprintf("agent-%d", i))
		ts.createControl(fmt.Sprintf("c%d", i), nil)
	}
	for _, list := range []string{"/api/v1/agents"} {
		pg := ts.ok(200, "GET", list+"?limit=1", nil)["pagination"].(map[string]any)
		cur, _ := pg["next_cursor"].(string)
		if len(cur) < 10 || strings.ToLower(cur) != cur {
			t.Fatalf("%s: next_cursor %q", list, cur)
		}
		ts.ok(200, "GET", list+"?limit=1&cursor="+strings.ToLower(cur), nil)
		forged := cur[:len(cur)-1] + map[bool]string{true: "1", false: "0"}[cur[len(cur)-1] == '0']
		for _, bad := range []string{forged, "garbage", strings.Repeat("0", len(cur))} {
			p := ts.expectProblem(422, problem.CodeValidation, "GET", list+"?cursor="+bad, nil)
			if p.Errors[0].Field != "cursor" {
				t.Fatalf("%s %s: %+v", list, bad, p.Errors)
			}
		}
	}
}

// evaluatorValues returns the entries of GET /evaluators (a map from name to info), sorted by name.
func evaluatorValues(t *testing.T, m map[string]any) []any {
	t.Helper()
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]any, len(names))
	for i, k := range names {
		if _, ok := m[k].(map[string]any); !ok {
			t.Fatalf("GET /evaluators: %q is not an evaluator object", k)
		}
		out[i] = m[k]
	}
	return out
}

// TestControlCursorsOverHTTP: control pages walk with the reference's integer cursors, as its clients
// send them; a malformed one is a 422 naming cursor and saying what it must be.
func TestControlCursorsOverHTTP(t *testing.T) {
	ts := newTS(t)
	var ids []float64
	for i := range 3 {
		ids = append(ids, float64(ts.createControl(fmt.Sprintf("c%d", i), nil)))
	}
	var walked []float64
	path := "/api/v1/controls?limit=1"
	for range 5 {
		m := ts.ok(200, "GET", path, nil)
		for _, c := range m["controls"].([]any) {
			walked = append(walked, c.(map[string]any)["id"].(float64))
		}
		pg := m["pagination"].(map[string]any)
		if pg["has_more"] != true {
			break
		}
		cur := pg["next_cursor"].(string)
		if _, err := strconv.ParseInt(cur, 10, 64); err != nil {
			t.Fatalf("next_cursor %q is not an integer", cur)
		}
		path = "/api/v1/controls?limit=1&cursor=" + cur
	}
	if fmt.Sprint(walked) != fmt.Sprint([]float64{ids[2], ids[1], ids[0]}) {
		t.Fatalf("walked %v, want %v newest first", walked, ids)
	}
	for _, bad := range []string{"0", "007", "-2", "x1", strings.Repeat("9", 30)} {
		p := ts.expectProblem(422, problem.CodeValidation, "GET", "/api/v1/controls?cursor="+bad, nil)
		if len(p.Errors) != 1 || p.Errors[0].Field != "cursor" || !strings.Contains(p.Errors[0].Message, "positive integer") {
			t.Errorf("cursor %q: %+v", bad, p.Errors)
		}
	}
}
