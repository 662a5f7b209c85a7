package store_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

func capturedStep(agent string, at time.Time, body string) guard.CapturedStep {
	return guard.CapturedStep{AgentName: agent, Stage: guard.StagePre, StepType: "tool", StepName: "search",
		Step: json.RawMessage(body), Decision: guard.DecisionAllow, Time: at}
}

func TestCapturedStepsRoundTripAndQuery(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		base := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
		in := []guard.CapturedStep{
			capturedStep("a", base, `{"type":"tool","name":"search","input":{"q":"one"}}`),
			capturedStep("b", base.Add(time.Minute), `{"type":"tool","name":"search","input":{"q":"two"}}`),
			capturedStep("a", base.Add(2*time.Minute), `{"type":"tool","name":"search","input":{"q":"three\u0000"}}`),
		}
		in[1].Decision, in[1].Source = guard.DecisionDeny, "sdk"
		if err := s.InsertCapturedSteps(ctx, in); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			q    guard.CaptureQuery
			want []string // inputs' q, in order
			more bool
		}{
			{"all", guard.CaptureQuery{Limit: 10}, []string{"one", "two", "three\x00"}, false},
			{"agent", guard.CaptureQuery{AgentName: "a", Limit: 10}, []string{"one", "three\x00"}, false},
			{"range", guard.CaptureQuery{Start: base.Add(time.Minute), End: base.Add(2 * time.Minute), Limit: 10}, []string{"two"}, false},
			{"limit", guard.CaptureQuery{Limit: 2}, []string{"one", "two"}, true},
			{"limit exact", guard.CaptureQuery{Limit: 3}, []string{"one", "two", "three\x00"}, false},
			{"bytes", guard.CaptureQuery{Limit: 10, MaxBytes: int64(len(in[0].Step) + 10)}, []string{"one"}, true},
			{"bytes below the first step", guard.CaptureQuery{Limit: 10, MaxBytes: 1}, []string{"one"}, true},
			{"zero limit", guard.CaptureQuery{}, nil, false},
			{"unknown agent", guard.CaptureQuery{AgentName: "zz", Limit: 10}, nil, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, more, err := s.CapturedSteps(ctx, tt.q)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(tt.want) || more != tt.more {
					t.Fatalf("got %d steps (more %v), want %d (more %v)", len(got), more, len(tt.want), tt.more)
				}
				for i, c := range got {
					var st guard.Step
					if err := json.Unmarshal(c.Step, &st); err != nil {
						t.Fatal(err)
					}
					if q := st.Input.(map[string]any)["q"]; q != tt.want[i] {
						t.Errorf("step %d: input.q = %q, want %q", i, q, tt.want[i])
					}
				}
			})
		}
		got, _, err := s.CapturedSteps(ctx, guard.CaptureQuery{AgentName: "b", Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		c := got[0]
		if c.Decision != guard.DecisionDeny || c.Source != "sdk" || c.Stage != guard.StagePre || c.StepType != "tool" ||
			c.StepName != "search" || !c.Time.Equal(base.Add(time.Minute)) || c.ID == 0 {
			t.Errorf("round trip: %+v", c)
		}
	})
}

func TestPruneCapturedStepsByAgeAndBytes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		base := time.Now().Add(-time.Hour).UTC()
		body := `{"type":"tool","name":"search","input":"` + strings.Repeat("x", 70) + `"}` // 100 bytes
		var in []guard.CapturedStep
		for i := range 10 {
			in = append(in, capturedStep("a", base.Add(time.Duration(i)*time.Minute), body))
		}
		if err := s.InsertCapturedSteps(ctx, in); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name     string
			before   time.Time
			maxBytes int64
			deleted  int64
			left     int
		}{
			{"nothing to do", base.Add(-time.Hour), 0, 0, 10},
			{"age: the two oldest", base.Add(2 * time.Minute), 0, 2, 8},
			{"bytes: keep the newest five", time.Time{}, 5 * int64(len(body)), 3, 5},
			{"bytes: below one step keeps none", time.Time{}, 50, 5, 0},
		}
		for _, tt := range tests {
			n := must[int64](t)(s.PruneCapturedSteps(ctx, tt.before, tt.maxBytes))
			if n != tt.deleted {
				t.Errorf("%s: deleted %d, want %d", tt.name, n, tt.deleted)
			}
			left, _, err := s.CapturedSteps(ctx, guard.CaptureQuery{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != tt.left {
				t.Fatalf("%s: %d left, want %d", tt.name, len(left), tt.left)
			}
			// Oldest out first: what is left is always the newest.
			if len(left) > 0 && !left[len(left)-1].Time.Equal(in[9].Time.Truncate(time.Microsecond)) {
				t.Errorf("%s: the newest step was deleted", tt.name)
			}
		}
	})
}
