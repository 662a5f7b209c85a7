package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/capture"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/store/storetest"
)

const (
	apvAdmin   = "adm-approver"
	apvRuntime = "reg-agent"
)

// refundControl denies refunds of 1000 or more and asks a person.
func refundControl(pattern string) map[string]any {
	return map[string]any{
		"scope": map[string]any{"step_types": []string{"tool"}, "step_names": []string{"refund"}, "stages": []string{"pre"}},
		"condition": map[string]any{"selector": map[string]any{"path": "input.amount"},
			"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": pattern}}},
		"action": map[string]any{"decision": "deny", "metadata": map[string]any{"reason": "refunds of 1000 or more need a person"},
			"approval": map[string]any{"ttl_seconds": 600, "approvers": []string{"finance"}}},
	}
}

// hookRecorder is a webhook receiver: it keeps every body, and answers fail 503s first.
type hookRecorder struct {
	mu     sync.Mutex
	bodies []map[string]any
	tries  int
	fail   int
}

func (h *hookRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tries++
	if h.tries <= h.fail {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	h.bodies = append(h.bodies, m)
}

func (h *hookRecorder) waitFor(t *testing.T, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.mu.Lock()
		got := append([]map[string]any(nil), h.bodies...)
		h.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook got %d notices, want %d", len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type approvalTS struct {
	*tserver
	hook *hookRecorder
	obs  *observability.Recorder
}

func newApprovalTS(t *testing.T, fail int) *approvalTS {
	hook := &hookRecorder{fail: fail}
	hs := httptest.NewServer(hook)
	t.Cleanup(hs.Close)
	st := storetest.SQLite(t)
	obs := observability.NewRecorder(st, observability.RecorderConfig{})
	t.Cleanup(func() { _ = obs.Close(t.Context()) })
	paths, err := capture.ParseRedactPaths([]string{"context.customer_email"})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTSOn(t, st, WithAuth(true, []string{apvRuntime}, []string{apvAdmin}), WithApprovalWebhook(hs.URL),
		WithApprovalRedact(paths), WithObservability(true, obs))
	ts.srv.approvals.hook.backoff = time.Millisecond
	return &approvalTS{tserver: ts, hook: hook, obs: obs}
}

func (a *approvalTS) admin(want int, method, path string, body any) map[string]any {
	a.t.Helper()
	return a.ok(want, method, path, body, "X-API-Key", apvAdmin)
}

func (a *approvalTS) refund(agent string, amount any, ctx map[string]any) map[string]any {
	a.t.Helper()
	step := map[string]any{"type": "tool", "name": "refund", "input": map[string]any{"order": "A-17", "amount": amount}}
	if ctx != nil {
		step["context"] = ctx
	}
	return a.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": agent, "stage": "pre", "step": step}, "X-API-Key", apvRuntime)
}

func (a *approvalTS) setup(agents ...string) int64 {
	a.t.Helper()
	id := int64(a.admin(200, "PUT", "/api/v1/controls", map[string]any{"name": "refund-over-limit", "data": refundControl("^[0-9]{4,}")})["control_id"].(float64))
	for _, ag := range agents {
		a.admin(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": ag}, "steps": []map[string]any{{"type": "tool", "name": "refund"}}})
		a.admin(200, "POST", fmt.Sprintf("/api/v1/agents/%s/controls/%d", ag, id), nil)
	}
	return id
}

func approvalOf(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	a, ok := res["approval"].(map[string]any)
	if !ok {
		t.Fatalf("no approval in %v", res)
	}
	return a
}

// approve approves request id and returns its grant.
func (a *approvalTS) approve(id string) string {
	a.t.Helper()
	got := a.admin(200, "POST", "/api/v1/approvals/"+id, map[string]any{"decision": "approve", "comment": "ok once"})
	g, _ := got["grant"].(string)
	if got["status"] != "approved" || g == "" {
		a.t.Fatalf("approve: %v", got)
	}
	return g
}

// TestApprovalEndToEndInProcess: the whole flow through the handlers: refused with a request, announced,
// approved, run once with the grant, then every other use refused with its reason.
func TestApprovalEndToEndInProcess(t *testing.T) {
	a := newApprovalTS(t, 2) // the webhook fails twice: the notice is retried
	ctlID := a.setup("support-bot")

	res := a.refund("support-bot", 2500, map[string]any{"customer_email": "x@example.com"})
	apv := approvalOf(t, res)
	if decision(res) != "deny" || res["is_safe"] != false || res["reason"] != "refunds of 1000 or more need a person" {
		t.Fatalf("refused as before? %v", res)
	}
	id, _ := apv["id"].(string)
	wantHash, _ := guard.PayloadHash(&guard.Step{Input: map[string]any{"order": "A-17", "amount": 2500}}, guard.StagePre)
	if apv["status"] != "required" || id == "" || apv["url"] != "/api/v1/approvals/"+id || apv["payload_hash"] != wantHash || apv["expires_at"] == nil {
		t.Fatalf("approval = %v", apv)
	}
	// A retry before anyone decided reuses the request.
	if again := approvalOf(t, a.refund("support-bot", 2500, nil)); again["id"] != id {
		t.Fatalf("retry opened %v, want %s", again["id"], id)
	}
	notices := a.hook.waitFor(t, 1)
	n := notices[0]
	if txt, _ := n["text"].(string); !strings.Contains(txt, "refund") || !strings.Contains(txt, id) || strings.Contains(txt, "x@example.com") {
		t.Fatalf("webhook text = %q", txt)
	}
	if na := n["approval"].(map[string]any); na["id"] != id || na["payload_hash"] != wantHash || na["agent_name"] != "support-bot" {
		t.Fatalf("webhook approval = %v", na)
	}

	// Reading it shows the step redacted, pending, no grant; the list shows it.
	got := a.ok(200, "GET", "/api/v1/approvals/"+id, nil, "X-API-Key", apvRuntime)
	step, _ := json.Marshal(got["step"])
	if got["status"] != "pending" || got["grant"] != nil || !strings.Contains(string(step), `"customer_email":"[REDACTED]"`) ||
		!strings.Contains(string(step), `"amount":2500`) || got["control_version"] == nil {
		t.Fatalf("get = %v", got)
	}
	list := a.ok(200, "GET", "/api/v1/approvals?status=pending&agent_name=support-bot", nil, "X-API-Key", apvRuntime)
	if l := list["approvals"].([]any); len(l) != 1 || l[0].(map[string]any)["id"] != id {
		t.Fatalf("list = %v", list)
	}
	// An auditor finds it from the payload's hash, recomputed.
	byHash := a.ok(200, "GET", "/api/v1/approvals?payload_hash="+wantHash, nil, "X-API-Key", apvRuntime)
	if l := byHash["approvals"].([]any); len(l) != 1 || l[0].(map[string]any)["id"] != id {
		t.Fatalf("by hash = %v", byHash)
	}
	otherHash, _ := guard.PayloadHash(&guard.Step{Input: map[string]any{"order": "A-17", "amount": 2501}}, guard.StagePre)
	if l := a.ok(200, "GET", "/api/v1/approvals?payload_hash="+otherHash, nil, "X-API-Key", apvRuntime)["approvals"].([]any); len(l) != 0 {
		t.Fatalf("another payload's hash found %v", l)
	}

	// A runtime key cannot decide.
	a.expectProblem(403, "AUTH_INSUFFICIENT_PRIVILEGES", "POST", "/api/v1/approvals/"+id, map[string]any{"decision": "approve"}, "X-API-Key", apvRuntime)
	grant := a.approve(id)
	dec := a.ok(200, "GET", "/api/v1/approvals/"+id, nil, "X-API-Key", apvRuntime)
	if dec["decided_by"] != "key:"+fingerprint(apvAdmin) || dec["comment"] != "ok once" || dec["grant"] != grant {
		t.Fatalf("decided = %v", dec)
	}
	a.expectProblem(409, "APPROVAL_DECIDED", "POST", "/api/v1/approvals/"+id, map[string]any{"decision": "reject"}, "X-API-Key", apvAdmin)

	// That refund runs once with the grant.
	ran := a.refund("support-bot", 2500, map[string]any{GrantContextKey: grant})
	if decision(ran) != "allow" || ran["is_safe"] != true {
		t.Fatalf("with the grant: %v", ran)
	}
	if g := approvalOf(t, ran); g["status"] != "granted" || g["id"] != id {
		t.Fatalf("granted = %v", g)
	}
	used := a.ok(200, "GET", "/api/v1/approvals/"+id, nil, "X-API-Key", apvRuntime)
	if used["used_at"] == nil || used["used_execution_id"] == "" || used["grant"] != nil {
		t.Fatalf("used = %v", used)
	}
	// The event of the run carries the approval id, and its execution id is the one recorded.
	if err := a.obs.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	evs, _, err := a.st.QueryEvents(t.Context(), guard.EventQuery{AgentName: "support-bot", ControlIDs: []int64{ctlID}, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		if e.Metadata["approval_id"] == id && e.Metadata["approval_status"] == "granted" && e.ControlExecutionID == used["used_execution_id"] {
			found = true
		}
	}
	if !found {
		t.Fatalf("no event of the granted run carries the approval id: %+v", evs)
	}

	// The same refund again: refused, the grant used; a new request opens.
	again := approvalOf(t, a.refund("support-bot", 2500, map[string]any{GrantContextKey: grant}))
	if again["grant_error"] != errGrantUsed.Error() || again["id"] == id || again["id"] == "" {
		t.Fatalf("reuse: %v", again)
	}
	// A different amount with a fresh grant for 2500: refused.
	g2 := a.approve(again["id"].(string))
	if other := approvalOf(t, a.refund("support-bot", 2600, map[string]any{GrantContextKey: g2})); other["grant_error"] != errGrantPayload.Error() {
		t.Fatalf("other amount: %v", other)
	}
	// The control changed since the approval: refused.
	a.admin(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", ctlID), map[string]any{"data": refundControl("^[0-9]{4,}$")})
	if changed := approvalOf(t, a.refund("support-bot", 2500, map[string]any{GrantContextKey: g2})); changed["grant_error"] != errGrantChanged.Error() {
		t.Fatalf("changed control: %v", changed)
	}

	// A rejection says so.
	rej := approvalOf(t, a.refund("support-bot", 3000, nil))
	r := a.admin(200, "POST", "/api/v1/approvals/"+rej["id"].(string), map[string]any{"decision": "reject", "comment": "too much"})
	if r["status"] != "rejected" || r["grant"] != nil || r["comment"] != "too much" {
		t.Fatalf("reject = %v", r)
	}
	a.hook.mu.Lock()
	tries := a.hook.tries
	a.hook.mu.Unlock()
	if tries < 3 {
		t.Fatalf("webhook tried %d times; the first notice needed three", tries)
	}
}

func fingerprint(key string) string {
	d := digest(key)
	return fmt.Sprintf("%x", d)[:12]
}

// TestGrantRefusals: forged, altered, expired, reused, cross-agent and malformed grants are each refused
// with their reason, and the step stays refused.
func TestGrantRefusals(t *testing.T) {
	a := newApprovalTS(t, 0)
	a.setup("bot-a", "bot-b")
	id := approvalOf(t, a.refund("bot-a", 2500, nil))["id"].(string)
	grant := a.approve(id)
	key, err := a.st.ApprovalKey(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := a.st.GetApproval(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	// altered: the version it carries changed, the signature kept.
	parts := strings.Split(grant, ".")
	parts[2] = "99"
	altered := strings.Join(parts, ".")
	forged := signGrant([]byte("not-the-database-secret-0123456789abcdef"), &rec)
	expiredRec := rec
	past := time.Now().Add(-time.Minute)
	expiredRec.GrantExpiresAt = &past
	expired := signGrant(key, &expiredRec)

	tests := []struct {
		name  string
		agent string
		grant any
		want  error
	}{
		{"forged (another key)", "bot-a", forged, errGrantInvalid},
		{"altered claims", "bot-a", altered, errGrantInvalid},
		{"garbage", "bot-a", "ga1.xyz", errGrantInvalid},
		{"unknown request", "bot-a", strings.Replace(grant, id, "00000000-0000-0000-0000-000000000000", 1), errGrantInvalid},
		{"not a string", "bot-a", 42, errGrantNotString},
		{"expired", "bot-a", expired, errGrantExpired},
		{"another agent", "bot-b", grant, errGrantAgent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := a.refund(tt.agent, 2500, map[string]any{GrantContextKey: tt.grant})
			if decision(res) != "deny" || approvalOf(t, res)["grant_error"] != tt.want.Error() {
				t.Fatalf("%v", res)
			}
		})
	}
	// None of those used it: it still runs once, then is refused as used.
	if res := a.refund("bot-a", 2500, map[string]any{GrantContextKey: grant}); decision(res) != "allow" {
		t.Fatalf("the genuine grant: %v", res)
	}
	if res := a.refund("bot-a", 2500, map[string]any{GrantContextKey: grant}); decision(res) != "deny" || approvalOf(t, res)["grant_error"] != errGrantUsed.Error() {
		t.Fatalf("reused: %v", res)
	}
	// Under the limit the grant is not needed and not touched; a step without approval ignores it.
	if res := a.refund("bot-a", 20, map[string]any{GrantContextKey: "junk"}); decision(res) != "allow" || res["approval"] != nil {
		t.Fatalf("under the limit: %v", res)
	}
}

// TestApprovalWaitAndBadInput: wait returns on the decision; bad parameters and bodies are 422s naming
// the field, an unknown id a 404.
func TestApprovalWaitAndBadInput(t *testing.T) {
	a := newApprovalTS(t, 0)
	a.setup("bot")
	id := approvalOf(t, a.refund("bot", 2500, nil))["id"].(string)
	done := make(chan map[string]any, 1)
	start := time.Now()
	go func() {
		done <- a.ok(200, "GET", "/api/v1/approvals/"+id+"?wait=30", nil, "X-API-Key", apvRuntime)
	}()
	// Decide once the waiter is in (the decision wakes it; a decision before it started is read at once).
	time.AfterFunc(50*time.Millisecond, func() {
		a.do("POST", "/api/v1/approvals/"+id, map[string]any{"decision": "approve"}, "X-API-Key", apvAdmin)
	})
	select {
	case got := <-done:
		if got["status"] != "approved" || got["grant"] == nil {
			t.Fatalf("waited: %v", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the wait did not end on the decision")
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("the wait ran to its deadline")
	}
	for _, tt := range []struct {
		method, path string
		body         any
		status       int
		code, field  string
	}{
		{"GET", "/api/v1/approvals/" + id + "?wait=61", nil, 422, "VALIDATION_ERROR", "wait"},
		{"GET", "/api/v1/approvals/" + id + "?wait=x", nil, 422, "VALIDATION_ERROR", "wait"},
		{"GET", "/api/v1/approvals?status=done", nil, 422, "VALIDATION_ERROR", "status"},
		{"GET", "/api/v1/approvals?control_id=-1", nil, 422, "VALIDATION_ERROR", "control_id"},
		{"GET", "/api/v1/approvals?limit=0", nil, 422, "VALIDATION_ERROR", "limit"},
		{"GET", "/api/v1/approvals?payload_hash=abc", nil, 422, "VALIDATION_ERROR", "payload_hash"},
		{"POST", "/api/v1/approvals/" + id, map[string]any{"decision": "maybe"}, 422, "VALIDATION_ERROR", "decision"},
		{"POST", "/api/v1/approvals/" + id, map[string]any{}, 422, "VALIDATION_ERROR", "decision"},
		{"POST", "/api/v1/approvals/" + id, map[string]any{"decision": "approve", "by": "me"}, 422, "VALIDATION_ERROR", "by"},
		{"POST", "/api/v1/approvals/" + id, map[string]any{"decision": "approve", "comment": strings.Repeat("c", 2001)}, 422, "VALIDATION_ERROR", "comment"},
		{"GET", "/api/v1/approvals/nope", nil, 404, "APPROVAL_NOT_FOUND", ""},
		{"POST", "/api/v1/approvals/nope", map[string]any{"decision": "approve"}, 404, "APPROVAL_NOT_FOUND", ""},
	} {
		b := a.expectProblem(tt.status, tt.code, tt.method, tt.path, tt.body, "X-API-Key", apvAdmin)
		if tt.field != "" && (len(b.Errors) == 0 || b.Errors[0].Field != tt.field) {
			t.Errorf("%s %s: errors %+v, want field %s", tt.method, tt.path, b.Errors, tt.field)
		}
	}
}
