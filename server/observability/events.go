package observability

import (
	"time"

	"github.com/google/uuid"

	guard "github.com/guardrail-control/guard"
)

// SourceServer and SourceSDK are the values of Event.Source: recorded by the server in POST /evaluation,
// or posted by a client library that evaluated controls in process.
const (
	SourceServer = "server"
	SourceSDK    = "sdk"
)

// EventsFromResult turns one evaluation into one event per evaluated control (matches, errors and
// non-matches), with source "server". Evaluator output metadata is not copied: it may quote the step.
func EventsFromResult(agentName string, step *guard.Step, stage guard.Stage, res *guard.Result,
	traceID, spanID string, now time.Time) []guard.Event {
	if res == nil {
		return nil
	}
	var stepType, stepName string
	if step != nil {
		stepType, stepName = step.Type, step.Name
	}
	ts := now.UTC()
	events := make([]guard.Event, 0, len(res.Matches)+len(res.Errors)+len(res.NonMatches))
	for _, list := range [][]guard.ControlResult{res.Matches, res.Errors, res.NonMatches} {
		for i := range list {
			cr := &list[i]
			id := cr.ControlExecutionID
			if id == "" {
				id = uuid.NewString()
			}
			ev := guard.Event{
				ControlExecutionID: id,
				TraceID:            traceID,
				SpanID:             spanID,
				AgentName:          agentName,
				ControlID:          cr.ControlID,
				ControlName:        cr.ControlName,
				ControlVersion:     cr.ControlVersion,
				CheckStage:         stage,
				StepType:           stepType,
				StepName:           stepName,
				Action:             cr.Action,
				Matched:            cr.Result.Matched,
				Confidence:         cr.Result.Confidence,
				Timestamp:          ts,
				EvaluatorName:      cr.EvaluatorName,
				SelectorPath:       cr.SelectorPath,
				ErrorMessage:       cr.Result.Error,
				Source:             SourceServer,
			}
			if res.Session != nil {
				ev.SessionID = res.Session.ID
				var hist []guard.SessionFact
				if len(res.Session.History) > 0 && cr.Action == res.Decision && cr.Result.Matched {
					// The deciding control's event names the history that made it block.
					hist = res.Session.History
				}
				ev.Metadata = withSession(ev.Metadata, res.Session.Step, hist)
			}
			if cr.Result.Matched && cr.Action == res.Decision && res.Reason != "" &&
				(res.Decision == guard.DecisionDeny || res.Decision == guard.DecisionSteer) {
				// The deciding control's event says why the step was refused, as the agent was told.
				ev.Metadata = withReason(ev.Metadata, res.Reason)
			}
			if cr.Duration > 0 {
				ms := float64(cr.Duration) / float64(time.Millisecond)
				ev.ExecutionDurationMS = &ms
			}
			events = append(events, ev)
		}
	}
	return events
}

// withReason returns md (not modified) with reason, the refusal's text (Result.Reason).
func withReason(md map[string]any, reason string) map[string]any {
	out := make(map[string]any, len(md)+1)
	for k, v := range md {
		out[k] = v
	}
	out["reason"] = reason
	return out
}

// withSession returns md (not modified: it may be a control's own metadata) with session_step, the
// step's number in its session (the session view orders and numbers steps by it; omitted when not known),
// and session_history when the control blocked the step on the session's history.
func withSession(md map[string]any, step int64, h []guard.SessionFact) map[string]any {
	if step <= 0 && len(h) == 0 {
		return md
	}
	out := make(map[string]any, len(md)+2)
	for k, v := range md {
		out[k] = v
	}
	if step > 0 {
		out["session_step"] = step
	}
	if len(h) > 0 {
		out["session_history"] = h
	}
	return out
}
