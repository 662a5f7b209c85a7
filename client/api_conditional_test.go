package client

import (
	"context"
	"errors"
	"testing"

	"github.com/guardrail-control/guard"
)

func TestLiveConditionalWrites(t *testing.T) {
	ls := startLiveServer(t)
	c := ls.admin(t)
	ctx := context.Background()
	data := func(pattern string) guard.ControlData {
		d, err := guard.ParseControlData([]byte(`{"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "` + pattern + `"}}}, "action": {"decision": "deny"}}`))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := data("a")
	id, err := c.CreateControl(ctx, "cond", &d)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := c.GetControl(ctx, id)
	if err != nil || rec.Version != 1 {
		t.Fatalf("%+v %v", rec, err)
	}
	v, err := c.PutControlDataIfVersion(ctx, id, data("b"), rec.Version)
	if err != nil || v != 2 {
		t.Fatalf("current version: %d %v", v, err)
	}
	// A writer that still holds version 1 is refused, and nothing changes.
	_, err = c.PutControlDataIfVersion(ctx, id, data("c"), 1)
	var ae *APIError
	if !errors.Is(err, guard.ErrVersionMismatch) || !errors.As(err, &ae) || ae.Status != 412 || ae.Code != CodePreconditionFailed {
		t.Fatalf("stale put: %v", err)
	}
	off := false
	if _, err := c.PatchControlIfVersion(ctx, id, guard.ControlPatch{Enabled: &off}, 1); !errors.Is(err, guard.ErrVersionMismatch) {
		t.Fatalf("stale patch: %v", err)
	}
	rec, err = c.PatchControlIfVersion(ctx, id, guard.ControlPatch{Enabled: &off}, 2)
	if err != nil || rec.Version != 3 || rec.Enabled {
		t.Fatalf("patch at the current version: %+v %v", rec, err)
	}
	if _, err := c.DeleteControlIfVersion(ctx, id, true, 2); !errors.Is(err, guard.ErrVersionMismatch) {
		t.Fatalf("stale delete: %v", err)
	}
	if _, err := c.DeleteControlIfVersion(ctx, id, true, 3); err != nil {
		t.Fatalf("delete at the current version: %v", err)
	}
	// Other errors do not match.
	if _, err := c.GetControl(ctx, 999999); errors.Is(err, guard.ErrVersionMismatch) {
		t.Fatal("a 404 matched ErrVersionMismatch")
	}
}
