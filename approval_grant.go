package guard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// EvaluateGranted is Evaluate with one control let through: control controlID, when it carries
// action.approval, is evaluated and listed as always but does not decide (its match neither blocks nor
// ends the evaluation), so the step is decided by the other controls. When the control counted as matched
// and nothing else blocked, Result.Approval is {status: granted} naming it: the caller (the server, after
// checking a grant bound to this step) consumes the grant then, and only then.
//
// A control without action.approval, or not in the engine, is not let through: the result is Evaluate's.
// The cost is a copy of the compiled control list per call: grants are rare and used once.
func (e *Engine) EvaluateGranted(ctx context.Context, step *Step, stage Stage, controlID int64) (*Result, error) {
	g := e.load().granting(controlID)
	if g == nil {
		return e.Evaluate(ctx, step, stage)
	}
	tmp := &Engine{cfg: e.cfg}
	tmp.snap.Store(g)
	res, err := tmp.Evaluate(ctx, step, stage)
	if err != nil || res.Approval != nil || !res.IsSafe {
		return res, err
	}
	for _, l := range [][]ControlResult{res.Matches, res.Errors} {
		for i := range l {
			if l[i].ControlID == controlID && l[i].Result.Matched {
				res.Approval = &ApprovalRequest{Status: ApprovalGranted, ControlID: controlID, ControlName: l[i].ControlName}
				return res, nil
			}
		}
	}
	return res, nil
}

// HasApproval reports whether the engine holds an enforced control with action.approval.
func (e *Engine) HasApproval() bool { return e.load().hasApproval }

// granting returns a copy of s in which control id, if it has action.approval, is of the class of the
// controls that never block (as in a shadow engine): the indexes and prefilters are shared, they do not
// depend on the class. nil when there is no such control. TestGrantingCopiesEverySnapshotField keeps
// this copy complete when snapshot gains a field.
func (s *snapshot) granting(id int64) *snapshot {
	at := -1
	for i := range s.controls {
		if s.controls[i].id == id && s.controls[i].approval != nil {
			at = i
			break
		}
	}
	if at < 0 {
		return nil
	}
	g := &snapshot{
		controls:    slices.Clone(s.controls),
		paths:       s.paths,
		stages:      s.stages,
		hasExternal: s.hasExternal,
		hasRedact:   s.hasRedact,
		hasApproval: s.hasApproval,
		spanSlots:   s.spanSlots,
		patWords:    s.patWords,
		runSets:     s.runSets,
		live:        s.live,
		liveMin:     s.liveMin,
	}
	g.controls[at].class = classOther
	g.pool.New = func() any { return newScratch(g) }
	return g
}

// PayloadHashPrefix starts every payload hash: the algorithm, so that another may follow.
const PayloadHashPrefix = "sha256:"

// PayloadHash is the canonical hash of the payload a control looks at in step at stage (input at pre,
// output at post; absent is JSON null): "sha256:" and the lower-case hex SHA-256 of the payload's JSON
// canonicalised by RFC 8785 (JCS: object keys sorted by UTF-16 code units, no insignificant whitespace,
// numbers as ECMAScript writes a double, strings with the minimal escapes). An approval and its grant
// are bound to it; an auditor recomputes it from a recorded step with any JCS implementation and
// sha256sum. Numbers beyond the precision of a double are hashed as that double (JCS's rule).
func PayloadHash(step *Step, stage Stage) (string, error) {
	if step == nil {
		return "", ErrNilStep
	}
	v := step.Input
	if stage == StagePost {
		v = step.Output
	}
	if h, ok := payloadHashFast(v); ok {
		return h, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("guard: the step's payload cannot be encoded as JSON: %w", err)
	}
	return CanonicalHash(raw)
}

// CanonicalHash is PayloadHash of a payload given as JSON text.
func CanonicalHash(raw []byte) (string, error) {
	val := jsontext.Value(raw)
	if err := val.Canonicalize(); err != nil {
		return "", fmt.Errorf("guard: the payload is not canonical JSON: %w", err)
	}
	sum := sha256.Sum256(val)
	return PayloadHashPrefix + hex.EncodeToString(sum[:]), nil
}
