package server

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/internal/cases"
)

// TestDecisionCorpus runs the shared decision corpus through the HTTP API: the case's controls are
// created (PUT /controls with data), linked to a fresh agent, and the step is evaluated with
// POST /evaluation. Cases about sdk execution are the client's business and are skipped here.
func TestDecisionCorpus(t *testing.T) {
	files, err := cases.Load("../testdata/cases")
	if err != nil {
		t.Fatal(err)
	}
	ts := newTS(t)
	n := 0
	for _, f := range files {
		for i, c := range f.Cases {
			if len(c.Execution) > 0 && (len(c.Execution) != 1 || c.Execution[0] != "server") {
				continue
			}
			n++
			prefix := fmt.Sprintf("k%d-", n)
			t.Run(f.Name+"/"+c.Name, func(t *testing.T) { runCase(t, ts, prefix, fmt.Sprintf("agent-%s-%d", f.Name, i), c) })
		}
	}
	if n == 0 {
		t.Fatal("no case ran")
	}
}

func runCase(t *testing.T, ts *tserver, prefix, agent string, c cases.Case) {
	sub := &tserver{t: t, srv: ts.srv, st: ts.st}
	controls := append([]cases.Control(nil), c.Controls...)
	sort.SliceStable(controls, func(i, j int) bool { return controls[i].ID < controls[j].ID })
	var ids []int64
	invalid := false
	for _, ct := range controls {
		body := fmt.Sprintf(`{"name":%q,"data":%s}`, prefix+ct.Name, ct.Data)
		r := sub.do("PUT", "/api/v1/controls", body)
		switch {
		case r.Code == 200:
			ids = append(ids, int64(r.obj(t)["control_id"].(float64)))
		case r.Code == 422 && c.Want.Invalid:
			invalid = true
			b := r.problem(t)
			for _, p := range b.Errors {
				if !strings.HasPrefix(p.Field, "data") {
					t.Errorf("problem field %q lacks the data prefix", p.Field)
				}
			}
		default:
			t.Fatalf("create %s: %d %s", ct.Name, r.Code, r.Body)
		}
	}
	if c.Want.Invalid {
		if !invalid {
			t.Fatalf("an invalid case saved every control")
		}
		return
	}
	sub.initAgent(agent)
	for _, id := range ids {
		sub.link(agent, id)
	}
	body := fmt.Sprintf(`{"agent_name":%q,"stage":%q,"step":%s}`, agent, c.Stage, orNull(c.Step))
	r := sub.do("POST", "/api/v1/evaluation", body)
	if c.Want.EvalError {
		if r.Code != 422 {
			t.Fatalf("malformed step or stage: %d %s", r.Code, r.Body)
		}
		return
	}
	if r.Code != 200 {
		t.Fatalf("evaluation: %d %s", r.Code, r.Body)
	}
	m := r.obj(t)
	w := c.Want
	if decision(m) != w.Decision {
		t.Errorf("decision %s, want %s: %s", decision(m), w.Decision, r.Body)
	}
	skip := map[string]bool{}
	for _, s := range w.MaySkip {
		skip[s] = true
	}
	names := func(key string) []string {
		var out []string
		for _, x := range m[key].([]any) {
			n := strings.TrimPrefix(x.(map[string]any)["control_name"].(string), prefix)
			if !skip[n] {
				out = append(out, n)
			}
		}
		sort.Strings(out)
		return out
	}
	want := func(xs []string) []string {
		var out []string
		for _, x := range xs {
			if !skip[x] {
				out = append(out, x)
			}
		}
		sort.Strings(out)
		return out
	}
	if got, exp := names("matches"), want(w.Matches); fmt.Sprint(got) != fmt.Sprint(exp) {
		t.Errorf("matches %v, want %v", got, exp)
	}
	if got, exp := names("errors"), want(w.Errors); fmt.Sprint(got) != fmt.Sprint(exp) {
		t.Errorf("errors %v, want %v", got, exp)
	}
	if w.NonMatches != nil {
		if got, exp := names("non_matches"), want(*w.NonMatches); fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Errorf("non_matches %v, want %v", got, exp)
		}
	}
	if w.SteeringMessage != nil {
		sc, _ := m["steering_context"].(map[string]any)
		if sc == nil || sc["message"] != *w.SteeringMessage {
			t.Errorf("steering_context %v, want message %q", m["steering_context"], *w.SteeringMessage)
		}
	}
	if w.Confidence != nil && m["confidence"].(float64) != *w.Confidence {
		t.Errorf("confidence %v, want %v", m["confidence"], *w.Confidence)
	}
	if len(w.Redacted) > 0 {
		got, _ := json.Marshal(m["redacted"])
		if ok, err := w.SameRedacted(got); err != nil || !ok {
			t.Errorf("redacted %s, want %s (%v)", got, w.Redacted, err)
		}
	}
}

func orNull(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	return string(raw)
}
