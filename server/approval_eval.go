package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/capture"
)

// settleApproval runs when the control that decided res carries action.approval (res.Approval set by
// the engine). The request covers every approval control that refuses the step (approvalSet): one
// decision, one grant. A grant presented in the step's context (GrantContextKey) that is signed by this
// database, unexpired, bound to this agent, these controls at these versions, step, stage and payload
// hash, lets the step be evaluated again with those controls let through (Engine.EvaluateGranted); when
// nothing else blocks, the grant is consumed in the database (once, across replicas) and that result is
// the answer. Otherwise the step stays refused, with the grant's problem in grant_error, and a request is
// opened (or the pending one of the same step reused) for a person to decide; a new request is announced
// on the webhook.
//
// A failure of the database here never lets a step through: the refusal stands, without a request id.
func (s *Server) settleApproval(r *http.Request, eng *guard.Engine, agent string, step *guard.Step, stage guard.Stage, res *guard.Result) *guard.Result {
	as, ok := s.store.(guard.ApprovalStore)
	if !ok {
		return res
	}
	ctx := r.Context()
	hash, err := guard.PayloadHash(step, stage)
	if err != nil {
		s.log.Warn("approval: the step's payload cannot be hashed", zap.String("agent", agent), zap.Error(err))
		return res
	}
	res.Approval.PayloadHash = hash
	set, all := s.approvalSet(ctx, eng, step, stage, res.Approval)
	if tok, present := step.Context[GrantContextKey]; present {
		gres, gerr := s.useGrant(ctx, as, eng, tok, agent, step, stage, hash, set, all)
		switch {
		case gerr == nil && gres.Approval != nil && gres.Approval.Status == guard.ApprovalRequired:
			// Let through, then refused by an approval control that was not in the set (the controls
			// changed between the two evaluations): a request for that one.
			res = gres
			res.Approval.PayloadHash = hash
			set = []guard.ApprovalControl{approvalControlOf(res.Approval)}
		case gerr == nil:
			return gres
		default:
			res.Approval.GrantError = gerr.Error()
		}
	}
	if len(set) > 1 {
		res.Approval.Controls = set
	}
	s.openApproval(ctx, as, agent, step, stage, res, set)
	return res
}

// approvalControlOf is the control of an engine's approval request.
func approvalControlOf(a *guard.ApprovalRequest) guard.ApprovalControl {
	return guard.ApprovalControl{ControlID: a.ControlID, ControlName: a.ControlName, Message: a.Message, Approvers: a.Approvers, TTL: a.TTL}
}

// approvalSet is the set of approval controls that refuse the step, the deciding one (a) first, then the
// others in evaluation order, and, when the engine holds several approval controls, the evaluation with
// every one of them let through (all; nil otherwise): it says which of them match, and it is the
// evaluation a grant for the whole set lets through. The deciding control's version is left 0: it is
// read from the store (openApproval, useGrant) and carried by the grant itself.
func (s *Server) approvalSet(ctx context.Context, eng *guard.Engine, step *guard.Step, stage guard.Stage, a *guard.ApprovalRequest) ([]guard.ApprovalControl, *guard.Result) {
	set := []guard.ApprovalControl{approvalControlOf(a)}
	if eng.ApprovalControls() < 2 {
		return set, nil
	}
	ectx, cancel := context.WithTimeout(ctx, s.cfg.evalTimeout)
	all, err := eng.EvaluateGranted(ectx, step, stage)
	cancel()
	if err != nil {
		return set, nil
	}
	for _, c := range eng.ApprovalControlsOf(all) {
		if c.ControlID != a.ControlID {
			set = append(set, c)
		}
	}
	return set, all
}

// useGrant checks grant tok for this step and its set of approval controls and, when it holds, evaluates
// with those controls let through (all, when approvalSet made it) and consumes the grant if that let the
// step run. The error says why the grant did not apply.
func (s *Server) useGrant(ctx context.Context, as guard.ApprovalStore, eng *guard.Engine, tok any, agent string,
	step *guard.Step, stage guard.Stage, hash string, set []guard.ApprovalControl, all *guard.Result) (*guard.Result, error) {
	key, err := as.ApprovalKey(ctx)
	if err != nil {
		return nil, errors.New("the grant could not be checked (database unavailable)")
	}
	g, err := parseGrant(tok)
	if err != nil {
		return nil, err
	}
	controlID := set[0].ControlID
	ok, err := g.verify(key, agent, set, step, stage, hash, time.Now())
	if !ok {
		// Not signed for this step: say which binding differs (the failure path may read the database).
		rec, gerr := as.GetApproval(ctx, g.id)
		if gerr != nil {
			return nil, mismatch(nil, agent, set, step, stage, hash)
		}
		return nil, mismatch(&rec, agent, set, step, stage, hash)
	}
	if err != nil {
		return nil, err
	}
	ctl, err := s.store.GetControl(ctx, controlID)
	if err != nil {
		return nil, errors.New("the grant could not be checked (control not readable)")
	}
	if ctl.Version != g.version {
		return nil, errGrantChanged
	}
	// The evaluation with every approval control let through is the granted one, unless a control failed
	// closed there (it may be an approval control outside the set, which the approver never saw): then
	// only the set is let through.
	gres := all
	if gres == nil || failedClosed(gres) {
		ids := make([]int64, len(set))
		for i := range set {
			ids[i] = set[i].ControlID
		}
		ectx, cancel := context.WithTimeout(ctx, s.cfg.evalTimeout)
		gres, err = eng.EvaluateGranted(ectx, step, stage, ids...)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	if gres.Approval == nil || gres.Approval.Status != guard.ApprovalGranted {
		// Another control refused the step (or no control of the set matched): the grant is kept for later.
		return gres, nil
	}
	used, err := as.ConsumeApproval(ctx, g.id, grantedExecutionID(gres, gres.Approval.ControlID), time.Now())
	if err != nil {
		return nil, errors.New("the grant could not be used (database unavailable)")
	}
	if !used {
		return nil, errGrantUsed
	}
	gres.Approval.ID = g.id
	gres.Approval.PayloadHash = hash
	gres.Approval.URL = approvalPath(g.id)
	return gres, nil
}

// failedClosed reports whether a control of res failed and counts as matched (on_error deny).
func failedClosed(res *guard.Result) bool {
	for i := range res.Errors {
		if res.Errors[i].Result.Matched {
			return true
		}
	}
	return false
}

// grantedExecutionID is the control_execution_id of the granted control's entry: its event.
func grantedExecutionID(res *guard.Result, controlID int64) string {
	for _, l := range [][]guard.ControlResult{res.Matches, res.Errors} {
		for i := range l {
			if l[i].ControlID == controlID {
				return l[i].ControlExecutionID
			}
		}
	}
	return ""
}

// openApproval stores the request of res.Approval for the controls of set (or finds the pending one of
// this exact step and set) and fills its id, expiry and URL; a new request is announced on the webhook.
// A request of several controls lasts, and its grant holds, the shortest of their TTLs.
func (s *Server) openApproval(ctx context.Context, as guard.ApprovalStore, agent string, step *guard.Step, stage guard.Stage,
	res *guard.Result, set []guard.ApprovalControl) {
	a := res.Approval
	ctl, err := s.store.GetControl(ctx, a.ControlID)
	if err != nil {
		s.log.Warn("approval: the control cannot be read; no request opened", zap.Int64("control_id", a.ControlID), zap.Error(err))
		return
	}
	set = slices.Clone(set)
	set[0].ControlVersion = ctl.Version
	ttl := a.TTL
	for _, c := range set[1:] {
		if c.TTL > 0 && c.TTL < ttl {
			ttl = c.TTL
		}
	}
	shown := *res.RedactedStep(step)
	if _, ok := shown.Context[GrantContextKey]; ok {
		shown.Context = make(map[string]any, len(step.Context))
		for k, v := range step.Context {
			if k != GrantContextKey {
				shown.Context[k] = v
			}
		}
	}
	body, err := capture.EncodeStep(&shown, s.cfg.approvals.redact)
	if err != nil {
		s.log.Warn("approval: the step cannot be encoded; no request opened", zap.Error(err))
		return
	}
	rec, created, err := as.OpenApproval(ctx, guard.ApprovalRecord{AgentName: agent, ControlID: a.ControlID, ControlVersion: ctl.Version,
		ControlName: a.ControlName, StepType: step.Type, StepName: step.Name, Stage: stage, PayloadHash: a.PayloadHash,
		Step: body, Message: a.Message, Approvers: a.Approvers, Controls: set, TTL: ttl})
	if err != nil {
		s.log.Warn("approval: the request cannot be stored", zap.String("agent", agent), zap.Error(err))
		return
	}
	a.ID = rec.ID
	exp := rec.ExpiresAt
	a.ExpiresAt = &exp
	a.URL = approvalPath(rec.ID)
	if len(set) > 1 {
		a.Controls = set
	}
	if created {
		s.approvals.announce(&rec)
	}
}

// approvalPath is where a request is read and decided.
func approvalPath(id string) string { return apiPrefix + "/approvals/" + id }

// tagApprovalEvent marks the events of the controls that asked for (or were let through by) an approval
// with the request's id and status, in their metadata: an auditor goes from an event to its approval and
// back (ApprovalRecord.UsedExecutionID). A request of several controls marks each of their events.
func tagApprovalEvent(events []guard.Event, a *guard.ApprovalRequest) {
	if a == nil || a.ID == "" {
		return
	}
	for i := range events {
		if events[i].ControlID != a.ControlID && !coveredBy(a, events[i].ControlID) {
			continue
		}
		md := make(map[string]any, len(events[i].Metadata)+2)
		for k, v := range events[i].Metadata {
			md[k] = v
		}
		md["approval_id"] = a.ID
		md["approval_status"] = a.Status
		events[i].Metadata = md
	}
}

// coveredBy reports whether control id is one of the further controls of request a.
func coveredBy(a *guard.ApprovalRequest, id int64) bool {
	for i := range a.Controls {
		if a.Controls[i].ControlID == id {
			return true
		}
	}
	return false
}
