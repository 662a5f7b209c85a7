package observability

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	guard "github.com/guardrail-control/guard"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // a bound for a loaded 2-core machine under -race, not a timing assertion
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// baseTime is the reference instant of the tests.
var baseTime = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// mkEvent returns a valid event number i of agent "agent-a".
func mkEvent(i int) guard.Event {
	d := 1.5
	return guard.Event{
		ControlExecutionID:  uuid.NewString(),
		AgentName:           "agent-a",
		ControlID:           int64(1 + i%3),
		ControlName:         fmt.Sprintf("control-%d", 1+i%3),
		CheckStage:          guard.StagePre,
		StepType:            "tool",
		StepName:            "search",
		Action:              guard.DecisionDeny,
		Matched:             i%2 == 0,
		Confidence:          0.5,
		Timestamp:           baseTime.Add(-time.Duration(i) * time.Second),
		ExecutionDurationMS: &d,
		Source:              SourceSDK,
	}
}

func mkEvents(from, n int) []guard.Event {
	out := make([]guard.Event, n)
	for i := range out {
		out[i] = mkEvent(from + i)
	}
	return out
}
