package guard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/guardrail-control/guard/evaluator"
)

// UpdateTolerant is Update for controls that were valid when they were saved but may not compile in
// this process: an evaluator that is not registered or not available here (an external evaluator without
// its package or API key), or a rule that became stricter since. Where Update refuses the whole set,
// UpdateTolerant compiles every control and always swaps the new snapshot in:
//
//   - A leaf whose evaluator cannot be built (an unknown or unavailable name, or a config the evaluator
//     now refuses) is compiled as a leaf that always fails with the evaluator error
//     `evaluator "x" is not available in this process` (or `evaluator "x" config is no longer valid:
//     pattern (invalid_regex)`, naming the fields and problem codes, never their values). The leaf keeps
//     its own on_error ("allow" or "deny"; any other value means deny), and the other leaves of the
//     tree stay real. The condition therefore behaves
//     exactly as docs/api.md says for an evaluator missing at evaluation time: an "or" that matches
//     before reaching the leaf matches without error, otherwise the error ends the tree, the control is
//     listed in the result's errors and on_error decides (deny, the default, fails closed).
//   - A control whose other parts no longer validate (scope, action, the shape of the condition) is
//     compiled fail-closed: it applies to every step at both stages, its condition is a single failing
//     leaf with on_error deny and its decision is deny, so every step is blocked with a reason naming the
//     control until it is fixed.
//   - Disabled controls, and controls whose execution the engine does not run (see WithExecution), are
//     dropped without being validated: they never take part in evaluation, whatever their problems.
//
// The returned error is nil when every control compiled as it is, else a *ValidationError listing the
// problems of the degraded controls with paths controls.<index>.<field>, as Update would report them
// (see ProblemsByControl), for the caller to log. It never fails because of one control.
//
// The degraded leaves are ordinary compiled leaves: evaluation costs the same as with Update.
func (e *Engine) UpdateTolerant(controls []Control) error { return e.update(controls, true) }

// unavailable is the evaluator of a leaf UpdateTolerant could not build: it always fails. It is in no
// registry, so no saved control can name it.
type unavailable struct{ err unavailableError }

func (u unavailable) Evaluate(context.Context, *evaluator.Data) (evaluator.Result, error) {
	return evaluator.Result{}, u.err
}

// unavailableError is the error of an unavailable evaluator; its text already names the evaluator or
// the control, so results report it as it is.
type unavailableError string

func (e unavailableError) Error() string { return string(e) }

// unavailableBuilt stands in for the evaluator of spec, whose build failed with err.
func unavailableBuilt(r *evaluator.Registry, spec *EvaluatorSpec, err error) *evaluator.Built {
	msg := fmt.Sprintf("evaluator %q is not available in this process", spec.Name)
	var ce *evaluator.ConfigError
	switch {
	case errors.Is(err, evaluator.ErrUnknownEvaluator):
		if hint := evaluator.MissingHint(r, spec.Name); hint != "" {
			msg += ": " + hint
		}
	case errors.As(err, &ce) && len(ce.Problems) > 0:
		fields := make([]string, len(ce.Problems))
		for i, fe := range ce.Problems {
			f := fe.Field
			if f == "" {
				f = "config"
			}
			fields[i] = f + " (" + fe.Code + ")"
		}
		msg = fmt.Sprintf("evaluator %q config is no longer valid: %s", spec.Name, strings.Join(fields, ", "))
	default:
		msg = fmt.Sprintf("evaluator %q config is no longer valid", spec.Name)
	}
	onErr := evaluator.OnErrorDeny
	if s, _ := spec.Config["on_error"].(string); s == string(evaluator.OnErrorAllow) {
		onErr = evaluator.OnErrorAllow
	}
	return &evaluator.Built{Evaluator: unavailable{err: unavailableError(msg)}, OnError: onErr}
}

// failClosed compiles a control that does not validate any more: every step at both stages, one failing
// leaf (on_error deny) over the whole step, decision deny.
func (c *compiler) failClosed(ctl *Control) cControl {
	cc := cControl{id: ctl.ID, name: ctl.Name, decision: DecisionDeny, class: classDeny}
	msg := unavailableError(fmt.Sprintf("control %q is no longer valid in this process and fails closed", ctl.Name))
	l := &cLeaf{
		path:    c.pathID("*", &cc, map[int32]bool{}),
		ev:      unavailable{err: msg},
		onError: evaluator.OnErrorDeny,
	}
	cc.root = cNode{kind: nodeLeaf, leaf: l}
	cc.firstLeaf = l
	cc.evName, cc.selPath = l.evName, c.paths[l.path].sel.raw
	return cc
}

// ControlProblems is the problems of one control in the *ValidationError of Update or UpdateTolerant.
type ControlProblems struct {
	Index    int       // position of the control in the list given to Update or UpdateTolerant
	Problems []Problem // their fields still start with controls.<Index>.
}

// ProblemsByControl groups the problems of a *ValidationError returned by Update or UpdateTolerant by
// control, in the order of the error (ascending index), so that a caller can log them with the control's
// identity. It returns nil for a nil error or any other error; problems whose field does not start with
// controls.<index> are left out.
func ProblemsByControl(err error) []ControlProblems {
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var out []ControlProblems
	for _, p := range ve.Problems {
		i, ok := controlIndex(p.Field)
		if !ok {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Index == i {
			out[n-1].Problems = append(out[n-1].Problems, p)
			continue
		}
		out = append(out, ControlProblems{Index: i, Problems: []Problem{p}})
	}
	return out
}

// controlIndex returns <i> of a field "controls.<i>" or "controls.<i>.<rest>".
func controlIndex(field string) (int, bool) {
	rest, ok := strings.CutPrefix(field, "controls.")
	if !ok {
		return 0, false
	}
	num, _, _ := strings.Cut(rest, ".")
	i, err := strconv.Atoi(num)
	return i, err == nil && i >= 0
}
