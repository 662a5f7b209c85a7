package store_test

import (
	"reflect"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

func newAgent(t *testing.T, s *store.Store, name string) {
	t.Helper()
	if _, _, err := s.InitAgent(ctxT(t), guard.AgentInit{Agent: guard.Agent{Name: name}}); err != nil {
		t.Fatalf("init agent: %v", err)
	}
}

// revisions tracks an agent's revision and the policy epoch between steps of a test.
type revisions struct {
	t     *testing.T
	s     *store.Store
	agent string
	rev   guard.Revision
	epoch int64
}

func (r *revisions) snapshot() (guard.Revision, int64) {
	ctx := ctxT(r.t)
	rev := must[guard.Revision](r.t)(r.s.AgentRevision(ctx, r.agent))
	_, rev2, err := r.s.AgentControls(ctx, r.agent)
	if err != nil || rev2 != rev {
		r.t.Fatalf("AgentControls revision %d (err %v) != AgentRevision %d", rev2, err, rev)
	}
	return rev, must[int64](r.t)(r.s.PolicyEpoch(ctx))
}

// expect checks whether the revision moved since the last call; the epoch must move whenever it does.
func (r *revisions) expect(step string, moved bool) {
	r.t.Helper()
	rev, epoch := r.snapshot()
	if (rev != r.rev) != moved {
		r.t.Errorf("%s: revision %d -> %d, want moved=%v", step, r.rev, rev, moved)
	}
	if moved && epoch == r.epoch {
		r.t.Errorf("%s: revision moved but policy epoch stayed %d", step, epoch)
	}
	r.rev, r.epoch = rev, epoch
}

func TestLinksRevisionsAndEpoch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		newAgent(t, s, "Bot-1") // normalised to bot-1
		newAgent(t, s, "other")
		r := &revisions{t: t, s: s, agent: "bot-1"}
		r.rev, r.epoch = r.snapshot()

		c1 := must[guard.ControlRecord](t)(s.CreateControl(ctx, "c1", testData("a")))
		c2 := must[guard.ControlRecord](t)(s.CreateControl(ctx, "c2", nil))
		r.expect("create unlinked controls", false)

		if err := s.LinkControl(ctx, "BOT-1", c2.ID); err != nil {
			t.Fatal(err)
		}
		r.expect("link c2", true)
		if err := s.LinkControl(ctx, "bot-1", c1.ID); err != nil {
			t.Fatal(err)
		}
		r.expect("link c1", true)
		if err := s.LinkControl(ctx, "bot-1", c1.ID); err != nil {
			t.Fatal(err)
		}
		r.expect("link c1 again (idempotent)", false)

		// Only controls with data are listed, in id order, with id == control_id.
		acs, _ := must3(t)(s.AgentControls(ctx, "bot-1"))
		if len(acs) != 1 || acs[0].ID != c1.ID || acs[0].ControlID != c1.ID || acs[0].Name != "c1" || !acs[0].Enabled {
			t.Fatalf("agent controls = %+v", acs)
		}
		must[int](t)(s.PutControlData(ctx, c2.ID, *testData("b")))
		r.expect("put data of linked c2", true)
		acs, _ = must3(t)(s.AgentControls(ctx, "bot-1"))
		if ids := []int64{acs[0].ID, acs[1].ID}; !reflect.DeepEqual(ids, []int64{c1.ID, c2.ID}) {
			t.Fatalf("agent control ids = %v", ids)
		}

		off, name := false, "c1-renamed"
		must[guard.ControlRecord](t)(s.UpdateControl(ctx, c1.ID, guard.ControlPatch{Enabled: &off}))
		r.expect("disable linked c1", true)
		acs, _ = must3(t)(s.AgentControls(ctx, "bot-1"))
		if acs[0].Enabled || acs[0].Control.Enabled {
			t.Fatalf("disabled control listed as enabled: %+v", acs[0])
		}
		must[guard.ControlRecord](t)(s.UpdateControl(ctx, c1.ID, guard.ControlPatch{Name: &name}))
		r.expect("rename linked c1", true)
		must[guard.ControlRecord](t)(s.RestoreControlVersion(ctx, c1.ID, 1))
		r.expect("restore linked c1", true)

		// Changes to controls or links of another agent leave this one alone.
		c3 := must[guard.ControlRecord](t)(s.CreateControl(ctx, "c3", testData("c")))
		if err := s.LinkControl(ctx, "other", c3.ID); err != nil {
			t.Fatal(err)
		}
		must[int](t)(s.PutControlData(ctx, c3.ID, *testData("d")))
		r.expect("changes to another agent's control", false)

		// Delete: in use without force, unlinks with force.
		if err := s.LinkControl(ctx, "other", c1.ID); err != nil {
			t.Fatal(err)
		}
		_, err := s.DeleteControl(ctx, c1.ID, false)
		var inUse *guard.ControlInUseError
		if !errorsAs(err, &inUse) || !reflect.DeepEqual(inUse.Agents, []string{"bot-1", "other"}) || inUse.ControlID != c1.ID {
			t.Fatalf("delete in use = %v", err)
		}
		wantErr(t, err, guard.ErrControlInUse)
		r.expect("refused delete", false)
		unlinked := must[[]string](t)(s.DeleteControl(ctx, c1.ID, true))
		if !reflect.DeepEqual(unlinked, []string{"bot-1", "other"}) {
			t.Fatalf("unlinked = %v", unlinked)
		}
		r.expect("forced delete", true)
		acs, _ = must3(t)(s.AgentControls(ctx, "bot-1"))
		if len(acs) != 1 || acs[0].ID != c2.ID {
			t.Fatalf("after delete = %+v", acs)
		}

		removed := must[bool](t)(s.UnlinkControl(ctx, "bot-1", c2.ID))
		r.expect("unlink", true)
		again := must[bool](t)(s.UnlinkControl(ctx, "bot-1", c2.ID))
		r.expect("unlink again", false)
		if !removed || again {
			t.Fatalf("unlink removed = %v, again = %v", removed, again)
		}

		// Errors.
		wantErr(t, s.LinkControl(ctx, "nobody", c2.ID), guard.ErrAgentNotFound)
		wantErr(t, s.LinkControl(ctx, "bot-1", 987654), guard.ErrControlNotFound)
		wantErr(t, s.LinkControl(ctx, "bot-1", c1.ID), guard.ErrControlNotFound) // deleted
		_, err = s.UnlinkControl(ctx, "nobody", c2.ID)
		wantErr(t, err, guard.ErrAgentNotFound)
		_, _, err = s.AgentControls(ctx, "nobody")
		wantErr(t, err, guard.ErrAgentNotFound)
		_, _, err = s.AgentControls(ctx, "not a valid name!")
		wantErr(t, err, guard.ErrAgentNotFound)
		_, err = s.AgentRevision(ctx, "nobody")
		wantErr(t, err, guard.ErrAgentNotFound)
	})
}

func must3(t testing.TB) func([]guard.AgentControl, guard.Revision, error) ([]guard.AgentControl, guard.Revision) {
	return func(v []guard.AgentControl, r guard.Revision, err error) ([]guard.AgentControl, guard.Revision) {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v, r
	}
}
