package client

import (
	"errors"
	"strconv"

	"github.com/guardrail-control/guard/internal/jsonstr"
)

// appendEventsJSON appends the body of POST /observability/events, {"events":[...]}, to b. It writes
// byte for byte what encoding/json writes for struct{ Events []wireEvent `json:"events"` } (same field
// order, omitempty/omitzero, string escaping with HTML escaping, float format), without reflection: the
// sender goroutine encodes every event, and encoding/json was the largest cost of observability. Like
// encoding/json it fails on a NaN or infinite number.
func appendEventsJSON(b []byte, evs []wireEvent) ([]byte, error) {
	b = append(b, `{"events":[`...)
	for i := range evs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendEventJSON(b, &evs[i]); err != nil {
			return nil, err
		}
	}
	return append(b, "]}"...), nil
}

var errNonFinite = errors.New("guard client: encode event: unsupported number (NaN or infinity)")

func appendEventJSON(b []byte, e *wireEvent) ([]byte, error) {
	var err error
	b = append(b, `{"control_execution_id":`...)
	b = jsonstr.Append(b, e.ControlExecutionID, true)
	if e.TraceID != "" {
		b = append(b, `,"trace_id":`...)
		b = jsonstr.Append(b, e.TraceID, true)
	}
	if e.SpanID != "" {
		b = append(b, `,"span_id":`...)
		b = jsonstr.Append(b, e.SpanID, true)
	}
	b = append(b, `,"agent_name":`...)
	b = jsonstr.Append(b, e.AgentName, true)
	b = append(b, `,"control_id":`...)
	b = strconv.AppendInt(b, e.ControlID, 10)
	b = append(b, `,"control_name":`...)
	b = jsonstr.Append(b, e.ControlName, true)
	b = append(b, `,"check_stage":`...)
	b = jsonstr.Append(b, string(e.CheckStage), true)
	b = append(b, `,"step_type":`...)
	b = jsonstr.Append(b, e.StepType, true)
	b = append(b, `,"step_name":`...)
	b = jsonstr.Append(b, e.StepName, true)
	b = append(b, `,"action":`...)
	b = jsonstr.Append(b, string(e.Action), true)
	b = append(b, `,"matched":`...)
	b = strconv.AppendBool(b, e.Matched)
	b = append(b, `,"confidence":`...)
	if b, err = appendJSONFloat(b, e.Confidence); err != nil {
		return nil, err
	}
	b = append(b, `,"timestamp":`...)
	b = jsonstr.Append(b, e.Timestamp, true)
	if e.ExecutionDurationMS != 0 {
		b = append(b, `,"execution_duration_ms":`...)
		if b, err = appendJSONFloat(b, e.ExecutionDurationMS); err != nil {
			return nil, err
		}
	}
	if e.EvaluatorName != "" {
		b = append(b, `,"evaluator_name":`...)
		b = jsonstr.Append(b, e.EvaluatorName, true)
	}
	if e.SelectorPath != "" {
		b = append(b, `,"selector_path":`...)
		b = jsonstr.Append(b, e.SelectorPath, true)
	}
	if e.ErrorMessage != "" {
		b = append(b, `,"error_message":`...)
		b = jsonstr.Append(b, e.ErrorMessage, true)
	}
	b = append(b, `,"source":`...)
	b = jsonstr.Append(b, e.Source, true)
	if e.Metadata != (eventMeta{}) {
		b = append(b, `,"metadata":{`...)
		if e.Metadata.Policy != "" {
			b = append(b, `"policy":`...)
			b = jsonstr.Append(b, e.Metadata.Policy, true)
		}
		b = append(b, '}')
	}
	if e.Shadow {
		b = append(b, `,"shadow":true`...)
	}
	return append(b, '}'), nil
}

// appendJSONFloat formats f as encoding/json does for a float64.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	b, ok := jsonstr.AppendFloat(b, f)
	if !ok {
		return nil, errNonFinite
	}
	return b, nil
}
