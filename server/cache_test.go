package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

func TestColdAgentCompilesOnce(t *testing.T) {
	ts := newTS(t)
	var rebuilds atomic.Int64
	ts.srv.cache.onRebuild = func(string) { rebuilds.Add(1) }
	ts.initAgent("bot")
	for i := 0; i < 10; i++ {
		ts.link("bot", ts.createControl(fmt.Sprintf("c%d", i), regexData(fmt.Sprintf("w%d", i), "deny")))
	}
	var wg sync.WaitGroup
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := ts.do("POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": "pre", "step": map[string]any{"type": "llm", "name": "x", "input": "w3"}})
			if r.Code != 200 {
				t.Errorf("eval: %d %s", r.Code, r.Body)
			}
		}()
	}
	wg.Wait()
	if n := rebuilds.Load(); n != 1 {
		t.Fatalf("a burst on a cold agent compiled %d times, want 1", n)
	}
	// A write that does not touch this agent's controls revalidates without recompiling.
	ts.createControl("unrelated", regexData("z", "deny"))
	ts.initAgent("other")
	if m := ts.eval("bot", "pre", "w3"); decision(m) != "deny" {
		t.Fatalf("eval: %v", m)
	}
	if n := rebuilds.Load(); n != 1 {
		t.Fatalf("an unrelated write recompiled the agent (%d compilations)", n)
	}
	// A change of a linked control recompiles once.
	ts.ok(200, "PATCH", "/api/v1/controls/4", map[string]any{"enabled": false})
	if m := ts.eval("bot", "pre", "w3"); decision(m) != "allow" {
		t.Fatalf("after disabling: %v", m)
	}
	if n := rebuilds.Load(); n != 2 {
		t.Fatalf("compilations %d, want 2", n)
	}
}

// TestReplicasAgree runs two servers, each with its own store, on one SQLite file: a change made through
// A is enforced by B within one second (B notices through the policy epoch poller).
func TestReplicasAgree(t *testing.T) {
	url := storetest.SQLiteURL(t)
	if err := store.Migrate(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	open := func() *store.Store {
		st, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	a := newTSOn(t, open(), WithPolicyPollInterval(50*time.Millisecond))
	b := newTSOn(t, open(), WithPolicyPollInterval(50*time.Millisecond))
	a.initAgent("bot")
	id := a.createControl("c", regexData("secret", "deny"))
	a.link("bot", id)
	if m := b.eval("bot", "pre", "a secret"); decision(m) != "deny" {
		t.Fatalf("B before: %v", m)
	}
	a.ok(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", id), map[string]any{"data": regexData("secret", "warn")})
	waitFor(t, time.Second, func() bool { return decision(b.eval("bot", "pre", "a secret")) == "allow" })
	a.ok(200, "DELETE", fmt.Sprintf("/api/v1/agents/bot/controls/%d", id), nil)
	waitFor(t, time.Second, func() bool { return len(b.eval("bot", "pre", "a secret")["matches"].([]any)) == 0 })
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type constEval struct{}

func (constEval) Evaluate(context.Context, *evaluator.Data) (evaluator.Result, error) {
	return evaluator.Result{Matched: false, Confidence: 1}, nil
}

// TestUncompilableControlFailsClosed: a control whose evaluator is gone is reported as an error and,
// with the default on_error deny, blocks the step; the agent's other controls keep working.
func TestUncompilableControlFailsClosed(t *testing.T) {
	withCustom := evaluator.NewRegistry()
	for _, f := range evaluator.Default.List() {
		withCustom.Register(*f)
	}
	withCustom.Register(evaluator.Factory{Name: "custom", Description: "test", Version: "1", ConfigSchema: json.RawMessage(`{"type":"object"}`),
		New: func(map[string]any, evaluator.Options) (evaluator.Evaluator, error) { return constEval{}, nil }})
	a := newTS(t, WithRegistry(withCustom))
	customData := func(decision, onError string) map[string]any {
		cfg := map[string]any{}
		if onError != "" {
			cfg["on_error"] = onError
		}
		return map[string]any{
			"condition": map[string]any{"selector": map[string]any{"path": "input"}, "evaluator": map[string]any{"name": "custom", "config": cfg}},
			"action":    map[string]any{"decision": decision},
		}
	}
	a.initAgent("bot")
	custom := a.createControl("custom-deny", customData("deny", ""))
	ok := a.createControl("regex-warn", regexData("hello", "warn"))
	a.link("bot", custom)
	a.link("bot", ok)
	if m := a.eval("bot", "pre", "hello"); decision(m) != "allow" || len(m["matches"].([]any)) != 1 {
		t.Fatalf("with the evaluator: %v", m)
	}

	b := newTSOn(t, a.st) // default registry: no "custom"
	m := b.eval("bot", "pre", "hello")
	errs := m["errors"].([]any)
	if decision(m) != "deny" || len(errs) != 1 || errs[0].(map[string]any)["control_name"] != "custom-deny" || len(m["matches"].([]any)) < 1 {
		t.Fatalf("without the evaluator: %v", m)
	}
	a.ok(200, "PUT", fmt.Sprintf("/api/v1/controls/%d/data", custom), map[string]any{"data": customData("deny", "allow")})
	waitFor(t, time.Second, func() bool { // b is a replica: it sees the change through its poller
		m = b.eval("bot", "pre", "hello")
		return decision(m) == "allow"
	})
	if len(m["errors"].([]any)) != 1 {
		t.Fatalf("on_error allow: %v", m)
	}
}

// TestStaleEngineWhileDatabaseIsAway: once an agent is compiled, a database outage during revalidation
// keeps the last policy enforced instead of failing evaluations.
func TestStaleEngineWhileDatabaseIsAway(t *testing.T) {
	ts := newTS(t, WithPolicyPollInterval(0))
	ts.initAgent("bot")
	ts.link("bot", ts.createControl("c", regexData("bad", "deny")))
	if m := ts.eval("bot", "pre", "bad"); decision(m) != "deny" {
		t.Fatalf("before: %v", m)
	}
	ts.srv.cache.reader = unavailableStore{Store: ts.st}
	ts.srv.cache.invalidate()
	if m := ts.eval("bot", "pre", "bad"); decision(m) != "deny" {
		t.Fatalf("during the outage: %v", m)
	}
	ts.expectProblem(503, "DATABASE_UNAVAILABLE", "POST", "/api/v1/evaluation", map[string]any{
		"agent_name": "cold", "stage": "pre", "step": map[string]any{"type": "llm", "name": "x"}})
}
