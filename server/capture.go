package server

import (
	"net/http"
	"strconv"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/timeparam"
	"github.com/guardrail-control/guard/server/capture"
	"github.com/guardrail-control/guard/server/problem"
)

// WithCapture keeps the steps of the agents rec captures (GUARD_CAPTURE_AGENTS) for replay: every step
// of such an agent that POST /evaluation evaluates, and the steps clients post to
// POST /api/v1/steps/captured. A nil rec (the default) captures nothing. The caller closes rec after
// the server.
func WithCapture(rec *capture.Recorder) Option { return func(c *config) { c.capture = rec } }

// captureEvaluation hands an evaluated step to the capture recorder when its agent is captured. The
// step is encoded and redacted (redaction paths) on the recorder's goroutine, not here: the handler is
// done with it. When a redacting control matched, what is kept is the step as redacted (never the text
// it found).
func (s *Server) captureEvaluation(r *http.Request, agent string, step *guard.Step, stage guard.Stage, res *guard.Result) {
	rec := s.cfg.capture
	if !rec.Enabled(agent) {
		return
	}
	rec.Enqueue(capture.Item{Agent: agent, Step: res.RedactedStep(step), Stage: stage, Decision: res.Decision, Time: time.Now(),
		Source: "server", Size: r.ContentLength})
}

// maxPostedSteps bounds one POST /api/v1/steps/captured.
const maxPostedSteps = 1000

type postedStep struct {
	AgentName string      `json:"agent_name"`
	Step      *guard.Step `json:"step"`
	Stage     string      `json:"stage"`
	Decision  string      `json:"decision"`
	Timestamp *string     `json:"timestamp"` // RFC 3339, read by timeparam (offsets within ±14:00)
}

type postStepsRequest struct {
	Steps []postedStep `json:"steps"`
}

// postCapturedSteps is POST /api/v1/steps/captured: steps a client evaluated in-process, kept like the
// server's own when their agent is captured. Steps of agents that are not captured are counted as
// ignored: a client may send them whatever the server's setting, and the answer says what was kept.
func (s *Server) postCapturedSteps(w http.ResponseWriter, r *http.Request) {
	var req postStepsRequest
	if err := s.decodeLenient(w, r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	items, err := validatePostedSteps(req.Steps)
	if err == nil {
		err = checkStepAgents(r.Context(), items)
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	var size int64
	if len(items) > 0 && r.ContentLength > 0 {
		size = r.ContentLength / int64(len(items))
	}
	var out struct {
		Received int `json:"received"`
		Enqueued int `json:"enqueued"`
		Ignored  int `json:"ignored"`
		Dropped  int `json:"dropped"`
	}
	out.Received = len(items)
	rec := s.cfg.capture
	for _, it := range items {
		if !rec.Enabled(it.Agent) {
			out.Ignored++
			continue
		}
		it.Size = size
		if rec.Enqueue(it) {
			out.Enqueued++
		} else {
			out.Dropped++
		}
	}
	problem.Respond(w, r, s.log, http.StatusAccepted, out)
}

// validatePostedSteps checks every posted step, naming the field of each problem; it never echoes a value.
func validatePostedSteps(steps []postedStep) ([]capture.Item, error) {
	var probs []guard.Problem
	add := func(field, code, msg string) {
		probs = append(probs, guard.Problem{Field: field, Code: code, Message: msg})
	}
	if len(steps) == 0 || len(steps) > maxPostedSteps {
		add("steps", "length", "must hold 1 to 1000 steps")
		return nil, problem.Validation("the captured steps are not valid", probs...)
	}
	now := time.Now()
	items := make([]capture.Item, 0, len(steps))
	for i, ps := range steps {
		p := "steps." + strconv.Itoa(i) + "."
		agent, err := guard.NormalizeAgentName(ps.AgentName)
		if err != nil {
			add(p+"agent_name", "invalid", err.Error())
		}
		stage, err := guard.ParseStage(ps.Stage)
		if err != nil {
			add(p+"stage", "enum", "must be one of pre, post")
		}
		switch guard.Decision(ps.Decision) {
		case guard.DecisionAllow, guard.DecisionDeny, guard.DecisionSteer:
		default:
			add(p+"decision", "enum", "must be one of allow, deny, steer")
		}
		if ps.Step == nil {
			add(p+"step", "required", "is required")
		} else {
			if ps.Step.Type == "" {
				add(p+"step.type", "required", "must be a non-empty string")
			}
			if ps.Step.Name == "" {
				add(p+"step.name", "required", "must be a non-empty string")
			}
		}
		at := now
		if ps.Timestamp != nil {
			if ts, err := timeparam.Parse(*ps.Timestamp); err != nil {
				code, msg := timeparam.Problem(err)
				add(p+"timestamp", code, msg)
			} else if !ts.IsZero() && ts.Before(now) {
				at = ts
			}
		}
		items = append(items, capture.Item{Agent: agent, Step: ps.Step, Stage: stage, Decision: guard.Decision(ps.Decision),
			Time: at, Source: "sdk"})
	}
	if len(probs) > 0 {
		return nil, problem.Validation("the captured steps are not valid", probs...)
	}
	return items, nil
}
