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

// EvaluateGranted is Evaluate with controls let through: each control of controlIDs that carries
// action.approval (every such control of the engine when controlIDs is empty) is evaluated and listed as
// always but does not decide (its match neither blocks nor ends the evaluation), so the step is decided by
// the other controls. When nothing else blocked and a let-through control counted as matched,
// Result.Approval is {status: granted} naming the first of them, with Controls listing every one that
// matched, in evaluation order: the caller (the server, after checking a grant bound to this step)
// consumes the grant then, and only then. When another control with action.approval refuses the step,
// Result.Approval is the request it asks for, as from Evaluate.
//
// With no ids, it answers which approval controls a step refused by one of them meets: the set one
// approval request covers (docs/approvals.md, several approval controls on one step).
//
// When none of controlIDs has action.approval, the result is Evaluate's. The cost is a copy of the
// compiled control list per call: grants are rare and used once.
func (e *Engine) EvaluateGranted(ctx context.Context, step *Step, stage Stage, controlIDs ...int64) (*Result, error) {
	snap := e.load()
	g := snap.granting(controlIDs...)
	if g == nil {
		return e.Evaluate(ctx, step, stage)
	}
	tmp := &Engine{cfg: e.cfg}
	tmp.snap.Store(g)
	res, err := tmp.Evaluate(ctx, step, stage)
	if err != nil || res.Approval != nil || !res.IsSafe {
		return res, err
	}
	var granted []ApprovalControl
	for _, c := range e.approvalControlsOf(snap, res, true) {
		if granting(controlIDs, c.ControlID) {
			granted = append(granted, c)
		}
	}
	if len(granted) == 0 {
		return res, nil
	}
	res.Approval = &ApprovalRequest{Status: ApprovalGranted, ControlID: granted[0].ControlID, ControlName: granted[0].ControlName}
	if len(granted) > 1 {
		res.Approval.Controls = granted
	}
	return res, nil
}

// ApprovalControlsOf lists the controls with action.approval that genuinely matched in res (a result of
// this engine), in evaluation order: after EvaluateGranted without ids, every approval control that
// refuses the step and would ask a person (a control that failed closed asks no one).
func (e *Engine) ApprovalControlsOf(res *Result) []ApprovalControl {
	return e.approvalControlsOf(e.load(), res, false)
}

// approvalControlsOf is ApprovalControlsOf; withErrors counts the controls that failed closed too (a
// grant that let such a control through is used: the step ran).
func (e *Engine) approvalControlsOf(snap *snapshot, res *Result, withErrors bool) []ApprovalControl {
	if res == nil || !snap.hasApproval {
		return nil
	}
	lists := [][]ControlResult{res.Matches}
	if withErrors {
		lists = append(lists, res.Errors)
	}
	var out []ApprovalControl
	for _, l := range lists {
		for i := range l {
			cr := &l[i]
			if !cr.Result.Matched {
				continue
			}
			if c := snap.approvalControl(cr.ControlID); c != nil {
				out = append(out, approvalOf(c, cr))
			}
		}
	}
	// Matches come before Errors: order them as they were evaluated (deny, steer, each by id).
	slices.SortStableFunc(out, func(a, b ApprovalControl) int { return cmpEvalOrder(snap, a.ControlID, b.ControlID) })
	return out
}

// granting reports whether id is let through by the ids given to EvaluateGranted (all when none).
func granting(ids []int64, id int64) bool { return len(ids) == 0 || slices.Contains(ids, id) }

// approvalOf describes the approval control c from its entry cr of a result.
func approvalOf(c *cControl, cr *ControlResult) ApprovalControl {
	msg := c.approval.Message
	if msg == "" {
		msg = reasonText(c.name, c.decision, cr.Result.Message, cr.Result.Error != "", cr.Metadata, cr.SteeringContext)
	}
	return ApprovalControl{ControlID: c.id, ControlVersion: c.version, ControlName: c.name, Message: msg,
		Approvers: c.approval.Approvers, TTL: c.approval.TTL()}
}

// cmpEvalOrder orders two controls of s as Evaluate does: deny, then steer, then the others, each by id.
func cmpEvalOrder(s *snapshot, a, b int64) int {
	ca, cb := s.controls[s.indexOf(a)].class, s.controls[s.indexOf(b)].class
	if ca != cb {
		return int(ca) - int(cb)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// indexOf is the position of control id in s.controls (-1 when absent).
func (s *snapshot) indexOf(id int64) int {
	for i := range s.controls {
		if s.controls[i].id == id {
			return i
		}
	}
	return -1
}

// approvalControl is control id of s when it carries action.approval, else nil.
func (s *snapshot) approvalControl(id int64) *cControl {
	if i := s.indexOf(id); i >= 0 && s.controls[i].approval != nil {
		return &s.controls[i]
	}
	return nil
}

// HasApproval reports whether the engine holds an enforced control with action.approval.
func (e *Engine) HasApproval() bool { return e.load().hasApproval }

// ApprovalControls is the number of enforced controls with action.approval the engine holds: with more
// than one, a step one of them refuses may be refused by others too, and one request covers them all.
func (e *Engine) ApprovalControls() int {
	s := e.load()
	if !s.hasApproval {
		return 0
	}
	n := 0
	for i := range s.controls {
		if s.controls[i].approval != nil {
			n++
		}
	}
	return n
}

// granting returns a copy of s in which the controls ids (every control with action.approval when ids
// is empty) that have action.approval are of the class of the controls that never block (as in a shadow
// engine): the indexes and prefilters are shared, they do not depend on the class. nil when there is no
// such control. TestGrantingCopiesEverySnapshotField keeps this copy complete when snapshot gains a
// field.
func (s *snapshot) granting(ids ...int64) *snapshot {
	var at []int
	for i := range s.controls {
		if s.controls[i].approval != nil && granting(ids, s.controls[i].id) {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
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
	for _, i := range at {
		g.controls[i].class = classOther
	}
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
