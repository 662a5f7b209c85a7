package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestAgentScopeFilters: on both dialects, a limited scope keeps its agents in the agent list, the
// controls linked to them or to none in the control list, and its agents' events, statistics and
// captured steps; ControlAgents lists a control's agents.
func TestAgentScopeFilters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for _, a := range []string{"alpha-1", "bravo-1"} {
			if _, _, err := s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: a}}); err != nil {
				t.Fatal(err)
			}
		}
		mk := func(name string, agents ...string) int64 {
			rec, err := s.CreateControl(ctx, name, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range agents {
				if err := s.LinkControl(ctx, a, rec.ID); err != nil {
					t.Fatal(err)
				}
			}
			return rec.ID
		}
		mk("alpha-ctl", "alpha-1")
		bravo := mk("bravo-ctl", "bravo-1")
		shared := mk("shared-ctl", "alpha-1", "bravo-1")
		mk("unlinked-ctl")
		sc := guard.AgentScope{Limited: true, Names: []string{"alpha-1"}}
		agents, info, err := s.ListAgents(ctx, guard.AgentFilter{Scope: sc}, guard.PageRequest{})
		if err != nil || len(agents) != 1 || agents[0].Name != "alpha-1" || info.Total != 1 {
			t.Fatalf("agents %v %v %v", agents, info, err)
		}
		ctls, info, err := s.ListControls(ctx, guard.ControlFilter{Scope: sc}, guard.PageRequest{})
		var names []string
		for _, c := range ctls {
			names = append(names, c.Name)
		}
		if err != nil || strings.Join(names, ",") != "unlinked-ctl,shared-ctl,alpha-ctl" || info.Total != 3 {
			t.Fatalf("controls %v %v %v", names, info, err)
		}
		if none, _, _ := s.ListAgents(ctx, guard.AgentFilter{Scope: guard.AgentScope{Limited: true}}, guard.PageRequest{}); len(none) != 0 {
			t.Errorf("an empty scope lists %v", none)
		}
		if got, err := s.ControlAgents(ctx, shared); err != nil || strings.Join(got, ",") != "alpha-1,bravo-1" {
			t.Errorf("ControlAgents %v %v", got, err)
		}
		if _, err := s.ControlAgents(ctx, 999); err != guard.ErrControlNotFound {
			t.Errorf("ControlAgents of no control: %v", err)
		}
		now := time.Now()
		var evs []guard.Event
		for i, a := range []string{"alpha-1", "bravo-1", "bravo-1"} {
			evs = append(evs, guard.Event{ControlExecutionID: "00000000-0000-4000-8000-00000000000" + string(rune('1'+i)), AgentName: a,
				ControlID: bravo, ControlName: "c", CheckStage: guard.StagePre, Action: guard.DecisionDeny,
				Matched: true, Timestamp: now})
		}
		if err := s.InsertEvents(ctx, evs); err != nil {
			t.Fatal(err)
		}
		got, total, err := s.QueryEvents(ctx, guard.EventQuery{Scope: sc, Limit: 10})
		if err != nil || total != 1 || got[0].AgentName != "alpha-1" {
			t.Errorf("events %v %d %v", got, total, err)
		}
		st, err := s.Stats(ctx, guard.StatsQuery{Scope: sc, Since: now.Add(-time.Hour), Until: now.Add(time.Hour), P95: true})
		if err != nil || st.Totals.ExecutionCount != 1 || len(st.Agents) != 1 {
			t.Errorf("stats %+v %v", st.Totals, err)
		}
		if err := s.InsertCapturedSteps(ctx, []guard.CapturedStep{{AgentName: "bravo-1", Stage: guard.StagePre, StepType: "t", StepName: "n",
			Step: []byte(`{}`), Decision: guard.DecisionAllow, Time: now}}); err != nil {
			t.Fatal(err)
		}
		if steps, _, err := s.CapturedSteps(ctx, guard.CaptureQuery{Scope: sc, Limit: 10}); err != nil || len(steps) != 0 {
			t.Errorf("captured %v %v", steps, err)
		}
	})
}

// TestAuditTrailStore: on both dialects, entries round-trip, list newest first with filters and signed
// cursors, and a limited scope keeps the entries of its agents and of what no agent's.
func TestAuditTrailStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		unlinked, err := s.CreateControl(ctx, "draft", nil)
		if err != nil {
			t.Fatal(err)
		}
		base := time.Now().Add(-time.Hour)
		for i, e := range []guard.AuditEntry{
			{KeyName: "ops", Action: "control.created", ControlID: unlinked.ID, Version: 1, Changes: []string{`+ name: "draft"`}},
			{KeyName: "ops", Action: "agent.control_linked", Agents: []string{"alpha-1"}, ControlID: 7},
			{KeyName: "team-b", Action: "control.data_replaced", Agents: []string{"bravo-1", "bravo-2"}, ControlID: 8, Version: 3,
				Changes: []string{`~ data.action.decision: "deny" -> "warn"`}, Detail: []byte(`{"x":1}`)},
			{KeyName: "ops", Action: "agent.updated", Agents: []string{"alpha-10"}},
		} {
			e.Time, e.Method, e.Route, e.Path = base.Add(time.Duration(i)*time.Minute), "PUT", "/r", "/p"
			if _, err := s.InsertAudit(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		list := func(q guard.AuditQuery, pg guard.PageRequest) ([]guard.AuditEntry, guard.PageInfo) {
			t.Helper()
			es, info, err := s.ListAudit(ctx, q, pg)
			if err != nil {
				t.Fatal(err)
			}
			return es, info
		}
		all, info := list(guard.AuditQuery{}, guard.PageRequest{Limit: 3})
		if len(all) != 3 || !info.HasMore || info.Total != 4 || all[0].Action != "agent.updated" {
			t.Fatalf("page 1 %v %+v", all, info)
		}
		rest, info := list(guard.AuditQuery{}, guard.PageRequest{Limit: 3, Cursor: *info.NextCursor})
		if len(rest) != 1 || info.HasMore || rest[0].Action != "control.created" || rest[0].Changes[0] != `+ name: "draft"` {
			t.Fatalf("page 2 %v %+v", rest, info)
		}
		e := all[1]
		if e.KeyName != "team-b" || strings.Join(e.Agents, ",") != "bravo-1,bravo-2" || e.Version != 3 || string(e.Detail) != `{"x":1}` ||
			!e.Time.Equal(base.Add(2*time.Minute).Truncate(time.Microsecond)) {
			t.Errorf("entry %+v", e)
		}
		for _, c := range []struct {
			q    guard.AuditQuery
			want string
		}{
			{guard.AuditQuery{KeyName: "ops"}, "agent.updated,agent.control_linked,control.created"},
			{guard.AuditQuery{AgentName: "alpha-1"}, "agent.control_linked"}, // not alpha-10
			{guard.AuditQuery{ControlID: 8}, "control.data_replaced"},
			{guard.AuditQuery{Action: "control.created"}, "control.created"},
			{guard.AuditQuery{Since: base.Add(90 * time.Second), Until: base.Add(150 * time.Second)}, "control.data_replaced"},
			{guard.AuditQuery{Scope: guard.AgentScope{Limited: true, Names: []string{"alpha-1"}}}, "agent.control_linked,control.created"},
			{guard.AuditQuery{Scope: guard.AgentScope{Limited: true}}, "control.created"},
		} {
			es, _ := list(c.q, guard.PageRequest{})
			var got []string
			for _, e := range es {
				got = append(got, e.Action)
			}
			if strings.Join(got, ",") != c.want {
				t.Errorf("%+v: %v, want %s", c.q, got, c.want)
			}
		}
		if _, _, err := s.ListAudit(ctx, guard.AuditQuery{}, guard.PageRequest{Cursor: "c0000000000000001" + strings.Repeat("0", 32)}); !errors.Is(err, guard.ErrBadCursor) {
			t.Errorf("forged cursor: %v", err)
		}
	})
}
