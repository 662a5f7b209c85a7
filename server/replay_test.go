package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/capture"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// denyData is enabled control data denying steps whose input.text matches pattern.
func denyData(pattern string) map[string]any {
	return map[string]any{
		"enabled":   true,
		"scope":     map[string]any{"stages": []string{"pre"}},
		"condition": map[string]any{"selector": map[string]any{"path": "input.text"}, "evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": pattern}}},
		"action":    map[string]any{"decision": "deny"},
	}
}

// captureTS is a test server capturing the steps of the given agents, redacting context.user_email and
// input.password; it returns the server and its recorder.
func captureTS(t *testing.T, st *store.Store, agents []string, opts ...Option) (*tserver, *capture.Recorder) {
	t.Helper()
	rec, err := capture.New(st, capture.Config{Agents: agents, RedactPaths: []string{"context.user_email", "input.password"},
		FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	return newTSOn(t, st, append([]Option{WithCapture(rec)}, opts...)...), rec
}

// seedAgent creates agent with one linked control "block-drop" denying input.text matching "drop" and
// returns the control's id.
func seedAgent(ts *tserver, agent string) int64 {
	ts.t.Helper()
	ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": agent}, "steps": []any{}})
	c := ts.ok(200, "PUT", "/api/v1/controls", map[string]any{"name": "block-drop-" + agent, "data": denyData("drop")})
	id := int64(c["control_id"].(float64))
	ts.ok(200, "POST", fmt.Sprintf("/api/v1/agents/%s/controls/%d", agent, id), nil)
	return id
}

func evalText(ts *tserver, agent, text string) string {
	ts.t.Helper()
	r := ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": agent, "stage": "pre",
		"step": map[string]any{"type": "tool", "name": "sql", "input": map[string]any{"text": text, "password": "hunter2"},
			"context": map[string]any{"user_email": "a@example.com", "tenant": "t1"}}})
	return r["decision"].(string)
}

func TestCaptureStoresEvaluatedStepsRedacted(t *testing.T) {
	st := storetest.SQLite(t)
	ts, rec := captureTS(t, st, []string{"Bot"})
	seedAgent(ts, "bot")
	seedAgent(ts, "other")
	if d := evalText(ts, "bot", "drop table users"); d != "deny" {
		t.Fatalf("decision %s", d)
	}
	evalText(ts, "bot", "hello")
	evalText(ts, "other", "not captured")
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, _, err := st.CapturedSteps(context.Background(), guard.CaptureQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d captured steps, want the 2 of the captured agent", len(got))
	}
	if got[0].AgentName != "bot" || got[0].Decision != guard.DecisionDeny || got[0].Stage != guard.StagePre ||
		got[0].StepType != "tool" || got[0].StepName != "sql" || got[0].Source != "server" || got[1].Decision != guard.DecisionAllow {
		t.Errorf("captured %+v", got[0])
	}
	body := string(got[0].Step)
	for _, secret := range []string{"a@example.com", "hunter2"} {
		if strings.Contains(body, secret) {
			t.Errorf("stored step holds %q: %s", secret, body)
		}
	}
	if !strings.Contains(body, `"user_email":"[REDACTED]"`) || !strings.Contains(body, `"tenant":"t1"`) || !strings.Contains(body, "drop table users") {
		t.Errorf("stored step %s", body)
	}
}

func TestCaptureOffStoresNothing(t *testing.T) {
	st := storetest.SQLite(t)
	ts := newTSOn(t, st)
	seedAgent(ts, "bot")
	evalText(ts, "bot", "drop")
	got, _, err := st.CapturedSteps(context.Background(), guard.CaptureQuery{Limit: 10})
	if err != nil || len(got) != 0 {
		t.Fatalf("capture off stored %d steps (%v)", len(got), err)
	}
}

// replayFixture captures four steps of agent bot: two denied by "drop", two allowed.
func replayFixture(t *testing.T, opts ...Option) (*tserver, int64) {
	t.Helper()
	st := storetest.SQLite(t)
	ts, rec := captureTS(t, st, []string{"bot"}, opts...)
	id := seedAgent(ts, "bot")
	for _, text := range []string{"drop table", "delete everything", "hello", "drop it, delete it"} {
		evalText(ts, "bot", text)
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ts, id
}

func TestReplayTightenedControl(t *testing.T) {
	ts, id := replayFixture(t)
	r := ts.ok(200, "POST", "/api/v1/controls/replay", map[string]any{"agent_name": "bot",
		"controls": []any{map[string]any{"id": id, "data": denyData("drop|delete")}}})
	if r["status"] != "done" {
		t.Fatalf("status %v", r["status"])
	}
	res := r["result"].(map[string]any)
	if res["steps_replayed"] != 4.0 || res["steps_changed"] != 1.0 || res["truncated"] != false {
		t.Fatalf("result %v", res)
	}
	if ch := res["changes"].(map[string]any); len(ch) != 1 || ch["allow_to_deny"] != 1.0 {
		t.Errorf("changes %v", ch)
	}
	ctl := res["controls"].([]any)[0].(map[string]any)
	if ctl["control_id"] != float64(id) || ctl["matched_current"] != 2.0 || ctl["matched_draft"] != 3.0 ||
		ctl["newly_matched"] != 1.0 || ctl["no_longer_matched"] != 0.0 || ctl["in_draft"] != true {
		t.Errorf("control stats %v", ctl)
	}
	samples := res["samples"].([]any)
	if len(samples) != 1 {
		t.Fatalf("samples %v", samples)
	}
	s := samples[0].(map[string]any)
	step, _ := json.Marshal(s["step"])
	if s["kind"] != "allow_to_deny" || !strings.Contains(string(step), "delete everything") || strings.Contains(string(step), "hunter2") ||
		s["current"].(map[string]any)["decision"] != "allow" || s["draft"].(map[string]any)["decision"] != "deny" ||
		s["recorded_decision"] != "allow" {
		t.Errorf("sample %v", s)
	}
}

func TestReplayLoosenedAndNewControls(t *testing.T) {
	ts, id := replayFixture(t)
	// Loosen block-drop to match nothing of the fixture, and add a new control denying "hello".
	r := ts.ok(200, "POST", "/api/v1/controls/replay", map[string]any{
		"controls": []any{
			map[string]any{"name": "block-drop-bot", "data": denyData("^never$")},
			map[string]any{"name": "block-hello", "data": denyData("hello")},
		}})
	res := r["result"].(map[string]any)
	if res["agent_name"] != nil || res["steps_replayed"] != 4.0 || res["steps_changed"] != 3.0 {
		t.Fatalf("result %v", res)
	}
	if ch := res["changes"].(map[string]any); ch["deny_to_allow"] != 2.0 || ch["allow_to_deny"] != 1.0 {
		t.Errorf("changes %v", ch)
	}
	ctls := res["controls"].([]any)
	if len(ctls) != 2 {
		t.Fatalf("controls %v", ctls)
	}
	old, added := ctls[0].(map[string]any), ctls[1].(map[string]any)
	if old["control_id"] != float64(id) || old["no_longer_matched"] != 2.0 ||
		added["control_id"] != nil || added["control_name"] != "block-hello" || added["newly_matched"] != 1.0 {
		t.Errorf("controls %v", ctls)
	}
}

// TestReplayShadowEdits: a control put in shadow by the draft no longer decides (its denies become
// allows), and an edit of a control that stays in shadow changes no decision; in both, the control's
// counts say what its condition matches before and after, so that replaying a shadow control's edit
// shows what it would do.
func TestReplayShadowEdits(t *testing.T) {
	ts, id := replayFixture(t)
	shadow := func(pattern string) map[string]any { d := denyData(pattern); d["mode"] = "shadow"; return d }
	replay := func() (map[string]any, map[string]any) {
		t.Helper()
		r := ts.ok(200, "POST", "/api/v1/controls/replay", map[string]any{"agent_name": "bot",
			"controls": []any{map[string]any{"id": id, "data": shadow("drop|delete")}}})
		res := r["result"].(map[string]any)
		return res, res["controls"].([]any)[0].(map[string]any)
	}
	// Enforced now, in shadow (and wider) in the draft: the two denies go.
	res, ctl := replay()
	if res["steps_changed"] != 2.0 || res["changes"].(map[string]any)["deny_to_allow"] != 2.0 {
		t.Errorf("result %v", res)
	}
	if ctl["matched_current"] != 2.0 || ctl["matched_draft"] != 3.0 || ctl["newly_matched"] != 1.0 || ctl["no_longer_matched"] != 0.0 {
		t.Errorf("control %v: a shadow control's matches count", ctl)
	}
	// In shadow now, edited in shadow: no decision changes, the matches still tell the edit.
	ts.ok(200, "PATCH", fmt.Sprintf("/api/v1/controls/%d", id), map[string]any{"mode": "shadow"})
	res, ctl = replay()
	if res["steps_replayed"] != 4.0 || res["steps_changed"] != 0.0 || len(res["samples"].([]any)) != 0 {
		t.Errorf("result %v", res)
	}
	if ctl["matched_current"] != 2.0 || ctl["matched_draft"] != 3.0 || ctl["newly_matched"] != 1.0 {
		t.Errorf("control %v: the edit of a shadow control must show what it would match", ctl)
	}
}

func TestReplayBadInput(t *testing.T) {
	ts, id := replayFixture(t)
	bad := denyData("x")
	bad["action"] = map[string]any{"decision": "explode"}
	tests := []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"draft does not validate", map[string]any{"agent_name": "bot", "controls": []any{map[string]any{"id": id, "data": bad}}}, 422, "controls.0.data.action.decision"},
		{"no data", map[string]any{"controls": []any{map[string]any{"id": id}}}, 422, "controls.0.data"},
		{"unknown control id", map[string]any{"controls": []any{map[string]any{"id": 9999, "data": denyData("x")}}}, 422, "controls.0.id"},
		{"neither id nor name", map[string]any{"controls": []any{map[string]any{"data": denyData("x")}}}, 422, "controls.0.name"},
		{"same control twice", map[string]any{"controls": []any{map[string]any{"id": id, "data": denyData("x")}, map[string]any{"name": "block-drop-bot", "data": denyData("y")}}}, 422, "controls.1.name"},
		{"empty draft", map[string]any{"controls": []any{}}, 422, "controls"},
		{"bad agent name", map[string]any{"agent_name": "no spaces allowed", "controls": []any{map[string]any{"id": id, "data": denyData("x")}}}, 422, "agent_name"},
		{"unknown agent", map[string]any{"agent_name": "ghost", "controls": []any{map[string]any{"id": id, "data": denyData("x")}}}, 404, "agent_name"},
		{"range with no captured steps", map[string]any{"agent_name": "bot", "start_time": "2020-01-01T00:00:00Z", "end_time": "2020-01-02T00:00:00Z",
			"controls": []any{map[string]any{"id": id, "data": denyData("x")}}}, 422, "start_time"},
		{"range backwards", map[string]any{"start_time": "2026-01-02T00:00:00Z", "end_time": "2026-01-01T00:00:00Z", "controls": []any{map[string]any{"id": id, "data": denyData("x")}}}, 422, "start_time"},
		{"limit too large", map[string]any{"limit": 100001, "controls": []any{map[string]any{"id": id, "data": denyData("x")}}}, 422, "limit"},
		{"unknown field", map[string]any{"agent": "bot", "controls": []any{map[string]any{"id": id, "data": denyData("x")}}}, 422, "agent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.do("POST", "/api/v1/controls/replay", tt.body)
			if r.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Code, tt.status, r.Body)
			}
			p := r.problem(t)
			if tt.status == 404 && p.ErrorCode != "AGENT_NOT_FOUND" {
				t.Errorf("code %s", p.ErrorCode)
			}
			for _, e := range p.Errors {
				if e.Field == tt.field {
					return
				}
			}
			t.Errorf("problems %+v do not name %s", p.Errors, tt.field)
		})
	}
}

// TestReplayNothingCapturedNamesTheRange: a range in which nothing was captured (for the agent, or for
// any agent) is bad input: a 422 at start_time that says why, and no job is started.
func TestReplayNothingCapturedNamesTheRange(t *testing.T) {
	ts, id := replayFixture(t)
	ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "quiet-bot"}, "steps": []any{}})
	ctl := []any{map[string]any{"id": id, "data": denyData("x")}}
	for _, body := range []map[string]any{
		{"agent_name": "bot", "start_time": "2020-01-01T00:00:00Z", "end_time": "2020-01-02T00:00:00Z", "controls": ctl},
		{"start_time": "2020-01-01T00:00:00Z", "end_time": "2020-01-02T00:00:00Z", "controls": ctl},
		{"agent_name": "quiet-bot", "controls": ctl}, // an agent whose steps are not captured: the last 24 h are empty
	} {
		b := ts.expectProblem(422, "VALIDATION_ERROR", "POST", "/api/v1/controls/replay", body)
		if len(b.Errors) != 1 || b.Errors[0].Field != "start_time" || b.Errors[0].Code != "no_captured_steps" ||
			!strings.Contains(b.Errors[0].Message, "GUARD_CAPTURE_AGENTS") {
			t.Errorf("%v: problems %+v, want one at start_time", body, b.Errors)
		}
	}
	ts.srv.jobs.mu.Lock()
	n := len(ts.srv.jobs.jobs)
	ts.srv.jobs.mu.Unlock()
	if n != 0 {
		t.Errorf("%d replay jobs were started for ranges with nothing to replay", n)
	}
	// The same agent and draft over the default range (the last 24 h) replays the four captured steps.
	if r := ts.ok(200, "POST", "/api/v1/controls/replay", map[string]any{"agent_name": "bot", "controls": ctl}); r["result"].(map[string]any)["steps_replayed"] != 4.0 {
		t.Errorf("replay of the last 24 h: %v", r)
	}
}

func TestReplayRunsAsJobBeyondTheSyncWait(t *testing.T) {
	ts, id := replayFixture(t, WithReplaySyncWait(0))
	// The job waits for the test: the answer is the 202 of a running job, deterministically.
	release := make(chan struct{})
	ts.srv.jobs.beforeRun = func() { <-release }
	r := ts.do("POST", "/api/v1/controls/replay", map[string]any{"agent_name": "bot",
		"controls": []any{map[string]any{"id": id, "data": denyData("drop|delete")}}})
	var view map[string]any
	switch r.Code {
	case 202:
		loc := r.Header.Get("Location")
		if !strings.HasPrefix(loc, "/api/v1/controls/replay/jobs/") {
			t.Fatalf("Location %q", loc)
		}
		if v := ts.ok(200, "GET", loc, nil); v["status"] != "running" || v["result"] != nil {
			t.Fatalf("held job %v", v)
		}
		close(release)
		deadline := time.Now().Add(30 * time.Second)
		for {
			view = ts.ok(200, "GET", loc, nil)
			if view["status"] != "running" || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	default:
		t.Fatalf("status %d: %s", r.Code, r.Body)
	}
	if view["status"] != "done" || view["result"].(map[string]any)["steps_changed"] != 1.0 {
		t.Fatalf("job %v", view)
	}
	if p := view["progress"].(map[string]any); p["steps_total"] != 4.0 || p["steps_done"] != 4.0 {
		t.Errorf("progress %v", p)
	}
	if r := ts.do("GET", "/api/v1/controls/replay/jobs/nosuchjob", nil); r.Code != 404 {
		t.Errorf("unknown job: %d", r.Code)
	}
}

func TestPostCapturedSteps(t *testing.T) {
	st := storetest.SQLite(t)
	ts, rec := captureTS(t, st, []string{"bot"})
	step := map[string]any{"type": "llm", "name": "chat", "input": "hi", "context": map[string]any{"user_email": "x@y.z"}}
	r := ts.ok(202, "POST", "/api/v1/steps/captured", map[string]any{"steps": []any{
		map[string]any{"agent_name": "bot", "stage": "pre", "decision": "allow", "step": step, "timestamp": "2026-11-24T10:00:00Z"},
		map[string]any{"agent_name": "other", "stage": "post", "decision": "deny", "step": step},
	}})
	if r["received"] != 2.0 || r["enqueued"] != 1.0 || r["ignored"] != 1.0 || r["dropped"] != 0.0 {
		t.Fatalf("answer %v", r)
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, _, _ := st.CapturedSteps(context.Background(), guard.CaptureQuery{Limit: 10})
	if len(got) != 1 || got[0].Source != "sdk" || strings.Contains(string(got[0].Step), "x@y.z") ||
		!got[0].Time.Equal(time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("stored %+v", got)
	}
	bad := []struct {
		body  any
		field string
	}{
		{map[string]any{"steps": []any{}}, "steps"},
		{map[string]any{"steps": []any{map[string]any{"agent_name": "bot", "stage": "mid", "decision": "allow", "step": step}}}, "steps.0.stage"},
		{map[string]any{"steps": []any{map[string]any{"agent_name": "bot", "stage": "pre", "decision": "maybe", "step": step}}}, "steps.0.decision"},
		{map[string]any{"steps": []any{map[string]any{"agent_name": "bot", "stage": "pre", "decision": "allow"}}}, "steps.0.step"},
	}
	for _, b := range bad {
		r := ts.do("POST", "/api/v1/steps/captured", b.body)
		if r.Code != 422 {
			t.Fatalf("%v: status %d", b.body, r.Code)
		}
		found := false
		for _, e := range r.problem(t).Errors {
			found = found || e.Field == b.field
		}
		if !found {
			t.Errorf("%s not named: %s", b.field, r.Body)
		}
	}
}

// TestReplayResponsesMatchOpenAPI validates the answers of the capture and replay routes (results with
// samples, jobs, problems) against the OpenAPI document.
func TestReplayResponsesMatchOpenAPI(t *testing.T) {
	ts, id := replayFixture(t)
	v := newValidator(t)
	ts.onResponse = func(req *http.Request, r *resp) {
		_, pattern := ts.srv.mux.Handler(req)
		v.check(req, r, pattern)
	}
	ctl := func(pattern string) []any { return []any{map[string]any{"id": id, "data": denyData(pattern)}} }
	ts.ok(200, "POST", "/api/v1/controls/replay", map[string]any{"agent_name": "bot", "controls": ctl("drop|delete")})
	ts.ok(200, "POST", "/api/v1/controls/replay", map[string]any{"controls": []any{map[string]any{"name": "new-one", "data": denyData("hello")}}})
	ts.do("POST", "/api/v1/controls/replay", map[string]any{"agent_name": "ghost", "controls": ctl("x")})
	ts.do("POST", "/api/v1/controls/replay", map[string]any{"controls": []any{}})
	ts.do("GET", "/api/v1/controls/replay/jobs/none", nil)
	ts.srv.cfg.replay.syncWait = 0
	release := make(chan struct{})
	ts.srv.jobs.beforeRun = func() { <-release }
	r := ts.do("POST", "/api/v1/controls/replay", map[string]any{"agent_name": "bot", "controls": ctl("x")})
	ts.do("GET", r.Header.Get("Location"), nil)
	close(release)
	ts.do("POST", "/api/v1/steps/captured", map[string]any{"steps": []any{map[string]any{"agent_name": "bot", "stage": "pre",
		"decision": "allow", "step": map[string]any{"type": "llm", "name": "chat"}}}})
	ts.do("POST", "/api/v1/steps/captured", map[string]any{"steps": []any{}})
	if len(v.seen) < 6 {
		t.Fatalf("only %d (route, status) pairs validated: %v", len(v.seen), v.seen)
	}
}

func TestReplayLimitAndLargeSteps(t *testing.T) {
	ts, id := replayFixture(t)
	r := ts.ok(200, "POST", "/api/v1/controls/replay", map[string]any{"agent_name": "bot", "limit": 2,
		"controls": []any{map[string]any{"id": id, "data": denyData("drop|delete")}}})
	res := r["result"].(map[string]any)
	if res["steps_replayed"] != 2.0 || res["truncated"] != true {
		t.Fatalf("limit 2: %v", res)
	}
	// A step larger than 64 KiB is shown by type and name only.
	big, _ := json.Marshal(guard.Step{Type: "tool", Name: "sql", Input: map[string]any{"text": "delete " + strings.Repeat("x", 70<<10)}})
	if err := ts.st.InsertCapturedSteps(context.Background(), []guard.CapturedStep{{AgentName: "bot", Stage: guard.StagePre,
		StepType: "tool", StepName: "sql", Step: big, Decision: guard.DecisionAllow, Time: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	r = ts.ok(200, "POST", "/api/v1/controls/replay", map[string]any{"agent_name": "bot",
		"controls": []any{map[string]any{"id": id, "data": denyData("delete")}}})
	res = r["result"].(map[string]any)
	var found bool
	for _, s := range res["samples"].([]any) {
		s := s.(map[string]any)
		if s["step_truncated"] == true {
			found = true
			if st := s["step"].(map[string]any); st["type"] != "tool" || st["name"] != "sql" || st["input"] != nil {
				t.Errorf("truncated step %v", st)
			}
		}
	}
	if !found || res["steps_replayed"] != 5.0 {
		t.Fatalf("no truncated sample: %v", res)
	}
}

// TestReplayReportsApproval: a draft that adds action.approval to a control says, in its samples, which
// steps a person could have let through.
func TestReplayReportsApproval(t *testing.T) {
	ts, id := replayFixture(t)
	data := denyData("drop|delete")
	data["action"] = map[string]any{"decision": "deny", "approval": map[string]any{"message": "a person decides"}}
	r := ts.ok(200, "POST", "/api/v1/controls/replay", map[string]any{"agent_name": "bot",
		"controls": []any{map[string]any{"id": id, "data": data}}})
	res := r["result"].(map[string]any)
	samples := res["samples"].([]any)
	if len(samples) != 1 {
		t.Fatalf("samples %v", samples)
	}
	s := samples[0].(map[string]any)
	if s["draft"].(map[string]any)["approval_control"] != "block-drop-bot" || s["current"].(map[string]any)["approval_control"] != nil {
		t.Fatalf("sample %v", s)
	}
}

// TestReplaySessionsInOrder: a draft rule-of-two control replayed over the captured steps of two
// sessions, interleaved in capture order, denies the third step of the session that gathers all three
// labels, and no step of the other; a draft tool-loop (a 60s window) measures its window at the times
// the steps were captured (three calls ten minutes apart run, three within seconds do not); the
// replay's session state is its own (the live store is not read nor written), and a second replay of
// the same steps finds the same.
func TestReplaySessionsInOrder(t *testing.T) {
	st := storetest.SQLite(t)
	ts, rec := captureTS(t, st, []string{"bot"})
	seedAgent(ts, "bot")
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	step := func(session, name string, at int) map[string]any {
		return map[string]any{"agent_name": "bot", "stage": "pre", "decision": "allow",
			"timestamp": base.Add(time.Duration(at) * time.Second).Format(time.RFC3339),
			"step":      map[string]any{"type": "tool", "name": name, "input": map[string]any{}, "context": map[string]any{"session_id": session}}}
	}
	// Session a: untrusted, sensitive, egress (its third step gathers the three labels); session b:
	// untrusted, egress, egress (two labels). Posted in capture order, the sessions interleaved.
	ts.ok(202, "POST", "/api/v1/steps/captured", map[string]any{"steps": []any{
		step("a", "fetch_page", 1), step("b", "fetch_page", 2), step("a", "read_file", 3),
		step("b", "http_post", 4), step("a", "http_post", 5), step("b", "http_post", 6),
		step("slow", "search", 10), step("fast", "search", 11), step("fast", "search", 12), step("fast", "search", 13),
		step("slow", "search", 610), step("slow", "search", 1210),
	}})
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	ruleOfTwo := map[string]any{
		"enabled":   true,
		"scope":     map[string]any{"stages": []string{"pre"}},
		"condition": map[string]any{"selector": map[string]any{"path": "session.labels"}, "evaluator": map[string]any{"name": "list", "config": map[string]any{"values": []string{"untrusted", "sensitive", "egress"}, "logic": "all"}}},
		"action": map[string]any{"decision": "deny", "session": map[string]any{"label_steps": []any{
			map[string]any{"label": "untrusted", "steps": []string{"fetch_page"}},
			map[string]any{"label": "sensitive", "steps": []string{"read_file"}},
			map[string]any{"label": "egress", "steps": []string{"http_post"}},
		}}},
	}
	toolLoop := map[string]any{
		"enabled":   true,
		"scope":     map[string]any{"stages": []string{"pre"}, "step_names": []string{"search"}},
		"condition": map[string]any{"selector": map[string]any{"path": "session.count", "window": "60s"}, "evaluator": map[string]any{"name": "threshold", "config": map[string]any{"gt": 2}}},
		"action":    map[string]any{"decision": "deny"},
	}
	for run := range 2 {
		r := ts.ok(200, "POST", "/api/v1/controls/replay", map[string]any{"agent_name": "bot",
			"start_time": base.Format(time.RFC3339), "end_time": base.Add(time.Hour).Format(time.RFC3339),
			"controls": []any{map[string]any{"name": "rule-of-two", "data": ruleOfTwo}, map[string]any{"name": "tool-loop", "data": toolLoop}}})
		res := r["result"].(map[string]any)
		if res["steps_replayed"] != 12.0 || res["steps_changed"] != 2.0 || res["changes"].(map[string]any)["allow_to_deny"] != 2.0 {
			t.Fatalf("run %d: result %v", run, res)
		}
		samples := res["samples"].([]any)
		if len(samples) != 2 {
			t.Fatalf("run %d: samples %v", run, samples)
		}
		loop, _ := json.Marshal(samples[1].(map[string]any)["step"])
		if !strings.Contains(string(loop), `"session_id":"fast"`) {
			t.Fatalf("run %d: the tool loop denied %s, not fast's third search", run, loop)
		}
		s := samples[0].(map[string]any)
		sstep, _ := json.Marshal(s["step"])
		reason, _ := s["draft"].(map[string]any)["reason"].(string)
		if !strings.Contains(string(sstep), `"session_id":"a"`) || !strings.Contains(string(sstep), "http_post") ||
			!strings.Contains(reason, "step 1 (fetch_page) added label untrusted") || !strings.Contains(reason, "step 2 (read_file) added label sensitive") {
			t.Fatalf("run %d: the denied step is not session a's third: %s, %q", run, sstep, reason)
		}
	}
	// The live engine never saw these sessions: a live step of session a is its first.
	live := ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": "pre",
		"step": map[string]any{"type": "tool", "name": "sql", "input": map[string]any{"text": "hi"}, "context": map[string]any{"session_id": "a"}}})
	if live["decision"] != "allow" {
		t.Fatalf("live %v", live)
	}
}

// TestSessionUnits: the steps of one session are replayed in capture time order (then id), whatever
// their order in the list; steps of other sessions and agents, and steps without a session, are apart.
func TestSessionUnits(t *testing.T) {
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	cs := func(id int64, agent, session string, sec int) guard.CapturedStep {
		ctx := map[string]any{}
		if session != "" {
			ctx["session_id"] = session
		}
		raw, _ := json.Marshal(map[string]any{"type": "tool", "name": "x", "context": ctx})
		return guard.CapturedStep{ID: id, AgentName: agent, Step: raw, Time: at.Add(time.Duration(sec) * time.Second)}
	}
	steps := []guard.CapturedStep{
		cs(5, "bot", "a", 3), cs(1, "bot", "b", 1), cs(3, "bot", "a", 1), cs(2, "bot", "a", 1),
		cs(4, "other", "a", 0), cs(6, "bot", "", 0), cs(7, "bot", "", 9),
	}
	units := sessionUnits(steps)
	var got [][]int64
	for _, u := range units {
		var ids []int64
		for _, i := range u {
			ids = append(ids, steps[i].ID)
		}
		got = append(got, ids)
	}
	want := [][]int64{{2, 3, 5}, {1}, {4}, {6, 7}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("units %v, want %v", got, want)
	}
}
