package server

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	guard "github.com/guardrail-control/guard"
)

// TestAppendResultMatchesEncodingJSON: the hand-written encoder and encoding/json produce the same value.
func TestAppendResultMatchesEncodingJSON(t *testing.T) {
	sc := &guard.SteeringContext{Message: "use <b> & \"quotes\"\n", RequiredActions: []string{"a", "é"}}
	results := []*guard.Result{
		{IsSafe: true, Decision: guard.DecisionAllow, Confidence: 1, Matches: []guard.ControlResult{}, Errors: []guard.ControlResult{}, NonMatches: []guard.ControlResult{}},
		{Decision: guard.DecisionAllow, Confidence: 1e-9},
		{IsSafe: false, Decision: guard.DecisionSteer, Confidence: 0.123456789, Reason: "ünïcode \u2028 reason", SteeringContext: sc,
			Matches: []guard.ControlResult{{ControlExecutionID: "id-1", ControlID: 7, ControlName: "c-7", Action: guard.DecisionSteer,
				Result:          guard.EvaluatorResult{Matched: true, Confidence: 0.5, Message: "m", Metadata: map[string]any{"z": 1, "a": []any{"x", nil, true}}},
				SteeringContext: sc, Metadata: map[string]any{"severity": "high"}}},
			Errors: []guard.ControlResult{{ControlExecutionID: "id-2", ControlID: 8, ControlName: "c-8", Action: guard.DecisionDeny,
				Result: guard.EvaluatorResult{Confidence: 0, Error: "timeout\t<after 1s>"}}},
			NonMatches: []guard.ControlResult{{ControlID: math.MaxInt64, Result: guard.EvaluatorResult{Confidence: 1e21}}}},
		{Decision: guard.DecisionSteer, Confidence: 1, SteeringContext: &guard.SteeringContext{Message: "no actions"}},
		{IsSafe: true, Decision: guard.DecisionAllow, Confidence: 1, Redacted: &guard.Redacted{Output: map[string]any{"a": "[REDACTED:email] <b>", "n": 1.5}}},
		{IsSafe: true, Decision: guard.DecisionAllow, Confidence: 1, Redacted: &guard.Redacted{Input: "my pin [REDACTED:regex]"}},
	}
	for i, r := range results {
		got, err := appendResult(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		norm := *r // the hand encoder writes [] for nil lists, as the contract requires
		for _, l := range []*[]guard.ControlResult{&norm.Matches, &norm.Errors, &norm.NonMatches} {
			if *l == nil {
				*l = []guard.ControlResult{}
			}
		}
		want, err := json.Marshal(&norm)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%d: invalid JSON %v: %s", i, err, got)
		}
		_ = json.Unmarshal(want, &w)
		withRefNulls(w.(map[string]any))
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestAppendSteeringAlwaysListsRequiredActions: steering_context always has required_actions ([] when
// the control gives none), as docs/api.md writes it.
func TestAppendSteeringAlwaysListsRequiredActions(t *testing.T) {
	got, err := appendResult(nil, &guard.Result{Decision: guard.DecisionSteer, SteeringContext: &guard.SteeringContext{Message: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		SteeringContext map[string]json.RawMessage `json:"steering_context"`
	}
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	if ra := string(v.SteeringContext["required_actions"]); ra != "[]" {
		t.Errorf("required_actions = %q, want []: %s", ra, got)
	}
}

func BenchmarkAppendResult(b *testing.B) {
	r := &guard.Result{IsSafe: true, Decision: guard.DecisionAllow, Confidence: 1}
	for i := 0; i < 10; i++ {
		r.NonMatches = append(r.NonMatches, guard.ControlResult{ControlExecutionID: "0f8fad5b-d9cb-469f-a165-70867728950e",
			ControlID: int64(i), ControlName: "control-name", Action: guard.DecisionDeny, Result: guard.EvaluatorResult{Confidence: 1}})
	}
	b.ReportAllocs()
	var buf []byte
	for i := 0; i < b.N; i++ {
		buf, _ = appendResult(buf[:0], r)
	}
}

// withRefNulls adds to encoding/json's form of a result the nulls the hand encoder writes for the
// reference's clients: reason, and per control steering_context and the result's message, metadata, error.
func withRefNulls(m map[string]any) {
	setNull := func(m map[string]any, keys ...string) {
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				m[k] = nil
			}
		}
	}
	setNull(m, "reason")
	for _, list := range []string{"matches", "errors", "non_matches"} {
		items, _ := m[list].([]any)
		for _, it := range items {
			c := it.(map[string]any)
			setNull(c, "steering_context")
			setNull(c["result"].(map[string]any), "message", "metadata", "error")
		}
	}
}
