package store_test

import (
	"errors"
	"sync"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// Conditional writes apply only at the expected version, and of two writers that read the same version
// exactly one wins: the check and the write share the transaction.
func TestConditionalWrites(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		rec := must[guard.ControlRecord](t)(s.CreateControl(ctx, "cond", testData("a")))
		if rec.Version != 1 {
			t.Fatalf("version %d", rec.Version)
		}
		// Stale: nothing changes, the error says both versions.
		_, err := s.PutControlDataIf(ctx, rec.ID, *testData("b"), 7)
		var vm *guard.VersionMismatchError
		if !errors.As(err, &vm) || vm.Expected != 7 || vm.Current != 1 || !errors.Is(err, guard.ErrVersionMismatch) {
			t.Fatalf("stale put: %v", err)
		}
		off := false
		if _, err := s.UpdateControlIf(ctx, rec.ID, guard.ControlPatch{Enabled: &off}, 2); !errors.Is(err, guard.ErrVersionMismatch) {
			t.Fatalf("stale patch: %v", err)
		}
		if got := must[guard.ControlRecord](t)(s.GetControl(ctx, rec.ID)); got.Version != 1 || !got.Enabled {
			t.Fatalf("a refused write changed the control: %+v", got)
		}
		// Current: applied.
		if v := must[int](t)(s.PutControlDataIf(ctx, rec.ID, *testData("b"), 1)); v != 2 {
			t.Fatalf("put version %d", v)
		}
		if got := must[guard.ControlRecord](t)(s.UpdateControlIf(ctx, rec.ID, guard.ControlPatch{Enabled: &off}, 2)); got.Version != 3 || got.Enabled {
			t.Fatalf("patch: %+v", got)
		}
		wantValidation(t, func() error { _, err := s.PutControlDataIf(ctx, rec.ID, *testData("c"), 0); return err }(), "version")
		wantErr(t, func() error { _, err := s.PutControlDataIf(ctx, 999999, *testData("c"), 1); return err }(), guard.ErrControlNotFound)

		// Two writers that both read version 3: one wins, the other is refused.
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.PutControlDataIf(ctx, rec.ID, *testData([]string{"x", "y"}[i]), 3)
			}()
		}
		wg.Wait()
		won, lost := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case errors.Is(err, guard.ErrVersionMismatch):
				lost++
			default:
				t.Fatalf("writer: %v", err)
			}
		}
		if won != 1 || lost != 1 {
			t.Fatalf("won %d lost %d, want 1 and 1", won, lost)
		}
		if got := must[guard.ControlRecord](t)(s.GetControl(ctx, rec.ID)); got.Version != 4 {
			t.Fatalf("version after the race %d, want 4", got.Version)
		}

		// Delete: refused at a stale version, done at the current one.
		if _, err := s.DeleteControlIf(ctx, rec.ID, true, 3); !errors.Is(err, guard.ErrVersionMismatch) {
			t.Fatalf("stale delete: %v", err)
		}
		if _, err := s.GetControl(ctx, rec.ID); err != nil {
			t.Fatalf("a refused delete deleted: %v", err)
		}
		if _, err := s.DeleteControlIf(ctx, rec.ID, true, 4); err != nil {
			t.Fatalf("delete at the current version: %v", err)
		}
		wantErr(t, func() error { _, err := s.GetControl(ctx, rec.ID); return err }(), guard.ErrControlNotFound)
	})
}
