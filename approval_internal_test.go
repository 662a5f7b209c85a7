package guard

import (
	"reflect"
	"testing"
)

// TestGrantingCopiesEverySnapshotField: granting builds its copy field by field (a snapshot holds a
// sync.Pool, which must not be copied); a field added to snapshot and not copied fails here.
func TestGrantingCopiesEverySnapshotField(t *testing.T) {
	c := Control{ID: 5, Name: "c", Data: ControlData{Enabled: true, Execution: ExecutionServer,
		Condition: Condition{Selector: &Selector{Path: "input"}, Evaluator: &EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": "secret"}}},
		Action:    Action{Decision: DecisionDeny, Approval: &Approval{}}}}
	e := New(WithLiveIndexMin(1))
	if err := e.Update([]Control{c}); err != nil {
		t.Fatal(err)
	}
	s := e.load()
	g := s.granting(5)
	if g == nil || g.controls[0].class != classOther || s.controls[0].class != classDeny {
		t.Fatal("granting did not make a copy with the control let through")
	}
	sv, gv := reflect.ValueOf(s).Elem(), reflect.ValueOf(g).Elem()
	for i := range sv.NumField() {
		name := sv.Type().Field(i).Name
		if name == "pool" || name == "controls" {
			continue
		}
		if sv.Field(i).IsZero() != gv.Field(i).IsZero() {
			t.Errorf("snapshot field %s is not copied by granting", name)
		}
	}
	if s.granting(6) != nil {
		t.Fatal("granting of an unknown control")
	}
}
