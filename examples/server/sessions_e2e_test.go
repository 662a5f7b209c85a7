package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/guardrail-control/guard/store/storetest"
)

// testRedis returns the URL of the tests' Redis (GUARD_TEST_REDIS_URL, else the local one .ci/redis.sh
// starts) and a key prefix no other run uses, whose keys are deleted when the test ends. Without a Redis
// the test skips, except under CI=true.
func testRedis(t *testing.T) (url, prefix string) {
	t.Helper()
	url = os.Getenv("GUARD_TEST_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		if os.Getenv("CI") == "true" {
			t.Fatalf("Redis is required under CI (.ci/redis.sh): %v", err)
		}
		t.Skipf("no Redis at %s: %v", url, err)
	}
	prefix = fmt.Sprintf("guarde2e:%d:%d:", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
		rdb.Close()
	})
	return url, prefix
}

// sessionStep posts one tool step of a session and returns the result.
func (p *proc) sessionStep(agent, tool, session string) map[string]any {
	p.t.Helper()
	return p.call(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": agent, "stage": "pre",
		"step": map[string]any{"type": "tool", "name": tool, "context": map[string]any{"session_id": session}}})
}

// TestSessionsAcrossReplicas (issue 24, done when): two server processes share session state through one
// Redis. Step 1 (fetch an untrusted page) goes through replica A, step 2 (read a private file) through B,
// step 3 (post to a URL) through A: the rule-of-two template denies it, naming steps 1 and 2. The same
// three steps in three sessions are allowed.
func TestSessionsAcrossReplicas(t *testing.T) {
	redisURL, prefix := testRedis(t)
	var dbURL string
	if os.Getenv(storetest.PostgresEnv) != "" {
		dbURL = storetest.PostgresURL(t)
	} else {
		storetest.SkipWithoutSQLite(t)
		dbURL = filepath.Join(t.TempDir(), "guard.db") // two processes on one SQLite file (WAL)
	}
	env := map[string]string{"DATABASE_URL": dbURL, "GUARD_SESSION_STORE": redisURL, "GUARD_SESSION_PREFIX": prefix}
	a := startServer(t, env, "serve", "--migrate")
	b := startServer(t, env)

	a.call(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "bot"}})
	rendered := a.call(200, "POST", "/api/v1/control-templates/rule-of-two/render", map[string]any{"parameters": map[string]any{
		"untrusted_steps": []string{"fetch_page"}, "sensitive_steps": []string{"read_file"}, "egress_steps": []string{"http_post"}}})
	data := rendered["control_data"].(map[string]any)
	id := int64(a.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "rule-of-two", "data": data})["control_id"].(float64))
	a.call(200, "POST", fmt.Sprintf("/api/v1/agents/bot/controls/%d", id), nil)

	flow := []struct {
		via  *proc
		tool string
	}{{a, "fetch_page"}, {b, "read_file"}, {a, "http_post"}}
	for i, st := range flow {
		res := st.via.sessionStep("bot", st.tool, "conv-1")
		want := "allow"
		if i == 2 {
			want = "deny"
		}
		if res["decision"] != want {
			t.Fatalf("step %d (%s): %v, want %s: %v", i+1, st.tool, res["decision"], want, res["reason"])
		}
		sess, _ := res["session"].(map[string]any)
		if sess["id"] != "conv-1" || sess["step"] != float64(i+1) {
			t.Fatalf("step %d: session %v", i+1, sess)
		}
		if i < 2 {
			continue
		}
		reason, _ := res["reason"].(string)
		for _, w := range []string{"step 1 (fetch_page) added label untrusted", "step 2 (read_file) added label sensitive"} {
			if !strings.Contains(reason, w) {
				t.Errorf("reason %q lacks %q", reason, w)
			}
		}
		hist, _ := sess["history"].([]any)
		if len(hist) != 3 {
			t.Errorf("history %v", hist)
		}
	}
	// The session's state, read through replica B (which did not serve step 3): the same on every replica.
	st := b.call(200, "GET", "/api/v1/agents/bot/sessions/conv-1", nil)
	if fmt.Sprint(st["steps_seen"], " ", st["labels"]) != "3 [map[by:label_steps of control rule-of-two label:untrusted step:1 step_name:fetch_page] "+
		"map[by:label_steps of control rule-of-two label:sensitive step:2 step_name:read_file]]" {
		t.Fatalf("session read through B: %v", st)
	}
	// The same three steps in three sessions, through alternating replicas: each allowed.
	for i, st := range flow {
		via := []*proc{b, a, b}[i]
		if res := via.sessionStep("bot", st.tool, fmt.Sprintf("single-%d", i)); res["decision"] != "allow" {
			t.Fatalf("%s alone: %v", st.tool, res["reason"])
		}
	}
	// A session id over the cap is a 422 naming the field.
	body := a.expect(422, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": "pre",
		"step": map[string]any{"type": "tool", "name": "x", "context": map[string]any{"session_id": strings.Repeat("s", 129)}}})
	if !strings.Contains(string(body), "step.context.session_id") {
		t.Fatalf("422 body %s", body)
	}
	a.stop()
	b.stop()
}

// TestSessionStoreUnreachableAtStart: a replica told to share sessions through a Redis that does not
// answer refuses to start, naming the variable.
func TestSessionStoreUnreachableAtStart(t *testing.T) {
	storetest.SkipWithoutSQLite(t)
	bin := buildServer(t)
	out, err := runBin(bin, []string{"DB_URL=" + filepath.Join(t.TempDir(), "x.db"), "PORT=0", "HOST=127.0.0.1",
		"GUARD_SESSION_STORE=redis://127.0.0.1:1/0"}, "serve", "--migrate")
	if err == nil || !strings.Contains(out, "GUARD_SESSION_STORE") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestStepLabelsAcrossReplicas: step-schema labels registered through replica A drive the rule-of-two
// template (rendered without step lists) on both replicas; a registration through B that drops a label
// reaches A's engine (the agent's revision moves, A's poll of the policy epoch notices), with no restart.
func TestStepLabelsAcrossReplicas(t *testing.T) {
	redisURL, prefix := testRedis(t)
	var dbURL string
	if os.Getenv(storetest.PostgresEnv) != "" {
		dbURL = storetest.PostgresURL(t)
	} else {
		storetest.SkipWithoutSQLite(t)
		dbURL = filepath.Join(t.TempDir(), "guard.db")
	}
	env := map[string]string{"DATABASE_URL": dbURL, "GUARD_SESSION_STORE": redisURL, "GUARD_SESSION_PREFIX": prefix}
	a := startServer(t, env, "serve", "--migrate")
	b := startServer(t, env)
	register := func(via *proc, postLabels []string) {
		t.Helper()
		via.call(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "labelled"}, "conflict_mode": "overwrite",
			"steps": []any{
				map[string]any{"type": "tool", "name": "fetch_page", "labels": []string{"untrusted"}},
				map[string]any{"type": "tool", "name": "read_file", "labels": []string{"sensitive"}},
				map[string]any{"type": "tool", "name": "http_post", "labels": postLabels},
			}})
	}
	register(a, []string{"egress"})
	rendered := a.call(200, "POST", "/api/v1/control-templates/rule-of-two/render", map[string]any{"parameters": map[string]any{}})
	id := int64(a.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "rule-of-two", "data": rendered["control_data"]})["control_id"].(float64))
	a.call(200, "POST", fmt.Sprintf("/api/v1/agents/labelled/controls/%d", id), nil)

	// flow runs the three steps of one session through A, B, A and returns the third decision.
	flow := func(session string) map[string]any {
		a.sessionStep("labelled", "fetch_page", session)
		b.sessionStep("labelled", "read_file", session)
		return a.sessionStep("labelled", "http_post", session)
	}
	res := flow("conv-1")
	reason, _ := res["reason"].(string)
	sess, _ := res["session"].(map[string]any)
	hist, _ := sess["history"].([]any)
	if res["decision"] != "deny" || !strings.Contains(reason, "step 1 (fetch_page) added label untrusted") ||
		!strings.Contains(reason, "step 2 (read_file) added label sensitive") || len(hist) != 3 {
		t.Fatalf("third step: %v", res)
	}
	for _, h := range hist {
		if by := h.(map[string]any)["by"]; by != "step schema" {
			t.Fatalf("history %v: a label not from the step schema", hist)
		}
	}
	register(b, nil) // http_post no longer egress, registered through the other replica
	n := 0
	waitFor(t, "replica A to apply the labels registered through B", func() bool {
		n++
		return flow(fmt.Sprintf("after-%d", n))["decision"] == "allow"
	})
}

// TestAgentLimitAcrossReplicas (issue 32, item 7): 50 parallel calls of distinct sessions, spread over
// two replicas sharing one PostgreSQL database and one Redis, against an agent-wide limit of 5 calls a
// minute: exactly 5 are admitted, the others are denied by the limit (none by a store error), and the
// stored agent counter says 5 on either replica.
func TestAgentLimitAcrossReplicas(t *testing.T) {
	redisURL, prefix := testRedis(t)
	var dbURL string
	if os.Getenv(storetest.PostgresEnv) != "" {
		dbURL = storetest.PostgresURL(t)
	} else {
		storetest.SkipWithoutSQLite(t)
		dbURL = filepath.Join(t.TempDir(), "guard.db")
	}
	env := map[string]string{"DATABASE_URL": dbURL, "GUARD_SESSION_STORE": redisURL, "GUARD_SESSION_PREFIX": prefix}
	a := startServer(t, env, "serve", "--migrate")
	b := startServer(t, env)
	a.call(200, "POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "limited"}})
	id := int64(a.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "agent-rate", "data": map[string]any{
		"enabled": true, "scope": map[string]any{"stages": []string{"pre"}},
		"condition": map[string]any{"selector": map[string]any{"path": "agent.count.call_api", "window": "1m"},
			"evaluator": map[string]any{"name": "threshold", "config": map[string]any{"gt": 5}}},
		"action": map[string]any{"decision": "deny"}}})["control_id"].(float64))
	a.call(200, "POST", fmt.Sprintf("/api/v1/agents/limited/controls/%d", id), nil)

	const calls, limit = 50, 5
	type outcome struct {
		status int
		res    map[string]any
		err    error
	}
	out := make([]outcome, calls)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range calls {
		via := []*proc{a, b}[i%2]
		wg.Go(func() {
			body, _ := json.Marshal(map[string]any{"agent_name": "limited", "stage": "pre",
				"step": map[string]any{"type": "tool", "name": "call_api", "context": map[string]any{"session_id": fmt.Sprintf("par-%d", i)}}})
			<-start
			resp, err := http.Post(via.base+"/api/v1/evaluation", "application/json", bytes.NewReader(body))
			if err != nil {
				out[i].err = err
				return
			}
			defer resp.Body.Close()
			out[i].status = resp.StatusCode
			out[i].err = json.NewDecoder(resp.Body).Decode(&out[i].res)
		})
	}
	close(start)
	wg.Wait()
	admitted := 0
	for i, o := range out {
		if o.err != nil || o.status != 200 {
			t.Fatalf("call %d: %d %v", i, o.status, o.err)
		}
		switch o.res["decision"] {
		case "allow":
			admitted++
		case "deny":
			if reason, _ := o.res["reason"].(string); !strings.Contains(reason, "agent.count.call_api = 6") {
				t.Errorf("call %d denied for another reason: %v", i, o.res)
			}
		default:
			t.Errorf("call %d: %v", i, o.res)
		}
	}
	if admitted != limit {
		t.Fatalf("admitted %d of %d parallel calls over two replicas, want exactly %d", admitted, calls, limit)
	}
	for _, via := range []*proc{a, b} {
		st := via.call(200, "GET", "/api/v1/agents/limited/sessions/par-0", nil)
		cs, _ := st["agent_counters"].([]any)
		if c, _ := first(cs).(map[string]any); len(cs) != 1 || c["name"] != "call_api" || c["value"] != float64(limit) {
			t.Fatalf("agent counters read through %s: %v", via.base, st["agent_counters"])
		}
	}
}

// first is the first element of list (nil when empty).
func first(list []any) any {
	if len(list) == 0 {
		return nil
	}
	return list[0]
}
