package server

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	guard "github.com/guardrail-control/guard"
)

// The replay of a draft control set (POST /api/v1/controls/replay): every captured step in range is
// evaluated by two engines built with the public Engine API, one over the agent's current controls and
// one over the draft, and the differences are counted. The engines are compiled once per agent and
// shared by the workers (an Engine is safe for concurrent use); each worker keeps its own tallies, merged
// at the end, so the loop takes no lock.

// Kinds of change between the current and the draft decision.
const (
	changeSteer = "steer_changed" // both steer, with a different steering context or reason
)

// orderedSample is a sample with the index of its step in the replayed range: the workers' samples are
// put back in that order.
type orderedSample struct {
	guard.ReplaySample
	order int
}

// replayEngines are the two engines of one agent, and the names of their controls.
type replayEngines struct {
	current, draft *guard.Engine
	// deltaCurrent and deltaDraft hold only the controls the draft names: their current data and their
	// draft data (new controls in deltaDraft only).
	deltaCurrent, deltaDraft *guard.Engine
}

// controlKey identifies a control across both engines: its id, or for a control only the draft has,
// its name (with id 0).
type controlKey struct {
	id   int64
	name string
}

// tally is one worker's counts.
type tally struct {
	replayed, changed int
	changes           map[string]int
	controls          map[controlKey]*guard.ReplayControl
	samples           map[string][]orderedSample
}

func newTally() *tally {
	return &tally{changes: map[string]int{}, controls: map[controlKey]*guard.ReplayControl{}, samples: map[string][]orderedSample{}}
}

func (t *tally) control(cr *guard.ControlResult) *guard.ReplayControl {
	k := controlKey{id: cr.ControlID}
	if cr.ControlID <= 0 {
		k = controlKey{name: cr.ControlName}
	}
	c := t.controls[k]
	if c == nil {
		c = &guard.ReplayControl{ControlName: cr.ControlName}
		if cr.ControlID > 0 {
			id := cr.ControlID
			c.ControlID = &id
		}
		t.controls[k] = c
	}
	return c
}

// replayRun is the input of one replay.
type replayRun struct {
	steps      []guard.CapturedStep
	engines    map[string]*replayEngines // by agent; a missing agent's steps are skipped
	sampleSize int
	evalTO     time.Duration
	progress   *atomic.Int64
}

// run replays the steps on up to GOMAXPROCS workers and merges their tallies. The steps of one session
// (agent and context.session_id) are replayed by one worker, in the order they were captured (time, then
// id), so that the session state of the replay engines (fresh for every replay: never the live store)
// builds up as it did on the live traffic; other steps are spread over the workers in chunks.
func (rr *replayRun) run(ctx context.Context) (*tally, int, error) {
	units := sessionUnits(rr.steps)
	workers := max(1, min(runtime.GOMAXPROCS(0), 4, len(rr.steps)/256+1))
	tallies := make([]*tally, workers)
	skipped := make([]int, workers)
	errs := make([]error, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		tallies[w] = newTally()
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := tallies[w]
			for {
				u := int(next.Add(1)) - 1
				if u >= len(units) || ctx.Err() != nil {
					if ctx.Err() != nil {
						errs[w] = ctx.Err()
					}
					return
				}
				for _, i := range units[u] {
					if !rr.one(ctx, t, i) {
						skipped[w]++
					}
				}
				if rr.progress != nil {
					rr.progress.Add(int64(len(units[u])))
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, 0, err
		}
	}
	out := tallies[0]
	skip := skipped[0]
	for w := 1; w < workers; w++ {
		out.merge(tallies[w])
		skip += skipped[w]
	}
	for kind, ss := range out.samples {
		sort.Slice(ss, func(i, j int) bool { return ss[i].order < ss[j].order })
		out.samples[kind] = ss[:min(len(ss), rr.sampleSize)]
	}
	return out, skip, nil
}

// replayChunk is how many steps without a session make one unit of a worker's work.
const replayChunk = 64

// sessionUnits splits the steps (indexes into steps) into units of work: every session's steps, sorted by
// capture time then id, and chunks of the steps that have no session, in their order.
func sessionUnits(steps []guard.CapturedStep) [][]int {
	var units [][]int
	bySession := map[[2]string]int{} // agent, session id -> index in units
	var loose []int
	for i := range steps {
		id := capturedSessionID(steps[i].Step)
		if id == "" {
			loose = append(loose, i)
			if len(loose) == replayChunk {
				units, loose = append(units, loose), nil
			}
			continue
		}
		k := [2]string{steps[i].AgentName, id}
		u, ok := bySession[k]
		if !ok {
			u = len(units)
			bySession[k] = u
			units = append(units, nil)
		}
		units[u] = append(units[u], i)
	}
	if len(loose) > 0 {
		units = append(units, loose)
	}
	for _, u := range bySession {
		idx := units[u]
		sort.SliceStable(idx, func(a, b int) bool {
			sa, sb := &steps[idx[a]], &steps[idx[b]]
			if !sa.Time.Equal(sb.Time) {
				return sa.Time.Before(sb.Time)
			}
			return sa.ID < sb.ID
		})
	}
	return units
}

// capturedSessionID is the context.session_id of a captured step ("" when it has none, or it does not
// decode: such a step is skipped by the replay anyway).
func capturedSessionID(raw json.RawMessage) string {
	var s struct {
		Context struct {
			SessionID any `json:"session_id"`
		} `json:"context"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	id, _ := s.Context.SessionID.(string)
	return id
}

func (t *tally) merge(o *tally) {
	t.replayed += o.replayed
	t.changed += o.changed
	for k, n := range o.changes {
		t.changes[k] += n
	}
	for k, c := range o.controls {
		m := t.controls[k]
		if m == nil {
			t.controls[k] = c
			continue
		}
		m.MatchedCurrent += c.MatchedCurrent
		m.MatchedDraft += c.MatchedDraft
		m.NewlyMatched += c.NewlyMatched
		m.NoLongerMatched += c.NoLongerMatched
		m.ErrorsCurrent += c.ErrorsCurrent
		m.ErrorsDraft += c.ErrorsDraft
	}
	for k, ss := range o.samples {
		t.samples[k] = append(t.samples[k], ss...)
	}
}

// one replays step i; it reports false when the step was skipped (its agent is gone, or it no longer
// decodes).
//
// The decisions come from Engine.Check on the two full engines (decision only: no per-control result,
// a few µs for 100 controls, where Evaluate builds a result for every control). The per-control counts
// come from Evaluate on two small engines holding only the controls the draft names (their current and
// their draft data): the other controls are the same on both sides, so they match the same steps and
// cannot change. The full results are built only for the steps kept as samples.
func (rr *replayRun) one(ctx context.Context, t *tally, i int) bool {
	cs := &rr.steps[i]
	eng := rr.engines[cs.AgentName]
	if eng == nil {
		return false
	}
	var step guard.Step
	if err := json.Unmarshal(cs.Step, &step); err != nil {
		return false
	}
	// One deadline for the step's four evaluations: twice what POST /evaluation gives one evaluation
	// (one timer per step instead of four; it only matters for evaluators that call out).
	ctx, cancel := context.WithTimeout(ctx, 2*rr.evalTO)
	defer cancel()
	// Session windows are measured at the time the step was captured, not at the replay's.
	ctx = guard.WithEvaluationTime(ctx, cs.Time)
	var curD, drD replayDecision
	var curOK, drOK bool
	var cur, dr *guard.Result
	if eng.current.UsesSessions() || eng.draft.UsesSessions() {
		// An evaluation with session state records the step in its session: each engine evaluates a
		// step once, with its full result (kept for a sample).
		cur, dr = evalOne(ctx, eng.current, &step, cs.Stage), evalOne(ctx, eng.draft, &step, cs.Stage)
		curD, curOK = resultDecision(cur)
		drD, drOK = resultDecision(dr)
	} else {
		curD, curOK = checkOne(ctx, eng.current, &step, cs.Stage)
		drD, drOK = checkOne(ctx, eng.draft, &step, cs.Stage)
	}
	if !curOK || !drOK {
		return false
	}
	before := evalOne(ctx, eng.deltaCurrent, &step, cs.Stage)
	after := evalOne(ctx, eng.deltaDraft, &step, cs.Stage)
	if before == nil || after == nil {
		return false
	}
	t.replayed++
	t.count(before, after)
	kind := changeKind(curD, drD)
	if kind == "" {
		return true
	}
	t.changed++
	t.changes[kind]++
	if len(t.samples[kind]) < rr.sampleSize {
		if cur == nil {
			cur, dr = evalOne(ctx, eng.current, &step, cs.Stage), evalOne(ctx, eng.draft, &step, cs.Stage)
		}
		if cur != nil && dr != nil {
			sm := orderedSample{ReplaySample: guard.ReplaySample{Kind: kind, StepID: cs.ID, AgentName: cs.AgentName, Stage: cs.Stage,
				Timestamp: cs.Time, Step: cs.Step, Recorded: cs.Decision, Current: outcome(cur), Draft: outcome(dr)}, order: i}
			if len(sm.Step) > maxSampleStepBytes {
				sm.Step, _ = json.Marshal(guard.Step{Type: step.Type, Name: step.Name})
				sm.StepTruncated = true
			}
			t.samples[kind] = append(t.samples[kind], sm)
		}
	}
	return true
}

// count adds one step's matches and errors of the draft's controls, before and after.
func (t *tally) count(before, after *guard.Result) {
	for j := range before.Matches {
		c := t.control(&before.Matches[j])
		c.MatchedCurrent++
		if !hasControl(after.Matches, &before.Matches[j]) {
			c.NoLongerMatched++
		}
	}
	for j := range after.Matches {
		c := t.control(&after.Matches[j])
		c.MatchedDraft++
		if !hasControl(before.Matches, &after.Matches[j]) {
			c.NewlyMatched++
		}
	}
	for j := range before.Errors {
		t.control(&before.Errors[j]).ErrorsCurrent++
	}
	for j := range after.Errors {
		t.control(&after.Errors[j]).ErrorsDraft++
	}
	// Controls that neither matched nor failed still appear, with zero counts.
	for j := range before.NonMatches {
		t.control(&before.NonMatches[j])
	}
	for j := range after.NonMatches {
		t.control(&after.NonMatches[j])
	}
}

// replayDecision is the outcome of Engine.Check: the decision, and for a steer what steers.
type replayDecision struct {
	d     guard.Decision
	steer *guard.ControlSteerError
}

// checkOne runs Engine.Check; ok is false when the step cannot be checked.
func checkOne(ctx context.Context, e *guard.Engine, step *guard.Step, stage guard.Stage) (replayDecision, bool) {
	return errDecision(e.Check(ctx, step, stage))
}

// resultDecision is the decision of an Evaluate result as Check reports it (nil: not evaluated).
func resultDecision(res *guard.Result) (replayDecision, bool) {
	if res == nil {
		return replayDecision{}, false
	}
	return errDecision(res.Err())
}

// errDecision reads the decision of Check's error.
func errDecision(err error) (replayDecision, bool) {
	if err == nil {
		return replayDecision{d: guard.DecisionAllow}, true
	}
	var deny *guard.ControlViolationError
	if errors.As(err, &deny) {
		return replayDecision{d: guard.DecisionDeny}, true
	}
	var steer *guard.ControlSteerError
	if errors.As(err, &steer) {
		return replayDecision{d: guard.DecisionSteer, steer: steer}, true
	}
	return replayDecision{}, false
}

// evalOne evaluates step; nil when it cannot be evaluated.
func evalOne(ctx context.Context, e *guard.Engine, step *guard.Step, stage guard.Stage) *guard.Result {
	res, err := e.Evaluate(ctx, step, stage)
	if err != nil {
		return nil
	}
	return res
}

func hasControl(list []guard.ControlResult, cr *guard.ControlResult) bool {
	for i := range list {
		if list[i].ControlID == cr.ControlID && (cr.ControlID > 0 || list[i].ControlName == cr.ControlName) {
			return true
		}
	}
	return false
}

// changeKind names how the decision changes ("allow_to_deny", ..., "steer_changed": both steer, with
// another message or steering context), or "" when it does not.
func changeKind(cur, dr replayDecision) string {
	if cur.d != dr.d {
		return string(cur.d) + "_to_" + string(dr.d)
	}
	if cur.d == guard.DecisionSteer && (cur.steer.Message != dr.steer.Message ||
		!reflect.DeepEqual(cur.steer.SteeringContext, dr.steer.SteeringContext)) {
		return changeSteer
	}
	return ""
}

func outcome(r *guard.Result) guard.ReplayOutcome {
	o := guard.ReplayOutcome{Decision: r.Decision, Reason: r.Reason, SteeringContext: r.SteeringContext,
		Matched: make([]string, 0, len(r.Matches)), Errors: make([]string, 0, len(r.Errors))}
	for i := range r.Matches {
		o.Matched = append(o.Matched, r.Matches[i].ControlName)
	}
	for i := range r.Errors {
		o.Errors = append(o.Errors, r.Errors[i].ControlName)
	}
	if r.Approval != nil {
		o.ApprovalControl = r.Approval.ControlName
	}
	return o
}
