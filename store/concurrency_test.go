package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestSQLiteConcurrentWriters: 8 goroutines doing 500 mixed writes each finish without any error (in
// particular no "database is locked"), and the results add up.
func TestSQLiteConcurrentWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("4,000 committed transactions; skipped with -short")
	}
	s := storetest.SQLite(t)
	ctx := ctxT(t)
	const workers, ops = 8, 500
	var wg sync.WaitGroup
	errs := make(chan error, workers*ops)
	for w := range workers {
		wg.Go(func() {
			agent := fmt.Sprintf("agent-%d", w)
			if _, _, err := s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: agent}}); err != nil {
				errs <- err
				return
			}
			var last int64
			for i := range ops {
				var err error
				switch i % 5 {
				case 0:
					var rec guard.ControlRecord
					rec, err = s.CreateControl(ctx, fmt.Sprintf("w%d-c%d", w, i), testData("x"))
					last = rec.ID
				case 1:
					_, err = s.PutControlData(ctx, last, *testData("y"))
				case 2:
					err = s.LinkControl(ctx, agent, last)
				case 3:
					err = s.InsertEvents(ctx, []guard.Event{ev(agent, last, time.Now(), true, guard.DecisionDeny)})
				case 4:
					off := false
					_, err = s.UpdateControl(ctx, last, guard.ControlPatch{Enabled: &off})
				}
				if err != nil {
					errs <- fmt.Errorf("worker %d op %d: %w", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	_, page, err := s.ListControls(ctx, guard.ControlFilter{}, guard.PageRequest{Limit: 1})
	if err != nil || page.Total != workers*ops/5 {
		t.Fatalf("controls = %d (%v), want %d", page.Total, err, workers*ops/5)
	}
	_, total, err := s.QueryEvents(ctx, guard.EventQuery{})
	if err != nil || total != workers*ops/5 {
		t.Fatalf("events = %d (%v)", total, err)
	}
	acs, _, err := s.AgentControls(ctx, "agent-3")
	if err != nil || len(acs) != ops/5 {
		t.Fatalf("agent-3 controls = %d (%v)", len(acs), err)
	}
}

// TestConcurrentRenames: two renames to one name at the same time: exactly one wins, the other gets
// guard.ErrControlNameConflict.
func TestConcurrentRenames(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		for round := range 10 {
			target := fmt.Sprintf("target-%d", round)
			ids := []int64{
				must[guard.ControlRecord](t)(s.CreateControl(ctx, fmt.Sprintf("a-%d", round), nil)).ID,
				must[guard.ControlRecord](t)(s.CreateControl(ctx, fmt.Sprintf("b-%d", round), nil)).ID,
			}
			start := make(chan struct{})
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for i, id := range ids {
				wg.Go(func() {
					<-start
					_, errs[i] = s.UpdateControl(ctx, id, guard.ControlPatch{Name: &target})
				})
			}
			close(start)
			wg.Wait()
			won, lost := 0, 0
			for _, err := range errs {
				switch {
				case err == nil:
					won++
				case errors.Is(err, guard.ErrControlNameConflict):
					lost++
				default:
					t.Fatalf("round %d: unexpected error %v", round, err)
				}
			}
			if won != 1 || lost != 1 {
				t.Fatalf("round %d: %d won, %d lost", round, won, lost)
			}
		}
	})
}

// TestConcurrentInitAgent: several first registrations of one agent at once, then several overwrites:
// exactly one creates it, none fails, and the steps are those of one of the requests.
func TestConcurrentInitAgent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		for _, mode := range []guard.ConflictMode{guard.ConflictStrict, guard.ConflictOverwrite} {
			const n = 6
			created := make([]bool, n)
			errs := make([]error, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					<-start
					created[i], _, errs[i] = s.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: "racer"}, ConflictMode: mode,
						Steps: []guard.StepSchema{{Type: "llm", Name: "chat"}, {Type: "tool", Name: fmt.Sprintf("t%d", i%2)}}})
				})
			}
			close(start)
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			count := 0
			for _, c := range created {
				if c {
					count++
				}
			}
			if want := map[guard.ConflictMode]int{guard.ConflictStrict: 1, guard.ConflictOverwrite: 0}[mode]; count != want {
				t.Fatalf("%s: created %d times, want %d", mode, count, want)
			}
			_, steps, err := s.GetAgent(ctx, "racer")
			if err != nil || len(steps) < 2 || len(steps) > 3 {
				t.Fatalf("%s: steps %v, %v", mode, stepNames(steps), err)
			}
		}
	})
}

// TestSQLiteTwoProcessesOneFile: two stores on one file (a server and a CLI, or two processes) write at the
// same time; SQLite's busy timeout makes the second wait for the first instead of failing.
func TestSQLiteTwoProcessesOneFile(t *testing.T) {
	url := storetest.SQLiteURL(t)
	ctx := ctxT(t)
	stores := make([]*store.Store, 2)
	for i := range stores {
		s, err := store.OpenAndMigrate(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	var wg sync.WaitGroup
	errs := make(chan error, 800)
	for i := range 8 {
		s := stores[i%2]
		wg.Go(func() {
			for j := range 100 {
				if _, err := s.CreateControl(ctx, fmt.Sprintf("s%d-%d", i, j), nil); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	_, page, err := stores[1].ListControls(ctx, guard.ControlFilter{}, guard.PageRequest{})
	if err != nil || page.Total != 800 {
		t.Fatalf("total = %d, %v", page.Total, err)
	}
}
