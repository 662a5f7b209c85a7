package client

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/guardrail-control/guard"
)

// stdEventsJSON is what encoding/json writes for the body: the reference appendEventsJSON must match.
func stdEventsJSON(evs []wireEvent) ([]byte, error) {
	return json.Marshal(struct {
		Events []wireEvent `json:"events"`
	}{evs})
}

func sampleEvent(s string, f float64) wireEvent {
	return wireEvent{
		ControlExecutionID: s, TraceID: s, SpanID: s, AgentName: s, ControlID: -42, ControlName: s,
		CheckStage: guard.Stage(s), StepType: s, StepName: s, Action: guard.Decision(s), Matched: true,
		Confidence: f, Timestamp: s, ExecutionDurationMS: f, EvaluatorName: s, SelectorPath: s, ErrorMessage: s,
		Source: s, Metadata: eventMeta{Policy: s},
	}
}

func TestEventsJSONMatchesEncodingJSON(t *testing.T) {
	strs := []string{"", "plain", `quote " backslash \ slash /`, "<script>&amp;</script>", "ctl \x00\x01\b\f\n\r\t\x1f\x7f",
		"bad utf8 \xff\xfe end", "line\u2028para\u2029", "日本語 ✓ 😀", "trunc \xe2\x82"}
	floats := []float64{0, 1, 0.5, -0.25, 1e-7, 1e-6, 1.5e-9, 123456789.125, 1e20, 1e21, 1.7976931348623157e308, -3e-300,
		float64(1500*time.Microsecond) / float64(time.Millisecond)}
	var evs []wireEvent
	for _, s := range strs {
		for _, f := range floats {
			evs = append(evs, sampleEvent(s, f))
		}
	}
	evs = append(evs, wireEvent{}, wireEvent{Source: "sdk", Metadata: eventMeta{}})
	for _, n := range []int{0, 1, len(evs)} {
		batch := evs[:n]
		want, err := stdEventsJSON(batch)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendEventsJSON(nil, batch)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%d events:\n got %s\nwant %s", len(batch), got, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := appendEventsJSON(nil, []wireEvent{sampleEvent("x", f)}); err == nil {
			t.Errorf("%v encoded", f)
		}
	}
}

func FuzzEventsJSON(f *testing.F) {
	f.Add("a<b>&\"\\\x00\u2028\xff", 0.5, int64(7), true)
	f.Add("", 1e-7, int64(-1), false)
	f.Fuzz(func(t *testing.T, s string, x float64, id int64, matched bool) {
		e := sampleEvent(s, x)
		e.ControlID, e.Matched = id, matched
		want, werr := stdEventsJSON([]wireEvent{e})
		got, gerr := appendEventsJSON(nil, []wireEvent{e})
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("errors differ: encoding/json %v, appendEventsJSON %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}
