package llmproxy

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
)

// Checker evaluates one step of agent at stage, exactly as POST /api/v1/evaluation would; r is the
// client's request (its context bounds the evaluation). An error wrapping ErrUnavailable means the guard
// server could not be asked (Config.FailOpen decides); a *CheckError is answered to the client as is;
// any other error is answered 500 guard_error.
type Checker interface {
	Check(r *http.Request, agent string, step *guard.Step, stage guard.Stage) (*guard.Result, error)
}

// CheckerFunc adapts a function to Checker.
type CheckerFunc func(r *http.Request, agent string, step *guard.Step, stage guard.Stage) (*guard.Result, error)

// Check implements Checker.
func (f CheckerFunc) Check(r *http.Request, agent string, step *guard.Step, stage guard.Stage) (*guard.Result, error) {
	return f(r, agent, step, stage)
}

// ErrUnavailable marks a Checker error of a guard server that could not be reached.
var ErrUnavailable = errors.New("llmproxy: the guard server is unavailable")

// CheckError is a Checker's refusal of the request itself (an unknown agent, an agent outside the key's
// scope, an invalid session id): answered with Status in the API's error format.
type CheckError struct {
	Status  int
	Code    string
	Message string
}

func (e *CheckError) Error() string { return e.Message }

// Step kinds, in metrics and refusals.
const (
	KindLLMPre   = "llm_pre"   // the request's messages
	KindToolPost = "tool_post" // a tool result in the request
	KindLLMPost  = "llm_post"  // the model's answer
	KindToolPre  = "tool_pre"  // a tool call in the answer
	KindWindow   = "llm_window"
)

// Block says why a step was refused: what the client's error says and carries under "guard".
type Block struct {
	// Kind is the step kind (KindLLMPre, ...); Step the step's name (the API, or the tool's name).
	Kind string `json:"step_kind"`
	Step string `json:"step_name"`
	// Decision is deny or steer; Approval is set when a person may let the step through.
	Decision guard.Decision         `json:"decision"`
	Reason   string                 `json:"reason,omitempty"`
	Controls []string               `json:"controls,omitempty"`
	Steering *guard.SteeringContext `json:"steering_context,omitempty"`
	Approval *guard.ApprovalRequest `json:"approval,omitempty"`
}

// code is the error code of the refusal: guard_denied, guard_steer, guard_approval_required.
func (b *Block) code() string {
	switch {
	case b.Approval != nil:
		return "guard_approval_required"
	case b.Decision == guard.DecisionSteer:
		return "guard_steer"
	}
	return "guard_denied"
}

// status is the HTTP status of the refusal: 403 for a deny or an approval to wait for, 422 for a steer
// (the request can be changed and sent again). Neither is retried by the official clients.
func (b *Block) status() int {
	if b.Decision == guard.DecisionSteer && b.Approval == nil {
		return http.StatusUnprocessableEntity
	}
	return http.StatusForbidden
}

// message is the human-readable sentence of the refusal.
func (b *Block) message() string {
	var what string
	switch b.Kind {
	case KindLLMPre:
		what = "the request's messages"
	case KindToolPost:
		what = fmt.Sprintf("the result of tool %q", b.Step)
	case KindToolPre:
		what = fmt.Sprintf("the model's call of tool %q", b.Step)
	default:
		what = "the model's answer"
	}
	var sb strings.Builder
	switch b.code() {
	case "guard_approval_required":
		sb.WriteString("guard: " + what + " needs a person's approval")
		if b.Approval.ID != "" {
			sb.WriteString(" (approval request " + b.Approval.ID + ")")
		}
	case "guard_steer":
		sb.WriteString("guard steered " + what)
	default:
		sb.WriteString("guard denied " + what)
	}
	if b.Reason != "" {
		sb.WriteString(": " + b.Reason)
	}
	if b.Steering != nil && b.Steering.Message != "" && b.Steering.Message != b.Reason {
		sb.WriteString(" (" + b.Steering.Message + ")")
	}
	return sb.String()
}

// check evaluates step at stage for c. It returns the payload to hand on (the redacted one when a control
// redacted it, else nil) or the error to answer: a *clientError for a refusal or a fault.
func (p *Proxy) check(c *call, kind string, step *guard.Step, stage guard.Stage) (redacted any, err error) {
	res, err := p.cfg.Checker.Check(c.r, c.agent, step, stage)
	if err != nil {
		var ce *CheckError
		switch {
		case errors.As(err, &ce):
			p.cfg.Metrics.step(c.api, kind, "error")
			return nil, &clientError{status: ce.Status, code: strings.ToLower(ce.Code), msg: "guard: " + ce.Message}
		case errors.Is(err, ErrUnavailable):
			p.cfg.Metrics.unavailable(p.cfg.FailOpen)
			if p.cfg.FailOpen {
				p.log.Warn("guard server unavailable: the step goes unchecked (fail-open)", zap.String("agent", c.agent),
					zap.String("api", c.api), zap.String("step_kind", kind), zap.Error(err))
				p.cfg.Metrics.step(c.api, kind, "unchecked")
				return nil, nil
			}
			p.log.Warn("guard server unavailable: the call is refused (fail-closed)", zap.String("agent", c.agent),
				zap.String("api", c.api), zap.String("step_kind", kind), zap.Error(err))
			p.cfg.Metrics.step(c.api, kind, "error")
			return nil, &clientError{status: http.StatusServiceUnavailable, code: "guard_unavailable",
				msg: "guard: the guard server is unavailable and the proxy fails closed; retry later"}
		default:
			p.log.Error("step evaluation failed", zap.String("agent", c.agent), zap.String("step_kind", kind), zap.Error(err))
			p.cfg.Metrics.step(c.api, kind, "error")
			return nil, &clientError{status: http.StatusInternalServerError, code: "guard_error", msg: "guard: the step could not be evaluated"}
		}
	}
	if b := blockOf(res, kind, step.Name); b != nil {
		p.cfg.Metrics.step(c.api, kind, string(b.Decision))
		p.log.Info("step refused", zap.String("agent", c.agent), zap.String("api", c.api), zap.String("step_kind", kind),
			zap.String("step_name", step.Name), zap.String("decision", string(b.Decision)), zap.Strings("controls", b.Controls))
		return nil, &clientError{status: b.status(), code: b.code(), msg: b.message(), block: b}
	}
	p.cfg.Metrics.step(c.api, kind, string(res.Decision))
	if res.Redacted != nil {
		if stage == guard.StagePre && res.Redacted.Input != nil {
			return res.Redacted.Input, nil
		}
		if stage == guard.StagePost && res.Redacted.Output != nil {
			return res.Redacted.Output, nil
		}
	}
	return nil, nil
}

// blockOf is the refusal of res, nil when the step may go on.
func blockOf(res *guard.Result, kind, name string) *Block {
	if res == nil {
		return nil
	}
	refused := res.Decision == guard.DecisionDeny || res.Decision == guard.DecisionSteer
	if res.Approval != nil && res.Approval.Status == guard.ApprovalRequired {
		refused = true
	}
	if !refused {
		return nil
	}
	b := &Block{Kind: kind, Step: name, Decision: res.Decision, Reason: res.Reason, Steering: res.SteeringContext}
	if b.Decision != guard.DecisionSteer {
		b.Decision = guard.DecisionDeny
	}
	if res.Approval != nil && res.Approval.Status == guard.ApprovalRequired {
		a := *res.Approval
		a.PayloadHash = ""
		b.Approval = &a
	}
	for _, m := range res.Matches {
		if m.Action == guard.DecisionDeny || m.Action == guard.DecisionSteer {
			b.Controls = append(b.Controls, m.ControlName)
		}
	}
	return b
}
