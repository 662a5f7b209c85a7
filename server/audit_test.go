package server

import (
	"context"

	"fmt"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/store/storetest"
	"net/url"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// auditEntries reads GET /audit with query q as key.
func auditEntries(ts *tserver, key, q string) []map[string]any {
	ts.t.Helper()
	r := ts.ok(200, "GET", "/api/v1/audit"+q, nil, APIKeyHeader, key)
	var out []map[string]any
	for _, e := range r["entries"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

// TestAuditDenyToWarn: a control changed from deny to warn by a key configured by its SHA-256 is in the
// audit trail with the key's name, the route, the new version and the diff line; the key's plaintext is
// nowhere (answers, trail, access log).
func TestAuditDenyToWarn(t *testing.T) {
	const secret = "release-manager-plaintext-7f3a"
	keys, err := ParseKeys([]byte(`{"keys": [{"name": "release-manager", "sha256": "` + fmt.Sprintf("%x", digest(secret)) + `", "admin": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.InfoLevel)
	ts := newTS(t, WithAuth(true, []string{"runtime-1"}, nil), WithKeys(keys), WithAccessLog(true), WithLogger(zap.New(core)))
	k := []string{APIKeyHeader, secret}
	ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "support-bot"}, "steps": []any{}}, k...)
	c := ts.ok(200, "PUT", "/api/v1/controls", map[string]any{"name": "no-drop", "data": denyData("drop")}, k...)
	id := int64(c["control_id"].(float64))
	ts.ok(200, "POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil, k...)
	warn := denyData("drop")
	warn["action"] = map[string]any{"decision": "warn"}
	put := ts.ok(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", id), map[string]any{"data": warn}, k...)
	// The agent registers again unchanged (as at every start): no entry. With a new step: one.
	ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "support-bot"}, "steps": []any{}}, "X-API-Key", "runtime-1")
	// (strict: a regular key may not overwrite a registration, TestOverwriteNeedsAdminKey)
	ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "support-bot"},
		"steps": []any{map[string]any{"type": "tool", "name": "refund"}}, "conflict_mode": "strict"}, "X-API-Key", "runtime-1")

	all := auditEntries(ts, "runtime-1", "")
	var actions []string
	for _, e := range all {
		actions = append(actions, e["action"].(string)+"/"+e["key_name"].(string))
	}
	want := "agent.updated/unnamed-regular-1,control.data_replaced/release-manager,agent.control_linked/release-manager," +
		"control.created/release-manager,agent.registered/release-manager"
	if got := strings.Join(actions, ","); got != want {
		t.Fatalf("trail (newest first):\n got %s\nwant %s", got, want)
	}
	e := all[1]
	if e["route"] != "/api/v1/controls/{control_id}/data" || e["method"] != "PUT" || e["control_id"] != float64(id) ||
		e["version"] != put["version"] || e["request_id"] == "" {
		t.Errorf("entry %v", e)
	}
	if ch := fmt.Sprint(e["changes"]); ch != `[~ data.action.decision: "deny" -> "warn"]` {
		t.Errorf("changes %s", ch)
	}
	if ag := fmt.Sprint(e["agents"]); ag != "[support-bot]" {
		t.Errorf("agents %s", ag)
	}
	if ch := fmt.Sprint(all[0]["changes"]); !strings.Contains(ch, `+ steps.0: "tool/refund"`) {
		t.Errorf("agent change %s", ch)
	}
	// Filters.
	for _, c := range []struct {
		q    string
		want int
	}{
		{"?control_id=" + fmt.Sprint(id), 3}, {"?key_name=release-manager", 4}, {"?agent_name=support-bot", 4},
		{"?action=control.data_replaced", 1}, {"?since=2000-01-01T00:00:00Z&until=2001-01-01T00:00:00Z", 0},
		{"?key_name=" + url.QueryEscape(secret), 0},
	} {
		if got := auditEntries(ts, "runtime-1", c.q); len(got) != c.want {
			t.Errorf("%s: %d entries, want %d", c.q, len(got), c.want)
		}
	}
	// Pagination: two pages of 3 and 2 by the cursor.
	p1 := ts.ok(200, "GET", "/api/v1/audit?limit=3", nil, k...)
	pg := p1["pagination"].(map[string]any)
	if len(p1["entries"].([]any)) != 3 || pg["has_more"] != true || pg["total"] != 5.0 {
		t.Fatalf("page 1 %v", pg)
	}
	p2 := ts.ok(200, "GET", "/api/v1/audit?limit=3&cursor="+pg["next_cursor"].(string), nil, k...)
	if es := p2["entries"].([]any); len(es) != 2 || es[1].(map[string]any)["action"] != "agent.registered" {
		t.Fatalf("page 2 %v", p2)
	}
	// Bad parameters: every one named.
	b := ts.expectProblem(422, "VALIDATION_ERROR", "GET", "/api/v1/audit?control_id=x&since=yesterday&limit=0&cursor="+strings.Repeat("z", 600), nil, k...)
	var fields []string
	for _, p := range b.Errors {
		fields = append(fields, p.Field)
	}
	if got := strings.Join(fields, ","); got != "control_id,since,limit,cursor" {
		t.Errorf("problem fields %s", got)
	}
	ts.expectProblem(422, "VALIDATION_ERROR", "GET", "/api/v1/audit?cursor=c0000", nil, k...)
	// A cursor the server did not issue, of a plausible length, is named beside the other bad parameters
	// (issue 32: only the store can tell, and it used to be asked only once the others were right).
	b = ts.expectProblem(422, "VALIDATION_ERROR", "GET", "/api/v1/audit?control_id=x&until=soon&cursor=c0000", nil, k...)
	fields = fields[:0]
	for _, p := range b.Errors {
		fields = append(fields, p.Field)
	}
	if got := strings.Join(fields, ","); got != "control_id,until,cursor" {
		t.Errorf("problem fields %s", got)
	}
	// A good cursor beside a bad parameter is not named.
	b = ts.expectProblem(422, "VALIDATION_ERROR", "GET", "/api/v1/audit?control_id=x&limit=3&cursor="+pg["next_cursor"].(string), nil, k...)
	if len(b.Errors) != 1 || b.Errors[0].Field != "control_id" {
		t.Errorf("problems %+v", b.Errors)
	}
	// The plaintext is nowhere: not in the trail, not in the access log; the key's name is in both.
	if body := string(ts.do("GET", "/api/v1/audit", nil, k...).Body); strings.Contains(body, secret) || !strings.Contains(body, "release-manager") {
		t.Errorf("trail body: %s", body)
	}
	var named bool
	for _, l := range logs.All() {
		line := fmt.Sprint(l.ContextMap())
		if strings.Contains(line, secret) {
			t.Errorf("log line shows the key: %s", line)
		}
		if l.ContextMap()["key"] == "release-manager" {
			named = true
		}
	}
	if !named {
		t.Error("no access-log line names the key")
	}
}

// TestAuditCoversEveryWrite: every route that is not a GET is either recorded (auditActions) or listed as
// changing no policy (auditExempt), so a new changing route cannot skip the trail unnoticed.
func TestAuditCoversEveryWrite(t *testing.T) {
	ts := newTS(t, WithPprof(true))
	for _, rt := range ts.srv.routes() {
		if rt.method == "GET" {
			continue
		}
		_, rec := auditActions[rt.pattern()]
		if rec == auditExempt[rt.pattern()] {
			t.Errorf("%s: must be in exactly one of auditActions and auditExempt", rt.pattern())
		}
	}
	for p := range auditActions {
		found := false
		for _, rt := range ts.srv.routes() {
			found = found || rt.pattern() == p
		}
		if !found {
			t.Errorf("auditActions names %s, which is no route", p)
		}
	}
}

// TestAuditFailedChangeNotRecorded: a refused change (422, 404, 412) leaves no entry.
func TestAuditFailedChangeNotRecorded(t *testing.T) {
	ts := newTS(t)
	c := ts.ok(200, "PUT", "/api/v1/controls", map[string]any{"name": "x", "data": denyData("a")})
	id := fmt.Sprint(c["control_id"])
	ts.do("PUT", "/api/v1/controls/"+id+"/data", map[string]any{"data": map[string]any{"nope": 1}})
	ts.do("PATCH", "/api/v1/controls/999", map[string]any{"enabled": false})
	ts.do("PATCH", "/api/v1/controls/"+id, map[string]any{"enabled": false}, "If-Match", `"99"`)
	es := auditEntries(ts, "", "")
	if len(es) != 1 || es[0]["action"] != "control.created" || es[0]["key_name"] != "" {
		t.Fatalf("trail %v", es)
	}
}

// TestEventsCarryControlVersion: the events of an evaluation carry the version of the control that
// decided, so a change in the audit trail can be matched with the events before and after it.
func TestEventsCarryControlVersion(t *testing.T) {
	st := storetest.SQLite(t)
	rec := observability.NewRecorder(st, observability.RecorderConfig{})
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	ts := newTSOn(t, st, WithObservability(true, rec))
	ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "bot"}, "steps": []any{}})
	c := ts.ok(200, "PUT", "/api/v1/controls", map[string]any{"name": "c", "data": denyData("drop")})
	id := fmt.Sprint(c["control_id"])
	ts.ok(200, "POST", "/api/v1/agents/bot/controls/"+id, nil)
	eval := func() {
		ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": "pre",
			"step": map[string]any{"type": "llm", "name": "x", "input": map[string]any{"text": "drop it"}}})
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	eval()
	warn := denyData("drop")
	warn["action"] = map[string]any{"decision": "warn"}
	v := ts.ok(200, "PUT", "/api/v1/controls/"+id+"/data", map[string]any{"data": warn})["version"]
	eval()
	evs := ts.ok(200, "POST", "/api/v1/observability/events/query", map[string]any{})["events"].([]any)
	if len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	newest, oldest := evs[0].(map[string]any), evs[1].(map[string]any)
	if newest["control_version"] != v || oldest["control_version"] != 1.0 || newest["action"] != "warn" {
		t.Fatalf("events %v / %v, want versions %v and 1", newest, oldest, v)
	}
}

// TestAuditApprovalDecision: a person's decision on an approval request is in the audit trail with the
// deciding key's name (also the request's decided_by), the agent, the control and its version, and the
// payload hash and comment; a scoped key of another agent neither sees nor decides it.
func TestAuditApprovalDecision(t *testing.T) {
	keys, err := ParseKeys([]byte(`{"keys": [
		{"name": "finance-lead", "key": "finance-lead-secret", "admin": true},
		{"name": "other-team", "key": "other-team-secret", "admin": true, "agents": ["other-*"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ts := newTS(t, WithAuth(true, []string{"runtime-1"}, nil), WithKeys(keys))
	k := []string{APIKeyHeader, "finance-lead-secret"}
	ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "support-bot"}, "steps": []any{}}, k...)
	c := ts.ok(200, "PUT", "/api/v1/controls", map[string]any{"name": "refund-over-limit", "data": refundControl("^[0-9]{4,}")}, k...)
	id := int64(c["control_id"].(float64))
	ts.ok(200, "POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil, k...)
	res := ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "support-bot", "stage": "pre",
		"step": map[string]any{"type": "tool", "name": "refund", "input": map[string]any{"amount": 5000}}}, APIKeyHeader, "runtime-1")
	apv, _ := res["approval"].(map[string]any)
	if apv == nil {
		t.Fatalf("no approval request: %v", res)
	}
	apvID := apv["id"].(string)
	if r := ts.do("POST", "/api/v1/approvals/"+apvID, map[string]any{"decision": "approve"}, APIKeyHeader, "other-team-secret"); r.Code != 404 {
		t.Fatalf("a key scoped to other agents decided it: %d %s", r.Code, r.Body)
	}
	dec := ts.ok(200, "POST", "/api/v1/approvals/"+apvID, map[string]any{"decision": "approve", "comment": "ok once"}, k...)
	if dec["decided_by"] != "finance-lead" {
		t.Errorf("decided_by %v, want the key's name", dec["decided_by"])
	}
	got := auditEntries(ts, "finance-lead-secret", "?action=approval.approved")
	if len(got) != 1 {
		t.Fatalf("approval entries %v", got)
	}
	e := got[0]
	if e["key_name"] != "finance-lead" || e["control_id"] != float64(id) || e["version"] != dec["control_version"] ||
		fmt.Sprint(e["agents"]) != "[support-bot]" || fmt.Sprint(e["changes"]) != `[~ status: "pending" -> "approved"]` {
		t.Errorf("entry %v", e)
	}
	detail, _ := e["detail"].(map[string]any)
	if detail["approval_id"] != apvID || detail["payload_hash"] != apv["payload_hash"] || detail["comment"] != "ok once" {
		t.Errorf("detail %v", detail)
	}
	if len(auditEntries(ts, "other-team-secret", "?action=approval.approved")) != 0 {
		t.Error("a key scoped to other agents reads the decision")
	}
}
