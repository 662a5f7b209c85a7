package store_test

import (
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

func TestControlLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		rec := must[guard.ControlRecord](t)(s.CreateControl(ctx, "pii", testData("ssn")))
		if rec.ID <= 0 || rec.Name != "pii" || !rec.Enabled || rec.Version != 1 || rec.Data == nil {
			t.Fatalf("created = %+v", rec)
		}
		if rec.Data.Execution != guard.ExecutionServer {
			t.Errorf("execution default not applied: %q", rec.Data.Execution)
		}
		got := must[guard.ControlRecord](t)(s.GetControl(ctx, rec.ID))
		if got.Name != "pii" || got.Version != 1 || got.Data.Condition.Evaluator.Config["pattern"] != "ssn" {
			t.Fatalf("get = %+v", got)
		}

		// PATCH enabled=false mirrors into the data; PUT data with enabled=false disables.
		off := false
		rec = must[guard.ControlRecord](t)(s.UpdateControl(ctx, rec.ID, guard.ControlPatch{Enabled: &off}))
		if rec.Enabled || rec.Data.Enabled || rec.Version != 2 {
			t.Fatalf("after disable = %+v", rec)
		}
		d := testData("card")
		v := must[int](t)(s.PutControlData(ctx, rec.ID, *d))
		if v != 3 {
			t.Fatalf("put data version = %d, want 3", v)
		}
		got = must[guard.ControlRecord](t)(s.GetControl(ctx, rec.ID))
		if !got.Enabled || !got.Data.Enabled || got.Data.Condition.Evaluator.Config["pattern"] != "card" {
			t.Fatalf("after put = %+v", got)
		}
		d.Enabled = false
		must[int](t)(s.PutControlData(ctx, rec.ID, *d))
		got = must[guard.ControlRecord](t)(s.GetControl(ctx, rec.ID))
		if got.Enabled || got.Data.Enabled {
			t.Fatalf("put enabled=false left the control enabled: %+v", got)
		}

		// Rename and enable in one patch: two versions.
		name, on := "pii-v2", true
		got = must[guard.ControlRecord](t)(s.UpdateControl(ctx, rec.ID, guard.ControlPatch{Name: &name, Enabled: &on}))
		if got.Name != name || !got.Enabled || got.Version != 6 {
			t.Fatalf("after rename+enable = %+v", got)
		}
		// A patch that changes nothing writes no version.
		got = must[guard.ControlRecord](t)(s.UpdateControl(ctx, rec.ID, guard.ControlPatch{Name: &name}))
		if got.Version != 6 {
			t.Fatalf("no-op patch wrote a version: %d", got.Version)
		}

		vs, page := must2(t)(s.ListControlVersions(ctx, rec.ID, guard.PageRequest{Limit: 100}))
		events := []string{}
		for _, v := range vs {
			events = append(events, v.Event)
		}
		want := "enabled renamed updated updated disabled created"
		if strings.Join(events, " ") != want || page.Total != 6 || page.HasMore {
			t.Fatalf("versions = %v (total %d), want %s", events, page.Total, want)
		}
		v2 := must[guard.ControlVersion](t)(s.GetControlVersion(ctx, rec.ID, 2))
		if v2.Event != guard.VersionDisabled || v2.Enabled || v2.Name != "pii" || v2.Data.Condition.Evaluator.Config["pattern"] != "ssn" {
			t.Fatalf("version 2 = %+v", v2)
		}
		_, err := s.GetControlVersion(ctx, rec.ID, 99)
		wantErr(t, err, guard.ErrVersionNotFound)
		_, err = s.GetControlVersion(ctx, 999999, 1)
		wantErr(t, err, guard.ErrControlNotFound)

		// Restore version 1: name, enabled and data come back, as a new version.
		got = must[guard.ControlRecord](t)(s.RestoreControlVersion(ctx, rec.ID, 1))
		if got.Name != "pii" || !got.Enabled || got.Version != 7 || got.Data.Condition.Evaluator.Config["pattern"] != "ssn" {
			t.Fatalf("restored = %+v", got)
		}
		last := must[guard.ControlVersion](t)(s.GetControlVersion(ctx, rec.ID, 7))
		if last.Event != guard.VersionRestored {
			t.Fatalf("restore event = %q", last.Event)
		}
	})
}

func must2(t testing.TB) func([]guard.ControlVersion, guard.PageInfo, error) ([]guard.ControlVersion, guard.PageInfo) {
	return func(v []guard.ControlVersion, p guard.PageInfo, err error) ([]guard.ControlVersion, guard.PageInfo) {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v, p
	}
}

func TestControlWithoutData(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		rec := must[guard.ControlRecord](t)(s.CreateControl(ctx, "later", nil))
		if rec.Enabled || rec.Data != nil || rec.Version != 1 {
			t.Fatalf("created = %+v", rec)
		}
		v := must[guard.ControlVersion](t)(s.GetControlVersion(ctx, rec.ID, 1))
		if v.Data != nil || v.Event != guard.VersionCreated {
			t.Fatalf("version 1 = %+v", v)
		}
		on := true
		_, err := s.UpdateControl(ctx, rec.ID, guard.ControlPatch{Enabled: &on})
		wantValidation(t, err, "enabled")
		must[int](t)(s.PutControlData(ctx, rec.ID, *testData("x")))
		got := must[guard.ControlRecord](t)(s.GetControl(ctx, rec.ID))
		if got.Data == nil || !got.Enabled {
			t.Fatalf("after put = %+v", got)
		}
	})
}

func TestSoftDeleteFreesName(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		a := must[guard.ControlRecord](t)(s.CreateControl(ctx, "dup", testData("a")))
		_, err := s.CreateControl(ctx, "dup", testData("b"))
		wantErr(t, err, guard.ErrControlNameConflict)

		unlinked := must[[]string](t)(s.DeleteControl(ctx, a.ID, false))
		if unlinked == nil || len(unlinked) != 0 {
			t.Fatalf("unlinked = %#v, want empty", unlinked)
		}
		_, err = s.GetControl(ctx, a.ID)
		wantErr(t, err, guard.ErrControlNotFound)
		_, err = s.DeleteControl(ctx, a.ID, false)
		wantErr(t, err, guard.ErrControlNotFound)
		_, err = s.UpdateControl(ctx, a.ID, guard.ControlPatch{})
		wantErr(t, err, guard.ErrControlNotFound)
		_, err = s.PutControlData(ctx, a.ID, *testData("z"))
		wantErr(t, err, guard.ErrControlNotFound)

		// History stays readable; the name is free again.
		vs, _ := must2(t)(s.ListControlVersions(ctx, a.ID, guard.PageRequest{}))
		if len(vs) != 2 || vs[0].Event != guard.VersionDeleted {
			t.Fatalf("versions after delete = %+v", vs)
		}
		b := must[guard.ControlRecord](t)(s.CreateControl(ctx, "dup", testData("b")))
		if b.ID == a.ID {
			t.Fatal("id reused")
		}
		// Restoring the deleted control under a taken name conflicts; after a rename it comes back.
		_, err = s.RestoreControlVersion(ctx, a.ID, 1)
		wantErr(t, err, guard.ErrControlNameConflict)
		other := "dup-b"
		must[guard.ControlRecord](t)(s.UpdateControl(ctx, b.ID, guard.ControlPatch{Name: &other}))
		back := must[guard.ControlRecord](t)(s.RestoreControlVersion(ctx, a.ID, 1))
		if back.Name != "dup" || back.Version != 3 {
			t.Fatalf("restored = %+v", back)
		}
		must[guard.ControlRecord](t)(s.GetControl(ctx, a.ID))
	})
}

func TestControlErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		_, err := s.CreateControl(ctx, "bad name!", testData("x"))
		wantValidation(t, err, "name")
		_, err = s.CreateControl(ctx, strings.Repeat("a", 256), nil)
		wantValidation(t, err, "name")
		bad := testData("x")
		bad.Condition = guard.Condition{}
		_, err = s.CreateControl(ctx, "ok", bad)
		var ve *guard.ValidationError
		if !errorsAs(err, &ve) || !strings.HasPrefix(ve.Problems[0].Field, "data") {
			t.Fatalf("invalid data error = %v", err)
		}
		rec := must[guard.ControlRecord](t)(s.CreateControl(ctx, "ok", nil))
		_, err = s.PutControlData(ctx, rec.ID, *bad)
		if !errorsAs(err, &ve) {
			t.Fatalf("put invalid data = %v", err)
		}
		empty := ""
		_, err = s.UpdateControl(ctx, rec.ID, guard.ControlPatch{Name: &empty})
		wantValidation(t, err, "name")
		_, err = s.GetControl(ctx, 424242)
		wantErr(t, err, guard.ErrControlNotFound)
		_, err = s.RestoreControlVersion(ctx, rec.ID, 5)
		wantErr(t, err, guard.ErrVersionNotFound)
		// Renaming onto a live name conflicts and changes nothing.
		must[guard.ControlRecord](t)(s.CreateControl(ctx, "taken", nil))
		taken := "taken"
		_, err = s.UpdateControl(ctx, rec.ID, guard.ControlPatch{Name: &taken})
		wantErr(t, err, guard.ErrControlNameConflict)
		got := must[guard.ControlRecord](t)(s.GetControl(ctx, rec.ID))
		if got.Name != "ok" || got.Version != 1 {
			t.Fatalf("failed rename left %+v", got)
		}
	})
}
