package store_test

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestPaginationWhileWriting walks the control list page by page while controls are created and deleted
// between pages: every control that lives through the whole walk is seen exactly once, in order.
func TestPaginationWhileWriting(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		var ids []int64
		for i := range 25 {
			ids = append(ids, must[guard.ControlRecord](t)(s.CreateControl(ctx, fmt.Sprintf("c%02d", i), nil)).ID)
		}
		deleted := map[int64]bool{}
		seen := map[int64]int{}
		var order []int64
		cursor, pages := "", 0
		for {
			items, page, err := s.ListControls(ctx, guard.ControlFilter{}, guard.PageRequest{Cursor: cursor, Limit: 4})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, it := range items {
				seen[it.ID]++
				order = append(order, it.ID)
			}
			if page.Limit != 4 || len(items) > 4 {
				t.Fatalf("page = %+v with %d items", page, len(items))
			}
			if !page.HasMore {
				if page.NextCursor != nil {
					t.Fatal("last page has a next cursor")
				}
				break
			}
			cursor = *page.NextCursor
			// Between pages: a new control (sorts before the cursor) and a deletion ahead of it.
			must[guard.ControlRecord](t)(s.CreateControl(ctx, fmt.Sprintf("new%02d", pages), nil))
			if i := len(ids) - 1 - 4*pages - 2; i >= 0 && !deleted[ids[i]] {
				victim := ids[i]
				must[[]string](t)(s.DeleteControl(ctx, victim, false))
				deleted[victim] = true
			}
		}
		for _, id := range ids {
			if deleted[id] {
				if seen[id] > 1 {
					t.Errorf("deleted control %d seen %d times", id, seen[id])
				}
				continue
			}
			if seen[id] != 1 {
				t.Errorf("control %d seen %d times, want 1", id, seen[id])
			}
		}
		if !sort.SliceIsSorted(order, func(i, j int) bool { return order[i] > order[j] }) {
			t.Errorf("not newest first: %v", order)
		}
	})
}

func TestListControlsFilters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		mk := func(name string, mod func(d *guard.ControlData)) int64 {
			var d *guard.ControlData
			if mod != nil {
				d = testData("x")
				mod(d)
			}
			return must[guard.ControlRecord](t)(s.CreateControl(ctx, name, d)).ID
		}
		all := mk("All-Steps", func(d *guard.ControlData) { d.Tags = []string{"pii", "eu"} })
		llm := mk("llm-pre", func(d *guard.ControlData) {
			d.Scope = guard.Scope{StepTypes: []string{"llm"}, Stages: []guard.Stage{guard.StagePre}}
			d.Tags = []string{"pii-extra"}
		})
		tool := mk("tool-post", func(d *guard.ControlData) {
			d.Enabled = false
			d.Scope = guard.Scope{StepTypes: []string{"tool", `we"ird,`}, Stages: []guard.Stage{guard.StagePost}}
			d.Action.Decision = guard.DecisionWarn
		})
		nodata := mk("no-data", nil)
		newAgent(t, s, "ag")
		if err := s.LinkControl(ctx, "ag", llm); err != nil {
			t.Fatal(err)
		}
		on, off := true, false
		tests := []struct {
			name string
			f    guard.ControlFilter
			want []int64
		}{
			{"none", guard.ControlFilter{}, []int64{nodata, tool, llm, all}},
			{"name substring, any case", guard.ControlFilter{Name: "STEP"}, []int64{all}},
			{"name substring", guard.ControlFilter{Name: "-p"}, []int64{tool, llm}},
			{"enabled", guard.ControlFilter{Enabled: &on}, []int64{llm, all}},
			{"disabled", guard.ControlFilter{Enabled: &off}, []int64{nodata, tool}},
			{"tag is a whole element", guard.ControlFilter{Tag: "pii"}, []int64{all}},
			{"tag", guard.ControlFilter{Tag: "pii-extra"}, []int64{llm}},
			{"step type or unrestricted", guard.ControlFilter{StepType: "llm"}, []int64{llm, all}},
			{"step type with odd characters", guard.ControlFilter{StepType: `we"ird,`}, []int64{tool, all}},
			{"stage", guard.ControlFilter{Stage: guard.StagePost}, []int64{tool, all}},
			{"combined", guard.ControlFilter{StepType: "tool", Stage: guard.StagePre}, []int64{all}},
			{"nothing", guard.ControlFilter{Name: "zzz"}, []int64{}},
		}
		for _, tc := range tests {
			items, page, err := s.ListControls(ctx, tc.f, guard.PageRequest{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			got := []int64{}
			for _, it := range items {
				got = append(got, it.ID)
			}
			if !reflect.DeepEqual(got, tc.want) || page.Total != len(tc.want) {
				t.Errorf("%s: got %v (total %d), want %v", tc.name, got, page.Total, tc.want)
			}
		}
		items, _, _ := s.ListControls(ctx, guard.ControlFilter{Name: "llm-pre"}, guard.PageRequest{})
		want := guard.ControlSummary{ID: llm, Name: "llm-pre", Enabled: true, Execution: guard.ExecutionServer,
			StepTypes: []string{"llm"}, Stages: []guard.Stage{guard.StagePre}, Tags: []string{"pii-extra"},
			Decision: guard.DecisionDeny, AgentCount: 1, UpdatedAt: items[0].UpdatedAt}
		if !reflect.DeepEqual(items[0], want) {
			t.Errorf("summary = %+v, want %+v", items[0], want)
		}
	})
}

func TestBadCursors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		c := must[guard.ControlRecord](t)(s.CreateControl(ctx, "a", nil))
		must[guard.ControlRecord](t)(s.CreateControl(ctx, "b", nil))
		_, page, err := s.ListControls(ctx, guard.ControlFilter{}, guard.PageRequest{Limit: 1})
		if err != nil || page.NextCursor == nil {
			t.Fatalf("first page: %+v %v", page, err)
		}
		newAgent(t, s, "ag")
		_, apage, _ := s.ListAgents(ctx, guard.AgentFilter{}, guard.PageRequest{Limit: 1})
		for _, bad := range []string{"x", "!!!", "MS5jb250cm9scy4w", "Mi5jb250cm9scy4x", "MS5jb250cm9scy4tMQ", "MS5jb250cm9scy4wMQ", *page.NextCursor + "="} {
			_, _, err := s.ListControls(ctx, guard.ControlFilter{}, guard.PageRequest{Cursor: bad})
			wantErr(t, err, guard.ErrBadCursor)
		}
		// A control cursor is not an agent cursor. Control and version cursors are positions (integers, as
		// the reference's clients send them): one is a valid position in the other list.
		_, _, err = s.ListAgents(ctx, guard.AgentFilter{}, guard.PageRequest{Cursor: *page.NextCursor})
		wantErr(t, err, guard.ErrBadCursor)
		if _, _, err = s.ListControlVersions(ctx, c.ID, guard.PageRequest{Cursor: *page.NextCursor}); err != nil {
			t.Fatalf("a position as a version cursor: %v", err)
		}
		if apage.NextCursor != nil {
			t.Fatalf("one agent, yet a next cursor")
		}
	})
}

func TestListAgents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		for _, n := range []string{"alpha", "beta", "alphabet"} {
			_, _, err := s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: n, Description: "about " + n},
				Steps: []guard.StepSchema{{Type: "llm", Name: "a"}, {Type: "tool", Name: "b"}}})
			if err != nil {
				t.Fatal(err)
			}
		}
		c := must[guard.ControlRecord](t)(s.CreateControl(ctx, "c", nil))
		if err := s.LinkControl(ctx, "alpha", c.ID); err != nil {
			t.Fatal(err)
		}
		items, page, err := s.ListAgents(ctx, guard.AgentFilter{Name: "ALPHA"}, guard.PageRequest{Limit: 1})
		if err != nil || len(items) != 1 || items[0].Name != "alphabet" || page.Total != 2 || !page.HasMore {
			t.Fatalf("page 1 = %+v %+v %v", items, page, err)
		}
		items, page, err = s.ListAgents(ctx, guard.AgentFilter{Name: "ALPHA"}, guard.PageRequest{Cursor: *page.NextCursor, Limit: 1})
		if err != nil || len(items) != 1 || items[0].Name != "alpha" || page.HasMore || page.NextCursor != nil {
			t.Fatalf("page 2 = %+v %+v %v", items, page, err)
		}
		if it := items[0]; it.StepCount != 2 || it.ControlCount != 1 || it.Description != "about alpha" {
			t.Fatalf("summary = %+v", it)
		}
	})
}
