package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/guardrail-control/guard"
)

// CapturedStep is a step the caller evaluated, sent to POST /steps/captured so that the server keeps it
// for replay (when the server captures the agent: GUARD_CAPTURE_AGENTS).
type CapturedStep struct {
	AgentName string          `json:"agent_name"`
	Step      json.RawMessage `json:"step"` // the JSON of a guard.Step
	Stage     guard.Stage     `json:"stage"`
	Decision  guard.Decision  `json:"decision"` // allow, deny or steer
	Timestamp time.Time       `json:"timestamp"`
}

// CapturedStepsAck is the answer of POST /steps/captured: Ignored counts the steps of agents the server
// does not capture, Dropped those its full buffer refused.
type CapturedStepsAck struct {
	Received int `json:"received"`
	Enqueued int `json:"enqueued"`
	Ignored  int `json:"ignored"`
	Dropped  int `json:"dropped"`
}

// PostCapturedSteps sends 1 to 1000 evaluated steps to be kept for replay.
func (c *HTTPClient) PostCapturedSteps(ctx context.Context, steps []CapturedStep) (CapturedStepsAck, error) {
	body := struct {
		Steps []CapturedStep `json:"steps"`
	}{steps}
	var out CapturedStepsAck
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/steps/captured", in: body, out: &out})
	return out, err
}

// DraftControl is one control of a replay's draft: new data for an existing control (by ID, or by Name),
// or a new control (a Name no control has).
type DraftControl struct {
	ID   int64             `json:"id,omitempty"`
	Name string            `json:"name,omitempty"`
	Data guard.ControlData `json:"data"`
}

// ReplayRequest asks POST /controls/replay to evaluate the captured steps of AgentName ("" for every
// agent) between Start and End (zero: the last 24 hours up to now), at most Limit of them (0: the server's
// default, 10000), against the agent's current controls and against Controls.
type ReplayRequest struct {
	AgentName  string
	Controls   []DraftControl
	Start, End time.Time
	Limit      int
	SampleSize *int // samples per kind of change (nil: the server's default, 5)
}

// ReplayOutcome is one side (current or draft) of a changed step.
type ReplayOutcome = guard.ReplayOutcome

// ReplaySample is a step whose decision changes under the draft.
type ReplaySample = guard.ReplaySample

// ReplayControl counts, for one control, the replayed steps it matched before and after.
type ReplayControl = guard.ReplayControl

// ReplayResult is what a replay found.
type ReplayResult = guard.ReplayResult

// ReplayJob is a replay's state: Status "running", "done" (Result set) or "failed" (Error set).
type ReplayJob struct {
	JobID    string `json:"job_id"`
	Status   string `json:"status"`
	Progress struct {
		StepsTotal int64 `json:"steps_total"`
		StepsDone  int64 `json:"steps_done"`
	} `json:"progress"`
	Result *ReplayResult `json:"result,omitempty"`
	Error  *struct {
		Status int    `json:"status"`
		Code   string `json:"error_code"`
		Detail string `json:"detail"`
	} `json:"error,omitempty"`
}

// StartReplay sends POST /controls/replay (admin). The server answers with the finished job when the
// replay takes a few seconds at most, else with the running job: poll it with GetReplayJob, or use
// Replay, which does.
func (c *HTTPClient) StartReplay(ctx context.Context, req ReplayRequest) (*ReplayJob, error) {
	body := map[string]any{"controls": req.Controls}
	if req.AgentName != "" {
		body["agent_name"] = req.AgentName
	}
	if !req.Start.IsZero() {
		body["start_time"] = req.Start.UTC()
	}
	if !req.End.IsZero() {
		body["end_time"] = req.End.UTC()
	}
	if req.Limit != 0 {
		body["limit"] = req.Limit
	}
	if req.SampleSize != nil {
		body["sample_size"] = *req.SampleSize
	}
	var out ReplayJob
	if _, err := c.do(ctx, call{method: http.MethodPost, path: "/controls/replay", in: body, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetReplayJob reads a replay job (GET /controls/replay/jobs/{job_id}, admin).
func (c *HTTPClient) GetReplayJob(ctx context.Context, jobID string) (*ReplayJob, error) {
	var out ReplayJob
	if _, err := c.do(ctx, call{method: http.MethodGet, path: "/controls/replay/jobs/" + url.PathEscape(jobID), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Replay starts a replay and waits for its result, polling the job every poll (0: 500 ms) until it ends
// or ctx is done. progress, when not nil, is called with each running state.
func (c *HTTPClient) Replay(ctx context.Context, req ReplayRequest, poll time.Duration, progress func(*ReplayJob)) (*ReplayResult, error) {
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	job, err := c.StartReplay(ctx, req)
	for err == nil && job.Status == "running" {
		if progress != nil {
			progress(job)
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		job, err = c.GetReplayJob(ctx, job.JobID)
	}
	if err != nil {
		return nil, err
	}
	if job.Status != "done" || job.Result == nil {
		if job.Error != nil {
			return nil, fmt.Errorf("guard client: replay failed: %s: %s", job.Error.Code, job.Error.Detail)
		}
		return nil, fmt.Errorf("guard client: replay ended in state %q", job.Status)
	}
	return job.Result, nil
}
