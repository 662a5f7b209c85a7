package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/timeparam"
	"github.com/guardrail-control/guard/server/problem"
)

// Bounds of POST /api/v1/controls/replay.
const (
	defaultReplayLimit  = 10000
	maxReplayLimit      = 100000
	defaultReplaySample = 5
	maxReplaySample     = 50
	maxDraftControls    = 1000
	defaultReplayRange  = 24 * time.Hour
	// maxReplayBytes bounds the step JSON one replay holds in memory: a replay stops there (truncated),
	// whatever its limit, so that large steps cannot make a replay take the server's memory.
	maxReplayBytes = 256 << 20
	// maxSampleStepBytes bounds a sample's step in the answer; a larger one is reduced to its type and
	// name (step_truncated).
	maxSampleStepBytes = 64 << 10
)

// draftControl is one entry of a draft control set: new data for an existing control, named by id or
// by name, or a new control (a name no control has).
type draftControl struct {
	ID   *int64          `json:"id"`
	Name string          `json:"name"`
	Data json.RawMessage `json:"data"`
}

type replayRequest struct {
	AgentName  string         `json:"agent_name"`
	Controls   []draftControl `json:"controls"`
	StartTime  *string        `json:"start_time"` // RFC 3339, read by timeparam (offsets within ±14:00)
	EndTime    *string        `json:"end_time"`
	Limit      *int           `json:"limit"`
	SampleSize *int           `json:"sample_size"`
}

// resolvedDraft is a checked draft: data by existing control id, and the new controls.
type resolvedDraft struct {
	byID     map[int64]guard.ControlData
	newCtrls []guard.AgentControl
}

// replayPlan is a checked replay request, ready to run.
type replayPlan struct {
	agent      string // "" for every agent
	draft      resolvedDraft
	start, end time.Time
	limit      int
	sample     int
}

// replayControls is POST /api/v1/controls/replay: it checks the request, starts a replay job and
// answers 200 with the result when the job ends within the synchronous wait (a few seconds), else 202
// with the job to poll at GET /api/v1/controls/replay/jobs/{job_id}.
func (s *Server) replayControls(w http.ResponseWriter, r *http.Request) {
	plan, err := s.parseReplay(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	job, err := s.replays().start(plan, s.runReplay)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	t := time.NewTimer(s.cfg.replay.syncWait)
	defer t.Stop()
	select {
	case <-job.done:
	case <-t.C:
	case <-r.Context().Done():
	}
	view := job.view()
	status := http.StatusOK
	if view.Status == jobRunning {
		status = http.StatusAccepted
		w.Header().Set("Location", apiPrefix+"/controls/replay/jobs/"+job.id)
	} else if view.Status == jobFailed {
		s.writeErr(w, r, job.err)
		return
	}
	problem.Respond(w, r, s.log, status, view)
}

// getReplayJob is GET /api/v1/controls/replay/jobs/{job_id}: the job's progress, and its result once done.
func (s *Server) getReplayJob(w http.ResponseWriter, r *http.Request) {
	job := s.replays().get(r.PathValue("job_id"))
	if job != nil && !jobInScope(r.Context(), job) {
		job = nil // a scoped key sees the jobs of its agents only
	}
	if job == nil {
		s.writeErr(w, r, problem.New(http.StatusNotFound, problem.CodeNotFound,
			"no such replay job (jobs are kept in memory for 15 minutes after they end)"))
		return
	}
	problem.Respond(w, r, s.log, http.StatusOK, job.view())
}

// parseReplay decodes and checks a replay request: the draft validates (problems named
// controls.<i>.data...), the agent exists (404), the range and bounds make sense.
func (s *Server) parseReplay(r *http.Request) (*replayPlan, error) {
	var req replayRequest
	if err := problem.DecodeJSON(r, &req); err != nil {
		return nil, err
	}
	var probs []guard.Problem
	add := func(field, code, msg string) {
		probs = append(probs, guard.Problem{Field: field, Code: code, Message: msg})
	}
	plan := &replayPlan{limit: defaultReplayLimit, sample: defaultReplaySample}
	if req.AgentName != "" {
		agent, err := guard.NormalizeAgentName(req.AgentName)
		if err != nil {
			add("agent_name", "invalid", err.Error())
		}
		plan.agent = agent
	}
	if req.Limit != nil {
		if *req.Limit < 1 || *req.Limit > maxReplayLimit {
			add("limit", "range", "must be from 1 to 100000")
		}
		plan.limit = *req.Limit
	}
	if req.SampleSize != nil {
		if *req.SampleSize < 0 || *req.SampleSize > maxReplaySample {
			add("sample_size", "range", "must be from 0 to 50")
		}
		plan.sample = *req.SampleSize
	}
	readTime := func(field string, raw *string) (time.Time, bool) {
		if raw == nil {
			return time.Time{}, false
		}
		t, err := timeparam.Parse(*raw)
		if err != nil {
			code, msg := timeparam.Problem(err)
			add(field, code, msg)
			return time.Time{}, false
		}
		return t, true
	}
	plan.end = time.Now()
	if t, ok := readTime("end_time", req.EndTime); ok {
		plan.end = t
	}
	plan.start = plan.end.Add(-defaultReplayRange)
	if t, ok := readTime("start_time", req.StartTime); ok {
		plan.start = t
	}
	if !plan.start.Before(plan.end) {
		add("start_time", "range", "must be before end_time")
	}
	if err := s.checkReplayScope(r.Context(), plan.agent, req.Controls); err != nil {
		return nil, err
	}
	draft, dprobs, err := s.resolveDraft(r.Context(), req.Controls)
	if err != nil {
		return nil, err
	}
	probs = append(probs, dprobs...)
	if len(probs) > 0 {
		return nil, problem.Validation("the replay request is not valid", probs...)
	}
	plan.draft = draft
	if plan.agent != "" {
		if _, err := s.store.AgentRevision(r.Context(), plan.agent); errors.Is(err, guard.ErrAgentNotFound) {
			pe := problem.New(http.StatusNotFound, problem.CodeAgentNotFound, "agent not found")
			pe.Problems = []guard.Problem{{Field: "agent_name", Code: "not_found", Message: "no agent has this name"}}
			return nil, pe
		} else if err != nil {
			return nil, err
		}
	}
	if err := s.checkCaptured(r.Context(), plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// checkCaptured refuses a replay with nothing to replay: a range in which no step of the agent (or of
// any agent) was captured is a 422 naming start_time, before any job starts, so that an operator who
// replays the wrong range, or an agent whose steps are not captured, is told so rather than shown a
// diff of nothing. A store without captured steps is left to the job (503 REPLAY_UNAVAILABLE).
func (s *Server) checkCaptured(ctx context.Context, plan *replayPlan) error {
	cs, ok := s.store.(guard.CaptureStore)
	if !ok {
		return nil
	}
	steps, _, err := cs.CapturedSteps(ctx, guard.CaptureQuery{AgentName: plan.agent, Start: plan.start, End: plan.end, Limit: 1})
	if err != nil || len(steps) > 0 {
		return err
	}
	whose := "of any agent"
	if plan.agent != "" {
		whose = "of this agent"
	}
	return problem.Validation("there are no captured steps to replay", guard.Problem{Field: "start_time", Code: "no_captured_steps",
		Message: "no step " + whose + " was captured from start_time to end_time: widen the range, or check that step capture is on for the agent (GUARD_CAPTURE_AGENTS)"})
}

// resolveDraft validates every draft control and finds the existing control each one names.
func (s *Server) resolveDraft(ctx context.Context, entries []draftControl) (resolvedDraft, []guard.Problem, error) {
	var probs []guard.Problem
	add := func(field, code, msg string) {
		probs = append(probs, guard.Problem{Field: field, Code: code, Message: msg})
	}
	d := resolvedDraft{byID: map[int64]guard.ControlData{}}
	if len(entries) == 0 || len(entries) > maxDraftControls {
		add("controls", "length", "must hold 1 to 1000 draft controls")
		return d, probs, nil
	}
	names := map[string]bool{}
	for i, e := range entries {
		p := "controls." + strconv.Itoa(i)
		data, err := s.parseDataOnly(e.Data) // a draft is not saved: its tests need not pass yet
		if err != nil {
			var pe *problem.Error
			if !errors.As(err, &pe) {
				return d, nil, err
			}
			for _, q := range pe.Problems {
				q.Field = p + "." + q.Field
				probs = append(probs, q)
			}
			continue
		}
		switch {
		case e.ID != nil:
			rec, err := s.store.GetControl(ctx, *e.ID)
			if errors.Is(err, guard.ErrControlNotFound) {
				add(p+".id", "not_found", "no control has this id")
				continue
			} else if err != nil {
				return d, nil, err
			}
			if _, dup := d.byID[rec.ID]; dup {
				add(p+".id", "duplicate", "the draft names this control twice")
				continue
			}
			d.byID[rec.ID] = data
		case e.Name == "":
			add(p+".name", "required", "an id or a name is required")
		default:
			if err := guard.ValidateControlName(e.Name); err != nil {
				add(p+".name", "invalid", err.Error())
				continue
			}
			id, found, err := s.controlByName(ctx, e.Name)
			if err != nil {
				return d, nil, err
			}
			if found {
				if _, dup := d.byID[id]; dup {
					add(p+".name", "duplicate", "the draft names this control twice")
					continue
				}
				d.byID[id] = data
				continue
			}
			if names[e.Name] {
				add(p+".name", "duplicate", "the draft names this control twice")
				continue
			}
			names[e.Name] = true
			// A new control gets a negative id: it cannot collide with a stored one, and the replay
			// reports it by name.
			d.newCtrls = append(d.newCtrls, guard.AgentControl{ControlID: -int64(len(d.newCtrls) + 1), Name: e.Name,
				Enabled: data.Enabled, Control: data})
		}
	}
	return d, probs, nil
}

// controlByName finds the live control with exactly this name.
func (s *Server) controlByName(ctx context.Context, name string) (int64, bool, error) {
	page := guard.PageRequest{Limit: 100}
	for {
		list, info, err := s.store.ListControls(ctx, guard.ControlFilter{Name: name}, page)
		if err != nil {
			return 0, false, err
		}
		for _, c := range list {
			if c.Name == name {
				return c.ID, true, nil
			}
		}
		if info.NextCursor == nil || *info.NextCursor == "" {
			return 0, false, nil
		}
		page.Cursor = *info.NextCursor
	}
}

// draftControls applies the draft to an agent's current controls: linked controls the draft names get
// its data (and its enabled flag), the draft's new controls are added. Existing controls the draft
// names that are not linked to the agent do not take part: the replay answers "what changes for this
// agent if I save this", and saving data does not link a control.
func (d *resolvedDraft) controls(current []guard.AgentControl) []guard.AgentControl {
	out := make([]guard.AgentControl, 0, len(current)+len(d.newCtrls))
	for _, ac := range current {
		if data, ok := d.byID[ac.ControlID]; ok {
			ac.Control = data
			ac.Enabled = data.Enabled
		}
		out = append(out, ac)
	}
	return append(out, d.newCtrls...)
}

// runReplay loads the captured steps the plan selects, builds the engines of each agent they belong
// to, and replays them; progress counts replayed steps.
func (s *Server) runReplay(ctx context.Context, plan *replayPlan, job *replayJob) (*guard.ReplayResult, error) {
	started := time.Now()
	cs, ok := s.store.(guard.CaptureStore)
	if !ok {
		return nil, problem.New(http.StatusServiceUnavailable, codeReplayUnavailable, "this server's store keeps no captured steps")
	}
	steps, more, err := cs.CapturedSteps(ctx, guard.CaptureQuery{AgentName: plan.agent, Start: plan.start, End: plan.end,
		Limit: plan.limit, MaxBytes: maxReplayBytes})
	if err != nil {
		return nil, err
	}
	res := &guard.ReplayResult{StartTime: plan.start.UTC(), EndTime: plan.end.UTC(), Limit: plan.limit,
		Changes: map[string]int{}, Controls: []guard.ReplayControl{}, Samples: []guard.ReplaySample{}}
	if plan.agent != "" {
		a := plan.agent
		res.AgentName = &a
	}
	res.Truncated = more
	job.total.Store(int64(len(steps)))
	engines := map[string]*replayEngines{}
	for i := range steps {
		agent := steps[i].AgentName
		if _, seen := engines[agent]; seen {
			continue
		}
		acs, _, err := s.store.AgentControls(ctx, agent)
		if errors.Is(err, guard.ErrAgentNotFound) {
			engines[agent] = nil // its steps are skipped
			continue
		} else if err != nil {
			return nil, err
		}
		named := make([]guard.AgentControl, 0, len(plan.draft.byID))
		for _, ac := range acs {
			if plan.draft.has(ac.ControlID) {
				named = append(named, ac)
			}
		}
		labels, err := s.stepLabelSet(ctx, agent)
		if err != nil && !errors.Is(err, guard.ErrAgentNotFound) {
			return nil, err
		}
		engines[agent] = &replayEngines{current: s.replayEngine(acs, labels), draft: s.replayEngine(plan.draft.controls(acs), labels),
			deltaCurrent: s.replayEngine(enforced(named), labels), deltaDraft: s.replayEngine(enforced(plan.draft.controls(named)), labels)}
	}
	rr := &replayRun{steps: steps, engines: engines, sampleSize: plan.sample, evalTO: s.cfg.evalTimeout, progress: &job.doneSteps}
	t, skipped, err := rr.run(ctx)
	if err != nil {
		return nil, err
	}
	res.StepsReplayed, res.StepsChanged, res.StepsSkipped, res.Changes = t.replayed, t.changed, skipped, t.changes
	for _, c := range t.controls {
		c.InDraft = c.ControlID == nil || plan.draft.has(*c.ControlID)
		res.Controls = append(res.Controls, *c)
	}
	sortControls(res.Controls)
	for _, kind := range sortedKeys(t.samples) {
		for _, sm := range t.samples[kind] {
			res.Samples = append(res.Samples, sm.ReplaySample)
		}
	}
	if len(steps) == 0 { // checkCaptured found some: they were pruned since (GUARD_CAPTURE_MAX_AGE_HOURS)
		res.Message = "no captured steps in this range: is step capture on for this agent (GUARD_CAPTURE_AGENTS)?"
	}
	res.DurationMS = float64(time.Since(started).Microseconds()) / 1000
	return res, nil
}

func (d *resolvedDraft) has(id int64) bool { _, ok := d.byID[id]; return ok }

// enforced returns a copy of acs with every control in enforce mode. The per-control counts of a
// replay say what each control of the draft matches, before and after, also for a control in shadow:
// an edit of a shadow control changes no decision, and what it would match is what the operator
// replays it to see. The decisions (the full engines) keep every control's own mode.
func enforced(acs []guard.AgentControl) []guard.AgentControl {
	out := make([]guard.AgentControl, len(acs))
	for i, ac := range acs {
		ac.Control.Mode = guard.ModeEnforce
		out[i] = ac
	}
	return out
}

// replayEngine compiles the enabled controls of acs, whatever their execution: a replay answers what the
// agent's controls decide about a step, and sdk controls (evaluated in the client) decide too. A control
// that does not compile is evaluated as an error, as in the server's own engines (compile.go). labels are
// the agent's step-schema labels (step_labels.go), so that session controls see them as they do live.
func (s *Server) replayEngine(acs []guard.AgentControl, labels *guard.StepLabels) *guard.Engine {
	controls := make([]guard.Control, 0, len(acs))
	for _, ac := range acs {
		if ac.Enabled && ac.Control.Enabled {
			controls = append(controls, guard.Control{ID: ac.ControlID, Name: ac.Name, Data: ac.Control, Version: ac.Version})
		}
	}
	eng := guard.New(guard.WithRegistry(s.cfg.registry), guard.WithExecution(guard.ExecutionServer, guard.ExecutionSDK),
		guard.WithStepLabelSet(labels))
	_ = eng.UpdateTolerant(controls) // problems are logged when the server's own engine compiles them
	return eng
}
